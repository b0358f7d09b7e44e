"""Write the protocol's test vectors: one ``.msgpack`` file and its ``.json`` twin per message.

Run from anywhere: ``python protocol/vectors/generate.py``. The files land next to this
script. Every ``.msgpack`` file is the canonical encoding of one message (keys in the
documented order); the ``.json`` twin shows the same map. The game data is taken from a
real two-player game (the one of the example transcript in PROTOCOL.md), seen from seat 0.
"""

import json
import sys
from pathlib import Path

from taki_protocol import (
    Answer,
    BotHello,
    Decide,
    Error,
    Forfeit,
    GameOver,
    GameRules,
    GameStart,
    Hello,
    Message,
    React,
    Shutdown,
    Standing,
    TimeLimits,
    pack_message,
)

HERE = Path(__file__).resolve().parent

# The texts the referee sends for these faults (PROTOCOL.md, section 10).
TIMEOUT_DETAIL = "no answer within 1000 ms"
CRASH_DETAIL = "closed its output: the bot exited with status 1"

RULE_FLAGS = {
    "hand_size": 8,
    "voluntary_draw": False,
    "crazy_card": False,
    "plus3_rule": False,
    "last_card_penalty": 4,
    "action_limit": 10000,
    "pyramid": False,
    "scoring": {"colored_action": 10, "colorless": 20},
}

REACT_VIEW = {
    "seat": 0,
    "players": 2,
    "hand": [
        "red:7",
        "red:8",
        "red:taki",
        "green:7",
        "green:9",
        "blue:8",
        "blue:9",
        "change_color",
    ],
    "hand_sizes": [8, 1],
    "active": [True, True],
    "stages": None,
    "leading_card": "yellow:4",
    "top_card": "+3",
    "color": "yellow",
    "direction": -1,
    "turn": 1,
    "phase": "react",
    "pending_draw": 0,
    "open_run": None,
    "draw_pile": 72,
    "discard_pile": 35,
    "declared_last_card": False,
    "action_count": 58,
    "events": [
        {"type": "draw", "seat": 0, "count": 1, "reason": "no_play", "cards": ["change_color"]},
        {"type": "last_card", "seat": 1},
        {"type": "play", "seat": 1, "card": "+3"},
    ],
}

DECIDE_VIEW = {
    "seat": 0,
    "players": 2,
    "hand": [
        "red:7",
        "red:8",
        "red:8",
        "red:taki",
        "green:4",
        "green:7",
        "green:9",
        "blue:8",
        "blue:9",
        "change_color",
        "king",
    ],
    "hand_sizes": [11, 1],
    "active": [True, True],
    "stages": None,
    "leading_card": "yellow:4",
    "top_card": "+3",
    "color": "yellow",
    "direction": -1,
    "turn": 0,
    "phase": "play",
    "pending_draw": 0,
    "open_run": None,
    "draw_pile": 69,
    "discard_pile": 35,
    "declared_last_card": False,
    "action_count": 59,
    "events": [
        {
            "type": "draw",
            "seat": 0,
            "count": 3,
            "reason": "plus3",
            "cards": ["red:8", "green:4", "king"],
        }
    ],
}

DECIDE_LEGAL = [
    {"kind": "play", "card": "change_color", "color": "red"},
    {"kind": "play", "card": "change_color", "color": "green"},
    {"kind": "play", "card": "change_color", "color": "blue"},
    {"kind": "play", "card": "change_color", "color": "yellow"},
    {"kind": "play", "card": "green:4"},
    {"kind": "play", "card": "king"},
]


def build_vectors() -> dict[str, Message]:
    """The vectors by file stem, in the order they occur in a conversation."""
    return {
        "hello": Hello(protocol=1, referee="taki-referee 0.1.0"),
        "bot_hello": BotHello(protocol=1, name="random-bot", token=None),
        "game_start": GameStart(
            game_id="demo-428",
            seat=0,
            players=2,
            names=["random", "random-2"],
            rules=GameRules(preset="super-taki-2018", flags=RULE_FLAGS),
            time=TimeLimits(move_ms=1000, bank_ms=60000, increment_ms=100, reaction_ms=1000),
        ),
        "react": React(
            id=32,
            view=REACT_VIEW,
            legal=[{"kind": "pass"}],
            time_left_ms=62977,
            deadline_ms=1000,
        ),
        "decide": Decide(
            id=33,
            view=DECIDE_VIEW,
            legal=DECIDE_LEGAL,
            time_left_ms=62977,
            deadline_ms=1000,
        ),
        "action": Answer(id=33, choice=4, last_card=False),
        "game_over": GameOver(
            game_id="demo-428",
            ranking=[
                Standing(seat=1, place=1, points=0, forfeit=None),
                Standing(seat=0, place=2, points=106, forfeit=None),
            ],
            events=[
                {"type": "play", "seat": 0, "card": "green:4"},
                {"type": "last_card", "seat": 1},
                {"type": "play", "seat": 1, "card": "green:1"},
                {"type": "win", "seat": 1},
            ],
        ),
        "game_over_forfeit": GameOver(
            game_id="league-7-g12",
            ranking=[
                Standing(seat=0, place=1, points=27),
                Standing(
                    seat=2,
                    place=2,
                    points=41,
                    forfeit=Forfeit(reason="crash", detail=CRASH_DETAIL),
                ),
                Standing(
                    seat=1,
                    place=3,
                    points=56,
                    forfeit=Forfeit(reason="timeout", detail=TIMEOUT_DETAIL),
                ),
            ],
            events=[
                {"type": "play", "seat": 0, "card": "red:6"},
                {"type": "forfeit", "seat": 2, "reason": "crash"},
                {"type": "win", "seat": 0},
            ],
        ),
        "error": Error(reason="timeout", message=TIMEOUT_DETAIL),
        "shutdown": Shutdown(),
    }


def json_text(message: Message) -> str:
    """The JSON twin of a message: its wire map, keys in wire order, two-space indents."""
    return json.dumps(message.to_wire(), indent=2, ensure_ascii=False) + "\n"


def main() -> int:
    for stem, message in build_vectors().items():
        (HERE / f"{stem}.msgpack").write_bytes(pack_message(message))
        (HERE / f"{stem}.json").write_text(json_text(message), encoding="utf-8")
        print(f"wrote {stem}.msgpack and {stem}.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
