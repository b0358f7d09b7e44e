"""The bot SDK: real bot processes fed a scripted referee stream."""

import io
import subprocess
import sys
from pathlib import Path

import msgpack
import pytest
from taki_protocol import (
    EOF,
    MAX_MESSAGE_SIZE,
    Answer,
    BotHello,
    Codec,
    Decide,
    Error,
    GameOver,
    GameRules,
    GameStart,
    Hello,
    Message,
    React,
    ReceivedMessageTooLargeError,
    RemoteProtocolError,
    Shutdown,
    Standing,
    TimeLimits,
    pack_message,
    resolve_choice,
    run_bot,
)
from taki_protocol.sdk import RefereeStream, _answer

ROOT = Path(__file__).resolve().parents[2]

TEST_BOT = r"""
import sys
from taki_protocol import run_bot

def choose(view, legal):
    print("thinking in phase", view["phase"])  # must land on stderr, not on the protocol
    if view["phase"] == "react":
        return legal[-1], True  # the "pass" map itself, declaring last card
    if len(legal) > 1:
        return 1
    return legal[0]

run_bot(
    choose,
    name="sdk-test",
    on_game_start=lambda m: print("start", m.game_id, m.seat, file=sys.stderr),
    on_game_over=lambda m: print("over", m.game_id, m.ranking[0].seat, file=sys.stderr),
)
"""

HELLO = Hello(referee="taki-referee test")
RULES = GameRules(preset="super-taki-2018", flags={})
TIME = TimeLimits(move_ms=1000, bank_ms=30000, increment_ms=50, reaction_ms=500)


def start(game_id: str, seat: int) -> GameStart:
    return GameStart(
        game_id=game_id, seat=seat, players=2, names=["a", "b"], rules=RULES, time=TIME
    )


def view(phase: str) -> dict[str, object]:
    return {"seat": 0, "hand": ["red:5", "blue:+2"], "phase": phase, "events": []}


def decide(request_id: int, legal: list[dict[str, object]]) -> Decide:
    return Decide(
        id=request_id, view=view("play"), legal=legal, time_left_ms=30000, deadline_ms=1000
    )


def over(game_id: str) -> GameOver:
    ranking = [Standing(seat=1, place=1, points=0), Standing(seat=0, place=2, points=15)]
    return GameOver(game_id=game_id, ranking=ranking, events=[{"type": "win", "seat": 1}])


TWO = [{"kind": "play", "card": "red:5"}, {"kind": "draw", "count": 1}]
ONE = [{"kind": "draw", "count": 2}]
SCRIPT: list[Message] = [
    HELLO,
    start("g1", 0),
    decide(1, TWO),
    React(
        id=2,
        view=view("react"),
        legal=[{"kind": "break"}, {"kind": "pass"}],
        time_left_ms=29000,
        deadline_ms=500,
    ),
    decide(3, ONE),
    over("g1"),
    start("g2", 1),
    decide(4, TWO),
    over("g2"),
    Shutdown(),
]


def run(argv: list[str], script: list[Message] | bytes) -> subprocess.CompletedProcess[bytes]:
    stream = script if isinstance(script, bytes) else b"".join(map(pack_message, script))
    return subprocess.run(
        argv, input=stream, capture_output=True, timeout=30, check=False, cwd=ROOT
    )


def replies(script: list[Message], stdout: bytes) -> list[Message]:
    """Replay ``script`` through a referee codec and collect the bot's replies in order."""
    referee = Codec("referee")
    referee.receive_data(stdout)
    referee.receive_data(b"")
    out: list[Message] = []
    for message in script:
        referee.send(message)
        if isinstance(message, Hello | Decide | React):
            reply = referee.next_message()
            assert isinstance(reply, BotHello | Answer), reply
            out.append(reply)
    assert referee.next_message() is EOF
    return out


def test_bot_plays_a_scripted_session() -> None:
    result = run([sys.executable, "-c", TEST_BOT], SCRIPT)
    stderr = result.stderr.decode()
    assert result.returncode == 0, stderr
    assert replies(SCRIPT, result.stdout) == [
        BotHello(name="sdk-test"),
        Answer(id=1, choice=1),
        Answer(id=2, choice=1, last_card=True),
        Answer(id=3, choice=0),
        Answer(id=4, choice=1),
    ]
    assert "start g1 0" in stderr
    assert "over g1 1" in stderr
    assert "start g2 1" in stderr
    assert "thinking in phase react" in stderr


def test_bot_returns_on_eof() -> None:
    result = run([sys.executable, "-c", TEST_BOT], [HELLO, start("g1", 0)])
    assert result.returncode == 0, result.stderr.decode()
    assert replies([HELLO, start("g1", 0)], result.stdout) == [BotHello(name="sdk-test")]


def test_bot_stops_on_error() -> None:
    script: list[Message] = [HELLO, Error(reason="timeout", message="took 1534 ms")]
    result = run([sys.executable, "-c", TEST_BOT], script)
    assert result.returncode == 0
    assert "referee error (timeout): took 1534 ms" in result.stderr.decode()


def test_bot_rejects_another_protocol_version() -> None:
    hello = msgpack.packb({"type": "hello", "protocol": 2, "referee": "future"})
    result = run([sys.executable, "-c", TEST_BOT], hello)
    assert result.returncode != 0
    assert result.stdout == b""
    assert "only protocol version 1 is supported" in result.stderr.decode()


def test_bad_choice_is_reported_in_the_bot() -> None:
    bot = "from taki_protocol import run_bot\nrun_bot(lambda view, legal: 7)"
    result = run([sys.executable, "-c", bot], [HELLO, start("g1", 0), decide(1, TWO)])
    assert result.returncode != 0
    assert "choice index 7 is out of range for 2 legal actions" in result.stderr.decode()


def test_random_bot_sample_is_reproducible() -> None:
    script: list[Message] = [HELLO, start("g1", 0), decide(1, TWO), decide(2, TWO), Shutdown()]
    argv = [sys.executable, str(ROOT / "sample_bots" / "random_bot.py"), "5"]
    first = run(argv, script)
    assert first.returncode == 0, first.stderr.decode()
    answers = replies(script, first.stdout)
    assert answers[0] == BotHello(name="random-bot")
    for answer in answers[1:]:
        assert isinstance(answer, Answer)
        assert 0 <= answer.choice < 2
        assert answer.last_card
    assert run(argv, script).stdout == first.stdout


def test_run_bot_with_explicit_streams() -> None:
    script: list[Message] = [HELLO, start("g1", 0), decide(1, TWO), over("g1")]
    stdin = io.BytesIO(b"".join(map(pack_message, script)))
    stdout = io.BytesIO()
    seen: list[str] = []
    run_bot(
        lambda view, legal: {"kind": "draw", "count": 1},
        "in-process",
        token="secret",
        on_game_start=lambda m: seen.append(m.game_id),
        on_game_over=lambda m: seen.append(f"over {m.game_id}"),
        on_request=lambda r: seen.append(f"{r['type']} {r['id']} {r['deadline_ms']} ms"),
        stdin=stdin,
        stdout=stdout,
    )
    assert seen == ["g1", "decide 1 1000 ms", "over g1"]
    assert replies(script, stdout.getvalue()) == [
        BotHello(name="in-process", token="secret"),
        Answer(id=1, choice=1),
    ]


def test_resolve_choice() -> None:
    legal = [{"kind": "play", "card": "red:5"}, {"kind": "draw", "count": 1}]
    assert resolve_choice(1, legal) == (1, False)
    assert resolve_choice((0, True), legal) == (0, True)
    assert resolve_choice(legal[1], legal) == (1, False)
    assert resolve_choice(({"kind": "draw", "count": 1}, True), legal) == (1, True)
    with pytest.raises(ValueError, match="out of range"):
        resolve_choice(2, legal)
    with pytest.raises(ValueError, match="out of range"):
        resolve_choice(-1, legal)
    with pytest.raises(ValueError, match="not in the legal list"):
        resolve_choice({"kind": "end_turn"}, legal)
    with pytest.raises(TypeError, match="index or an action map"):
        resolve_choice(True, legal)
    with pytest.raises(TypeError, match="index or an action map"):
        resolve_choice("0", legal)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="last_card"):
        resolve_choice((0, 1), legal)  # type: ignore[arg-type]


def test_answers_are_encoded_canonically() -> None:
    """The SDK packs its answers without building an Answer; the bytes must be the
    ones the codec would send."""
    stream = RefereeStream()
    for request_id, index, last_card in [(1, 0, False), (2**31 - 1, 65535, True)]:
        assert stream.pack(_answer(request_id, index, last_card)) == pack_message(
            Answer(id=request_id, choice=index, last_card=last_card)
        )


def play(script: bytes) -> str:
    """Run an in-process bot on ``script``; what it raised, or "" when it returned."""
    try:
        run_bot(lambda view, legal: 0, stdin=io.BytesIO(script), stdout=io.BytesIO())
    except RemoteProtocolError as exc:
        return str(exc)
    return ""


GAME = pack_message(HELLO) + pack_message(start("g1", 0))


@pytest.mark.parametrize(
    ("tail", "problem"),
    [
        ({"id": "one"}, "decide.id must be an integer, got a string"),
        ({"legal": []}, "decide.legal must have at least 1 element(s)"),
        ({"view": None}, "decide.view must be a map, got nil"),
        ({"legal": [3]}, ""),  # the contents of a view and legal list are taken as they are
    ],
)
def test_a_malformed_request_is_named(tail: dict[str, object], problem: str) -> None:
    wire = {**decide(1, TWO).to_wire(), **tail}
    assert play(GAME + msgpack.packb(wire)) == problem


def test_a_broken_referee_stream_is_named() -> None:
    whole = GAME + pack_message(decide(1, TWO))
    assert play(whole) == ""
    assert play(whole[:-3]).startswith("stream closed in the middle of a message")
    assert play(GAME + b"\xc1").startswith("the referee sent bad msgpack")
    assert play(GAME + msgpack.packb([1, 2])) == "a message must be a map, got an array"
    assert play(GAME + pack_message(Answer(id=1, choice=0))) == (
        "the referee may not send 'action' messages"
    )
    # Room is left for one read past an unfinished message, so the cut-off is not exact.
    hello = {"type": "hello", "protocol": 1, "referee": "x" * (MAX_MESSAGE_SIZE + 70_000)}
    assert play(msgpack.packb(hello)).startswith("the referee sent more than 1048576 bytes")


def test_an_oversized_referee_message_is_a_message_too_large() -> None:
    hello = {"type": "hello", "protocol": 1, "referee": "x" * (MAX_MESSAGE_SIZE + 70_000)}
    with pytest.raises(ReceivedMessageTooLargeError) as caught:
        run_bot(
            lambda view, legal: 0,
            stdin=io.BytesIO(msgpack.packb(hello)),
            stdout=io.BytesIO(),
        )
    assert isinstance(caught.value, RemoteProtocolError)
    assert caught.value.limit == MAX_MESSAGE_SIZE
