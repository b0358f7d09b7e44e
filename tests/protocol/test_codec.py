"""The sans-I/O codec: framing, limits, error handling and the conversation rules."""

import contextlib
import itertools
import pickle
import tracemalloc
from unittest import mock

import msgpack
import pytest
import taki_protocol.codec as codec_module
from budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st
from taki_protocol import (
    EOF,
    MAX_BOT_MESSAGE_SIZE,
    MAX_CONTAINER_LEN,
    MAX_MESSAGE_SIZE,
    NEED_DATA,
    Answer,
    BotHello,
    Codec,
    Decide,
    Error,
    GameOver,
    GameRules,
    GameStart,
    Hello,
    LocalProtocolError,
    Message,
    MessageTooLargeError,
    React,
    ReceivedMessageTooLargeError,
    RemoteProtocolError,
    Sentinel,
    SentMessageTooLargeError,
    Shutdown,
    Standing,
    TimeLimits,
    pack_message,
    trusted_data,
    unpack_message,
)

HELLO = Hello(referee="taki-referee test")
BOT_HELLO = BotHello(name="tester")
GAME_START = GameStart(
    game_id="g1",
    seat=0,
    players=2,
    names=["tester", "other"],
    rules=GameRules(preset="super-taki-2018"),
    time=TimeLimits(move_ms=1000, reaction_ms=500),
)
VIEW = {"seat": 0, "hand": ["red:5", "king"], "phase": "play", "events": []}
LEGAL = [{"kind": "play", "card": "red:5"}, {"kind": "draw", "count": 1}]


def decide(request_id: int) -> Decide:
    return Decide(id=request_id, view=VIEW, legal=LEGAL, time_left_ms=None, deadline_ms=1000)


def react(request_id: int) -> React:
    return React(
        id=request_id,
        view=VIEW,
        legal=[{"kind": "break"}, {"kind": "pass"}],
        time_left_ms=5000,
        deadline_ms=500,
    )


GAME_OVER = GameOver(
    game_id="g1",
    ranking=[Standing(seat=1, place=1, points=0), Standing(seat=0, place=2, points=15)],
    events=[{"type": "win", "seat": 1}],
)


def raw(obj: object) -> bytes:
    return msgpack.packb(obj, use_bin_type=True)  # type: ignore[no-any-return]


def drain(codec: Codec) -> list[Message | Sentinel]:
    """Every message the codec can give now, then the sentinel that stopped it."""
    out: list[Message | Sentinel] = []
    while True:
        item = codec.next_message()
        out.append(item)
        if isinstance(item, Sentinel):
            return out


def bot_in_game() -> Codec:
    """A bot-side codec that has done the handshake and is inside game g1."""
    bot = Codec("bot")
    bot.receive_data(pack_message(HELLO) + pack_message(GAME_START))
    bot.send(BOT_HELLO)
    assert drain(bot) == [HELLO, GAME_START, NEED_DATA]
    return bot


def referee_in_game() -> Codec:
    """A referee-side codec that has done the handshake and started game g1."""
    referee = Codec("referee")
    referee.send(HELLO)
    referee.receive_data(pack_message(BOT_HELLO))
    assert referee.next_message() == BOT_HELLO
    referee.send(GAME_START)
    return referee


REFEREE_STREAM: list[Message] = [HELLO, GAME_START, decide(1), GAME_OVER, Shutdown()]


# ---------------------------------------------------------------- framing


def test_byte_at_a_time() -> None:
    data = pack_message(HELLO) + pack_message(GAME_START)
    bot = Codec("bot")
    received: list[Message] = []
    for index in range(len(data)):
        bot.receive_data(data[index : index + 1])
        item = bot.next_message()
        if isinstance(item, Sentinel):
            assert item is NEED_DATA
        else:
            received.append(item)
            if item == HELLO:
                bot.send(BOT_HELLO)
    assert received == [HELLO, GAME_START]
    bot.receive_data(b"")
    assert bot.next_message() is EOF
    assert bot.next_message() is EOF


def test_whole_conversation_in_one_chunk() -> None:
    bot = Codec("bot")
    bot.send(BOT_HELLO)
    bot.receive_data(b"".join(pack_message(m) for m in REFEREE_STREAM[:3]))
    assert drain(bot) == [HELLO, GAME_START, decide(1), NEED_DATA]
    bot.send(Answer(id=1, choice=0))
    bot.receive_data(b"".join(pack_message(m) for m in REFEREE_STREAM[3:]))
    bot.receive_data(b"")
    assert drain(bot) == [GAME_OVER, Shutdown(), EOF]


@given(cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=8))
def test_any_chunking_gives_the_same_messages(cuts: list[int]) -> None:
    stream = pack_message(HELLO) + pack_message(GAME_START) + pack_message(decide(7))
    bounds = sorted({min(c, len(stream)) for c in cuts} | {0, len(stream)})
    bot = Codec("bot")
    bot.send(BOT_HELLO)
    received: list[Message] = []
    for start, end in itertools.pairwise(bounds):
        bot.receive_data(stream[start:end])
        received += [m for m in drain(bot) if not isinstance(m, Sentinel)]
    assert received == [HELLO, GAME_START, decide(7)]


def test_eof_between_messages() -> None:
    referee = Codec("referee")
    referee.receive_data(pack_message(BOT_HELLO))
    referee.receive_data(b"")
    assert drain(referee) == [BOT_HELLO, EOF]


def test_eof_mid_message_raises() -> None:
    data = pack_message(GAME_START)
    bot = Codec("bot")
    bot.receive_data(pack_message(HELLO) + data[:-3])
    assert bot.next_message() == HELLO
    assert bot.next_message() is NEED_DATA
    bot.receive_data(b"")
    with pytest.raises(RemoteProtocolError, match="middle of a message"):
        bot.next_message()
    with pytest.raises(RemoteProtocolError, match="refused"):
        bot.next_message()


def test_data_after_eof_is_a_local_error() -> None:
    bot = Codec("bot")
    bot.receive_data(b"")
    bot.receive_data(b"")  # repeated EOF is harmless
    with pytest.raises(LocalProtocolError, match="after EOF"):
        bot.receive_data(b"\x80")


# ---------------------------------------------------------------- hostile input

# A map whose first value is a string header claiming 2 GiB (str 32, 0x7fffffff bytes).
HUGE_STRING = b"\x81\xa4type\xdb\x7f\xff\xff\xff"


@pytest.mark.parametrize(
    ("data", "match"),
    [
        (HUGE_STRING, "string of 2147483647 bytes"),
        (b"\x81\xa4type\xdb\x00\x10\x00\x00", "string of 1048576 bytes"),
        (b"\x81\xa4type\xdd\xff\xff\xff\xff", "array of 4294967295 elements"),
        (b"\xdf\xff\xff\xff\xff", "map of 4294967295 elements"),
        (b"\x81\xa4type" + b"\xdc\xff\xff" * 20, "exceeds the maximum size"),
        (b"\x81\xa4type" + b"\xde\xff\xff" * 20, "exceeds the maximum size"),
        (b"\xdd\x00\x01\x00\x00", "must be a msgpack map, got an array"),
        # Small containers nested deep, in a read short enough to be decoded at once and
        # in a long one, which only the frame scanner reads.
        (b"\x81\xa4type" + b"\x9f" * 250 + b"\xc1", "the reserved format byte"),
        (b"\x81\xa4type" + b"\x8f" * 250 + b"\xc1", "exceeds the maximum size"),
        (b"\x81\xa4type" + b"\x9f" * 4000, "exceeds the maximum size"),
    ],
)
def test_oversized_headers_fail_fast(data: bytes, match: str) -> None:
    codec = Codec("referee")
    tracemalloc.start()
    try:
        codec.receive_data(data)
        with pytest.raises(RemoteProtocolError, match=match):
            codec.next_message()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 * 1024


def test_container_limit() -> None:
    codec = Codec("bot")
    codec.receive_data(b"\x81\xa4type\xdd" + (MAX_CONTAINER_LEN + 1).to_bytes(4, "big"))
    with pytest.raises(RemoteProtocolError, match="array of 65537 elements"):
        codec.next_message()
    codec = Codec("bot")
    codec.receive_data(b"\x81\xa4type\xdd" + MAX_CONTAINER_LEN.to_bytes(4, "big"))
    assert codec.next_message() is NEED_DATA


def test_the_referee_takes_no_bot_message_over_4_kib() -> None:
    # Valid messages padded under an unknown key: decoding a large one would cost the
    # referee's loop time that every other bot's clock shares.
    def padded(size: int) -> bytes:
        message = {"type": "bot_hello", "protocol": 1, "name": "b", "pad": "x" * 300}
        message["pad"] += "x" * (size - len(raw(message)))  # a str 16 either way
        data = raw(message)
        assert len(data) == size
        return data

    referee = Codec("referee")
    referee.send(HELLO)
    referee.receive_data(padded(MAX_BOT_MESSAGE_SIZE))
    assert isinstance(referee.next_message(), BotHello)
    referee = Codec("referee")
    referee.send(HELLO)
    referee.receive_data(padded(MAX_BOT_MESSAGE_SIZE + 1)[:64])  # the header is enough
    with pytest.raises(ReceivedMessageTooLargeError, match="4096 bytes") as caught:
        referee.next_message()
    assert caught.value.limit == MAX_BOT_MESSAGE_SIZE
    # The other way, a bot takes messages of up to 1 MiB from the referee.
    bot = Codec("bot")
    bot.receive_data(raw({"type": "hello", "protocol": 1, "referee": "r", "pad": "x" * 10**5}))
    assert isinstance(bot.next_message(), Hello)


def test_message_over_the_size_limit_is_rejected_when_received() -> None:
    big = raw({"type": "bot_hello", "protocol": 1, "name": "x", "pad": "y" * MAX_MESSAGE_SIZE})
    codec = Codec("referee")
    codec.receive_data(big[:64])
    with pytest.raises(RemoteProtocolError, match="string of 1048576 bytes"):
        codec.next_message()


def test_many_small_values_over_the_size_limit() -> None:
    # 20 arrays of 60,000 strings of 4 bytes each: no header is too big, the total is.
    inner = b"\xdc" + (60_000).to_bytes(2, "big") + b"\xa3abc" * 60_000
    data = b"\x82\xa4type\xa9bot_hello\xa3pad\x9f" + inner * 15
    codec = Codec("referee")
    for start in range(0, len(data), 65536):
        codec.receive_data(data[start : start + 65536])
        try:
            assert codec.next_message() is NEED_DATA
        except RemoteProtocolError as exc:
            assert "exceeds the maximum size" in str(exc)
            assert start < MAX_MESSAGE_SIZE
            break
    else:
        pytest.fail("an oversized message was not rejected")


def test_message_at_the_size_limit_is_accepted() -> None:
    overhead = len(pack_message(Decide(id=1, view={"p": ""}, legal=LEGAL, deadline_ms=9)))
    pad = "z" * (MAX_MESSAGE_SIZE - overhead - 4)  # a str 32 header is 4 bytes longer
    message = Decide(id=1, view={"p": pad}, legal=LEGAL, deadline_ms=9)
    data = pack_message(message)
    assert len(data) == MAX_MESSAGE_SIZE
    bot = bot_in_game()
    bot.receive_data(data)
    assert bot.next_message() == message
    with pytest.raises(LocalProtocolError, match="over the maximum"):
        pack_message(Decide(id=1, view={"p": pad + "z"}, legal=LEGAL, deadline_ms=9))


def test_size_limit_errors_are_one_class_in_both_directions() -> None:
    """A message over the limit raises MessageTooLargeError whichever side sent it, and
    the class of its direction too, with the limit and the size it was found to need."""
    referee = Codec("referee", max_message_size=64)
    referee.receive_data(raw({"type": "bot_hello", "protocol": 1, "name": "n" * 60}))
    with pytest.raises(MessageTooLargeError) as received:
        referee.next_message()
    assert isinstance(received.value, ReceivedMessageTooLargeError)
    assert isinstance(received.value, RemoteProtocolError)
    assert not isinstance(received.value, LocalProtocolError)
    assert received.value.limit == 64
    assert received.value.size is not None and received.value.size > 64

    with pytest.raises(MessageTooLargeError) as sent:
        Codec("bot", max_message_size=64).send(BotHello(name="n" * 60))
    assert isinstance(sent.value, SentMessageTooLargeError)
    assert isinstance(sent.value, LocalProtocolError)
    assert not isinstance(sent.value, RemoteProtocolError)
    assert sent.value.limit == 64
    assert sent.value.size == len(pack_message(BotHello(name="n" * 60)))


@pytest.mark.parametrize(
    "data",
    [
        HUGE_STRING,  # a header declaring too much
        b"\x81\xa4type" + b"\xdc\xff\xff" * 20,  # containers that cannot fit
    ],
)
def test_oversized_input_is_a_message_too_large(data: bytes) -> None:
    codec = Codec("bot")
    codec.receive_data(data)
    with pytest.raises(ReceivedMessageTooLargeError) as caught:
        codec.next_message()
    assert caught.value.limit == MAX_MESSAGE_SIZE
    with pytest.raises(ReceivedMessageTooLargeError):
        unpack_message(data + b"\x00" * 8)


def test_other_limits_are_not_a_message_too_large() -> None:
    codec = Codec("referee")
    codec.receive_data(b"\x81\xa4type\xdd" + (MAX_CONTAINER_LEN + 1).to_bytes(4, "big"))
    with pytest.raises(RemoteProtocolError) as caught:
        codec.next_message()
    assert not isinstance(caught.value, MessageTooLargeError)


def test_message_too_large_survives_pickling() -> None:
    error = SentMessageTooLargeError("decide message is 9 bytes", limit=8, size=9)
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is SentMessageTooLargeError
    assert (str(copy), copy.limit, copy.size) == (str(error), 8, 9)


def test_smaller_size_limit() -> None:
    codec = Codec("referee", max_message_size=64)
    codec.receive_data(raw({"type": "bot_hello", "protocol": 1, "name": "n" * 60}))
    with pytest.raises(RemoteProtocolError, match="maximum message size of 64"):
        codec.next_message()
    with pytest.raises(LocalProtocolError, match="over the maximum of 64"):
        Codec("bot", max_message_size=64).send(BotHello(name="n" * 60))


@pytest.mark.parametrize(
    ("data", "match"),
    [
        (b"\xc1", "reserved format byte"),
        (b"\x81\xc1\x00", "reserved format byte"),
        (b"\x93\x01\x02\x03", "got an array"),
        (b"\x05", "got an integer"),
        (b"\xa5hello", "got a string"),
        (b"\xc0", "got nil"),
        (b"\xc3", "got a boolean"),
        (b"\xcb" + b"\x00" * 8, "got a float"),
        (b"\xc4\x01a", "got binary data"),
        (b"\x81\xa4type\xc4\x06action", "binary data"),
        (b"\x81\xa4type\xd4\x01\x00", "extension type"),
        (b"\x81\x01\xa1x", "map key that is not a string"),
        (b"\x81\xa4type\xa2\xff\xfe", "not UTF-8"),
        (raw({"type": "launch_missiles"}), "unknown message type 'launch_missiles'"),
        (raw({"type": 7}), "'type' must be a string, got an integer"),
        (raw({"kind": "bot_hello"}), "no 'type' key"),
        (raw({"type": "bot_hello", "protocol": 1}), "missing field 'name'"),
        (raw({"type": "bot_hello", "protocol": "1", "name": "x"}), "protocol must be an integer"),
        (raw({"type": "bot_hello", "protocol": 2, "name": "x"}), "only protocol version 1"),
        (raw({"type": "bot_hello", "protocol": 1, "name": ""}), "name must not be empty"),
        (raw({"type": "bot_hello", "protocol": 1, "name": 5}), "name must be a string"),
        (raw({"type": "decide", "id": 1}), "may not send 'decide'"),
    ],
)
def test_bad_input_from_the_bot(data: bytes, match: str) -> None:
    codec = Codec("referee")
    codec.receive_data(data)
    with pytest.raises(RemoteProtocolError, match=match):
        codec.next_message()


@pytest.mark.parametrize(
    ("wire", "match"),
    [
        ({"type": "action", "id": "1", "choice": 0}, "action.id must be an integer, got a string"),
        ({"type": "action", "id": 1, "choice": -1}, "action.choice must be between 0"),
        ({"type": "action", "id": 1, "choice": 1.0}, "choice must be an integer, got a float"),
        ({"type": "action", "id": 1, "choice": True}, "choice must be an integer, got a boolean"),
        ({"type": "action", "id": 1, "choice": 0, "last_card": 1}, "last_card must be a boolean"),
        ({"type": "action", "id": 2, "choice": 0}, "the open request is 1"),
    ],
)
def test_bad_answers(wire: dict[str, object], match: str) -> None:
    referee = referee_in_game()
    referee.send(decide(1))
    referee.receive_data(raw(wire))
    with pytest.raises(RemoteProtocolError, match=match):
        referee.next_message()


def test_unknown_keys_are_ignored() -> None:
    referee = referee_in_game()
    referee.send(decide(1))
    wire = {"type": "action", "future": [1, {"x": None}], "id": 1, "choice": 1, "last_card": True}
    referee.receive_data(raw(wire))
    assert referee.next_message() == Answer(id=1, choice=1, last_card=True)


@settings(max_examples=examples(300))
@given(data=st.binary(max_size=200))
def test_garbage_never_escapes_as_another_exception(data: bytes) -> None:
    codec = Codec("referee")
    codec.receive_data(data)
    codec.receive_data(b"")
    with contextlib.suppress(RemoteProtocolError):
        drain(codec)


def test_refuses_input_after_an_error_but_can_still_send() -> None:
    referee = referee_in_game()
    referee.receive_data(b"\x93garbage")
    with pytest.raises(RemoteProtocolError, match="got an array"):
        referee.next_message()
    assert referee.failed
    with pytest.raises(RemoteProtocolError, match="refused after an earlier protocol error"):
        referee.next_message()
    with pytest.raises(RemoteProtocolError, match="refused"):
        referee.receive_data(pack_message(Answer(id=1, choice=0)))
    data = referee.send(Error(reason="protocol", message="bad bytes"))
    assert unpack_message(data) == Error(reason="protocol", message="bad bytes")
    assert referee.finished


# ---------------------------------------------------------------- roles and conversation


def test_roles_only_send_their_own_messages() -> None:
    with pytest.raises(LocalProtocolError, match="the referee may not send 'bot_hello'"):
        Codec("referee").send(BOT_HELLO)
    with pytest.raises(LocalProtocolError, match="the bot may not send 'hello'"):
        Codec("bot").send(HELLO)
    with pytest.raises(ValueError, match="role"):
        Codec("spectator")  # type: ignore[arg-type]


def test_bot_must_say_hello_first() -> None:
    referee = Codec("referee")
    referee.send(HELLO)
    referee.receive_data(pack_message(Answer(id=1, choice=0)))
    with pytest.raises(RemoteProtocolError, match="first message must be 'bot_hello'"):
        referee.next_message()


def test_duplicate_hellos() -> None:
    referee = Codec("referee")
    referee.send(HELLO)
    with pytest.raises(LocalProtocolError, match="duplicate 'hello'"):
        referee.send(HELLO)
    referee.receive_data(pack_message(BOT_HELLO) * 2)
    assert referee.next_message() == BOT_HELLO
    with pytest.raises(RemoteProtocolError, match="duplicate 'bot_hello'"):
        referee.next_message()


def test_game_start_needs_the_handshake() -> None:
    referee = Codec("referee")
    referee.send(HELLO)
    with pytest.raises(LocalProtocolError, match="before the hello handshake"):
        referee.send(GAME_START)
    bot = Codec("bot")
    bot.receive_data(pack_message(HELLO) + pack_message(GAME_START))
    assert bot.next_message() == HELLO
    with pytest.raises(RemoteProtocolError, match="before the hello handshake"):
        bot.next_message()


def test_requests_only_inside_a_game_and_one_at_a_time() -> None:
    referee = Codec("referee")
    referee.send(HELLO)
    referee.receive_data(pack_message(BOT_HELLO))
    referee.next_message()
    with pytest.raises(LocalProtocolError, match="outside of a game"):
        referee.send(decide(1))
    referee.send(GAME_START)
    with pytest.raises(LocalProtocolError, match="while game 'g1' is in progress"):
        referee.send(GAME_START)
    referee.send(react(1))
    assert referee.open_request == 1
    with pytest.raises(LocalProtocolError, match="while request 1 is unanswered"):
        referee.send(decide(2))
    with pytest.raises(LocalProtocolError, match="while request 1 is unanswered"):
        referee.send(GAME_OVER)


def test_unsolicited_answer() -> None:
    referee = referee_in_game()
    referee.receive_data(pack_message(Answer(id=1, choice=0)))
    with pytest.raises(RemoteProtocolError, match="no request is open"):
        referee.next_message()


def test_answer_closes_the_request() -> None:
    referee = referee_in_game()
    referee.send(decide(5))
    referee.receive_data(pack_message(Answer(id=5, choice=1)) * 2)
    assert referee.next_message() == Answer(id=5, choice=1)
    assert referee.open_request is None
    with pytest.raises(RemoteProtocolError, match="no request is open"):
        referee.next_message()


def test_failed_send_leaves_the_codec_unchanged() -> None:
    bot = bot_in_game()
    bot.receive_data(pack_message(decide(3)))
    assert bot.next_message() == decide(3)
    with pytest.raises(LocalProtocolError, match="the open request is 3"):
        bot.send(Answer(id=4, choice=0))
    assert bot.open_request == 3
    assert unpack_message(bot.send(Answer(id=3, choice=0))) == Answer(id=3, choice=0)
    assert bot.open_request is None


def test_request_ids_must_increase() -> None:
    referee = referee_in_game()
    referee.send(decide(4))
    referee.receive_data(pack_message(Answer(id=4, choice=0)))
    referee.next_message()
    with pytest.raises(LocalProtocolError, match="id 4 is not above the previous request id 4"):
        referee.send(react(4))
    bot = bot_in_game()
    bot.receive_data(pack_message(decide(4)))
    bot.next_message()
    bot.send(Answer(id=4, choice=1))
    bot.receive_data(pack_message(decide(3)))
    with pytest.raises(RemoteProtocolError, match="id 3 is not above the previous request id 4"):
        bot.next_message()


def test_abandoned_requests_drop_their_late_answers() -> None:
    referee = referee_in_game()
    referee.abandon_request()  # nothing open: no effect
    referee.send(decide(1))
    referee.abandon_request()
    assert referee.open_request is None
    referee.send(react(2))
    referee.receive_data(
        pack_message(Answer(id=1, choice=0)) + pack_message(Answer(id=2, choice=1))
    )
    assert referee.next_message() == Answer(id=2, choice=1)
    referee.send(decide(3))
    referee.abandon_request()
    referee.send(GAME_OVER)
    referee.receive_data(pack_message(Answer(id=3, choice=0)))
    assert referee.next_message() is NEED_DATA  # dropped silently
    # An abandoned id is dropped only once: a second answer to it is unsolicited.
    referee.receive_data(pack_message(Answer(id=3, choice=0)))
    with pytest.raises(RemoteProtocolError, match="no request is open"):
        referee.next_message()


def test_only_the_referee_abandons_requests() -> None:
    with pytest.raises(LocalProtocolError, match="only the referee"):
        Codec("bot").abandon_request()


def test_bot_sees_superseded_requests() -> None:
    bot = bot_in_game()
    bot.receive_data(pack_message(decide(1)) + pack_message(decide(2)) + pack_message(GAME_OVER))
    assert drain(bot) == [decide(1), decide(2), GAME_OVER, NEED_DATA]
    # Late answers to superseded requests may still be written; the referee drops them.
    bot.send(Answer(id=1, choice=0))
    bot.send(Answer(id=2, choice=0))
    with pytest.raises(LocalProtocolError, match="no request is open"):
        bot.send(Answer(id=2, choice=0))


def test_game_over_must_name_the_current_game() -> None:
    bot = bot_in_game()
    other = GameOver(game_id="g2", ranking=GAME_OVER.ranking, events=[])
    bot.receive_data(pack_message(other))
    with pytest.raises(RemoteProtocolError, match="game 'g1' is in progress"):
        bot.next_message()


def test_games_in_sequence() -> None:
    bot = bot_in_game()
    second = GameStart(
        game_id="g2",
        seat=1,
        players=2,
        names=["other", "tester"],
        rules=GAME_START.rules,
        time=GAME_START.time,
    )
    bot.receive_data(pack_message(GAME_OVER) + pack_message(second) + pack_message(react(9)))
    assert drain(bot) == [GAME_OVER, second, react(9), NEED_DATA]
    assert bot.game_id == "g2"


def test_nothing_after_shutdown_or_error() -> None:
    bot = Codec("bot")
    bot.receive_data(pack_message(HELLO) + pack_message(Shutdown()) + pack_message(HELLO))
    assert bot.next_message() == HELLO
    assert bot.next_message() == Shutdown()
    assert bot.finished
    with pytest.raises(RemoteProtocolError, match="after 'shutdown' ended the conversation"):
        bot.next_message()
    referee = Codec("referee")
    referee.send(Error(reason="crash", message="gone"))
    with pytest.raises(LocalProtocolError, match="after 'error'"):
        referee.send(Shutdown())


def test_unpack_message() -> None:
    data = pack_message(BOT_HELLO)
    assert unpack_message(data) == BOT_HELLO
    with pytest.raises(RemoteProtocolError, match="incomplete"):
        unpack_message(data[:-1])
    with pytest.raises(RemoteProtocolError, match="1 bytes follow"):
        unpack_message(data + b"\x00")


# ---------------------------------------------------------------- trusted data


def test_trusted_data_ends_with_its_block() -> None:
    """The skipped walk is confined to the block, even one left by an exception."""
    with pytest.raises(LocalProtocolError), trusted_data():
        assert Decide(id=1, view={"x": 0.5}, legal=LEGAL, deadline_ms=0).view == {"x": 0.5}
        Decide(id=-1, view=VIEW, legal=LEGAL, deadline_ms=0)  # still checked: refused
    with pytest.raises(LocalProtocolError, match="plain data"):
        Decide(id=1, view={"x": 0.5}, legal=LEGAL, deadline_ms=0)


# ------------------------------------------------- decoding a whole read at once


def _outcomes(chunks: list[bytes], at_once: bool) -> list[object]:
    """What a referee's codec makes of ``chunks``, then of the end of the stream: each
    message or sentinel, and the error that stops it. Without ``at_once``, the frame
    scanner measures every message (no read is decoded at once)."""
    with contextlib.ExitStack() as stack:
        if not at_once:
            stack.enter_context(mock.patch.object(codec_module, "_unpack_at_once",
                                                  lambda buffer: None))
        codec = Codec("referee")
        out: list[object] = []
        try:
            for chunk in [*chunks, b""]:
                codec.receive_data(chunk)
                out += drain(codec)
        except RemoteProtocolError as exc:
            out.append((type(exc), str(exc)))
        return out


_ITEMS = st.one_of(
    st.binary(max_size=12),
    st.sampled_from([b"\xc4\x00", b"\xc7\x00\x01", b"\xd4\x01\x00", b"\xc1", b"\x90",
                     b"\x81\xa1a\xc0", b"\x81\x01\x02", b"\xdc\xff\xff"]),
    st.builds(raw, st.dictionaries(st.text(max_size=3), st.integers(-(2**63), 2**64 - 1)
                                   | st.text(max_size=5)
                                   | st.none() | st.booleans(), max_size=4)),
    st.just(raw({"type": "bot_hello", "protocol": 1, "name": "b\u00c4"})),
    st.just(raw({"type": "action", "id": 1, "choice": 0})),
)


@settings(max_examples=examples(400))
@given(items=st.lists(_ITEMS, max_size=6), cuts=st.lists(st.integers(0, 120), max_size=4))
def test_a_read_decoded_at_once_reads_as_the_frame_scanner_reads_it(
    items: list[bytes], cuts: list[int]
) -> None:
    stream = b"".join(items)
    bounds = sorted({min(c, len(stream)) for c in cuts} | {0, len(stream)})
    chunks = [stream[a:b] for a, b in itertools.pairwise(bounds)]
    assert _outcomes(chunks, True) == _outcomes(chunks, False)


def test_a_whole_answer_in_one_read_is_decoded_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    taken: list[int] = []
    unpack = codec_module._unpack_at_once

    def spy(buffer: bytearray) -> object:
        result = unpack(buffer)
        taken.append(result is not None)
        return result

    monkeypatch.setattr(codec_module, "_unpack_at_once", spy)
    referee = referee_in_game()
    referee.send(decide(1))
    referee.receive_data(pack_message(Answer(id=1, choice=0)))
    assert referee.next_message() == Answer(id=1, choice=0)
    assert taken[-1] is True
