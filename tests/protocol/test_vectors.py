"""The test vectors in protocol/vectors/: decoding, JSON twins and canonical re-encoding."""

import importlib.util
import json
import re
from pathlib import Path
from types import ModuleType

import attrs
import pytest
from taki_protocol import (
    MESSAGE_CLASSES,
    Answer,
    BotHello,
    Codec,
    Decide,
    GameOver,
    Message,
    React,
    Sentinel,
    pack_message,
    unpack_message,
)

VECTORS = Path(__file__).resolve().parents[2] / "protocol" / "vectors"
STEMS = sorted(path.stem for path in VECTORS.glob("*.msgpack"))


def load_generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("vector_generator", VECTORS / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def read_vector(stem: str) -> bytes:
    return (VECTORS / f"{stem}.msgpack").read_bytes()


def primed_codec(message: Message) -> Codec:
    """A codec of the receiving side, brought to a point where ``message`` may arrive.

    The messages leading there are the vectors themselves, so the set is a coherent
    conversation: hello, bot_hello, game_start, a request, its answer, game_over.
    """
    hello = unpack_message(read_vector("hello"))
    bot_hello = unpack_message(read_vector("bot_hello"))
    game_start = unpack_message(read_vector("game_start"))
    if isinstance(message, BotHello | Answer):
        referee = Codec("referee")
        referee.send(hello)
        if isinstance(message, Answer):
            referee.receive_data(pack_message(bot_hello))
            assert referee.next_message() == bot_hello
            referee.send(game_start)
            decide = unpack_message(read_vector("decide"))
            assert isinstance(decide, Decide)
            assert decide.id == message.id
            assert 0 <= message.choice < len(decide.legal)
            referee.send(decide)
        return referee
    bot = Codec("bot")
    if message.TYPE in ("error", "shutdown"):
        return bot  # allowed at any time
    bot.send(bot_hello)
    if message.TYPE != "hello":
        bot.receive_data(pack_message(hello))
        assert bot.next_message() == hello
    if message.TYPE not in ("hello", "game_start"):
        if isinstance(message, GameOver):
            game_start = attrs.evolve(game_start, game_id=message.game_id)
        bot.receive_data(pack_message(game_start))
        assert bot.next_message() == game_start
    return bot


def test_every_message_type_has_a_vector() -> None:
    types = {json.loads((VECTORS / f"{stem}.json").read_text())["type"] for stem in STEMS}
    assert types == set(MESSAGE_CLASSES)


def test_every_vector_has_both_files() -> None:
    assert STEMS
    assert sorted(path.stem for path in VECTORS.glob("*.json")) == STEMS


def test_vectors_are_up_to_date() -> None:
    generator = load_generator()
    built = generator.build_vectors()
    assert sorted(built) == STEMS
    for stem, message in built.items():
        assert pack_message(message) == read_vector(stem), f"{stem}.msgpack is stale"
        assert generator.json_text(message) == (VECTORS / f"{stem}.json").read_text(), stem


@pytest.mark.parametrize("stem", STEMS)
def test_vector_decodes_to_its_json_twin_and_reencodes_identically(stem: str) -> None:
    data = read_vector(stem)
    expected_json = (VECTORS / f"{stem}.json").read_text(encoding="utf-8")
    codec = primed_codec(unpack_message(data))
    codec.receive_data(data)
    message = codec.next_message()
    assert not isinstance(message, Sentinel)
    assert message.to_wire() == json.loads(expected_json)
    assert json.dumps(message.to_wire(), indent=2, ensure_ascii=False) + "\n" == expected_json
    assert pack_message(message) == data


def test_react_vector_is_a_react() -> None:
    message = unpack_message(read_vector("react"))
    assert isinstance(message, React)
    assert message.view["phase"] == "react"


def transcript_messages() -> list[dict[str, object]]:
    """The JSON messages of the example transcript (PROTOCOL.md, section 12)."""
    spec = (VECTORS.parent / "PROTOCOL.md").read_text(encoding="utf-8")
    section = spec.split("## 12. Example transcript", 1)[1].split("\n## 13.", 1)[0]
    blocks = re.findall(r"```json\n(.*?)```", section, flags=re.DOTALL)
    return [json.loads(block) for block in blocks]


@pytest.mark.parametrize(
    "stem", ["hello", "bot_hello", "game_start", "react", "decide", "action", "game_over"]
)
def test_vector_of_the_example_game_is_in_the_transcript(stem: str) -> None:
    """The vectors taken from the example game are the transcript's messages, exactly."""
    vector = json.loads((VECTORS / f"{stem}.json").read_text(encoding="utf-8"))
    assert vector in transcript_messages()
