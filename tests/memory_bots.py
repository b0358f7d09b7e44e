"""Scripted bots that live in memory (``referee.testing``), for the game loop's tests.

A :class:`ScriptedBot` plays in the referee's own Trio run: it answers the handshake and
every request with its strategy (the first legal action, declaring "last card"), unless
its hooks misbehave first, at chosen requests. Each behaviour of tests/hostile_bots/ has
a hook here: stall past the deadline, write garbage, answer the wrong id, answer an
illegal index, die with a status, answer before the request, write after ``game_over``,
close its output. A bot keeps what the referee sent it (``seen``), over all its runs.

Requests are counted per run (a restarted bot counts from 1 again), from 1.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from typing import Any

import msgpack  # type: ignore[import-untyped]
import trio
from taki_protocol import (
    Answer,
    BotHello,
    Decide,
    Error,
    GameOver,
    Hello,
    Message,
    React,
    Shutdown,
    pack_message,
)

from referee.testing import BotEnd

Request = Decide | React
#: ``strategy(request)``: the index of the chosen legal action and the "last card" flag.
Strategy = Callable[[Request], tuple[int, bool]]
#: ``hook(end, request, n)`` for the ``n``-th request of the run: misbehave and return
#: True (the request is handled), or return False to let the strategy answer.
Hook = Callable[[BotEnd, Request, int], Awaitable[bool]]
#: ``after_game_over(end, game_over, last_request_id)``.
GameOverHook = Callable[[BotEnd, GameOver, int], Awaitable[None]]


def first_legal(request: Request) -> tuple[int, bool]:
    """The first legal action, declaring "last card" (a declaration is never wrong)."""
    return 0, True


def never_declares(request: Request) -> tuple[int, bool]:
    """The first legal action, never declaring "last card"."""
    return 0, False


def breaks(request: Request) -> tuple[int, bool]:
    """Breaks every +3 it can (the +3 Breaker window), else the first legal action."""
    kinds = [action["kind"] for action in request.legal]
    if isinstance(request, React) and "break" in kinds:
        return kinds.index("break"), True
    return 0, True


class ScriptedBot:
    """A bot written in Python for :func:`referee.testing.open_memory_bot`."""

    def __init__(
        self,
        name: str = "scripted",
        *hooks: Hook,
        strategy: Strategy = first_legal,
        hello: Callable[[BotEnd], Awaitable[None]] | None = None,
        after_game_over: GameOverHook | None = None,
    ) -> None:
        self.name = name
        self.hooks = hooks
        self.strategy = strategy
        self.hello = hello
        self.after_game_over = after_game_over
        #: Every message the referee sent, over all runs, and when it was read (Trio's
        #: clock).
        self.seen: list[Message] = []
        self.seen_at: list[float] = []
        #: How many times the bot was started, and the requests of each run.
        self.runs: list[int] = []

    async def __call__(self, end: BotEnd) -> None:
        self.runs.append(0)
        last_id = 0
        while (message := await end.receive()) is not None:
            self.seen.append(message)
            self.seen_at.append(trio.current_time())
            match message:
                case Hello():
                    if self.hello is not None:
                        await self.hello(end)
                    else:
                        await end.send(BotHello(name=self.name))
                case Decide() | React():
                    self.runs[-1] += 1
                    last_id = message.id
                    await self._answer(end, message, self.runs[-1])
                case GameOver():
                    if self.after_game_over is not None:
                        await self.after_game_over(end, message, last_id)
                case Error() | Shutdown():
                    return

    async def _answer(self, end: BotEnd, request: Request, n: int) -> None:
        for hook in self.hooks:
            if await hook(end, request, n):
                return
        index, last_card = self.strategy(request)
        await end.send(Answer(id=request.id, choice=index, last_card=last_card))

    @property
    def requests(self) -> int:
        """The requests the bot was sent, over all runs."""
        return sum(self.runs)

    def of_type(self, kind: type[Message]) -> list[Any]:
        """The messages of one kind the bot was sent."""
        return [m for m in self.seen if isinstance(m, kind)]


# --------------------------------------------------------------------------- hooks


def _at(n: int | None, request_n: int) -> bool:
    return n is None or n == request_n


def stall(at: int | None = None, ms: float = math.inf, *, react_only: bool = False) -> Hook:
    """Think ``ms`` (forever by default) before answering request ``at`` (None: every
    request; with ``react_only``, every +3 Breaker reaction) with the strategy."""

    async def hook(end: BotEnd, request: Request, n: int) -> bool:
        if _at(at, n) and (isinstance(request, React) or not react_only):
            await trio.sleep(ms / 1000)
        return False

    return hook


def write_at(at: int, data: bytes | Callable[[Request], bytes]) -> Hook:
    """Write ``data`` (or what it makes of the request) instead of answering request
    ``at``, then wait forever."""

    async def hook(end: BotEnd, request: Request, n: int) -> bool:
        if n != at:
            return False
        await end.write(data(request) if callable(data) else data)
        await trio.sleep_forever()
        return True  # pragma: no cover - never reached

    return hook


def garbage(at: int) -> Hook:
    """Bytes that are not msgpack instead of answer ``at``."""
    return write_at(at, b"this is not msgpack\n")


#: A map of one entry: the key "type", then the header of a string of 2**31 bytes.
HUGE_STRING_HEADER = b"\x81\xa4type\xdb" + (2**31).to_bytes(4, "big")


def huge_string(at: int) -> Hook:
    """The start of a message announcing a 2 GiB string instead of answer ``at``."""
    return write_at(at, HUGE_STRING_HEADER)


def padded_answer(at: int, size: int = 10_000) -> Hook:
    """A valid answer to request ``at`` padded, under a key the referee ignores, to
    about ``size`` bytes (a bot's messages may have 4096)."""
    return write_at(at, lambda r: msgpack.packb(
        {"type": "action", "id": r.id, "choice": 0, "last_card": False, "pad": "x" * size}))


def extra_answer(at: int) -> Hook:
    """Answers request ``at`` twice: nobody asked for the second answer."""

    async def hook(end: BotEnd, request: Request, n: int) -> bool:
        if n != at:
            return False
        await end.send(Answer(id=request.id, choice=0, last_card=True))
        # The bot's own codec would refuse to send it.
        await end.write(pack_message(Answer(id=request.id, choice=0)))
        return True

    return hook


def wrong_id(at: int) -> Hook:
    """An answer to the next request's id instead of answer ``at``."""
    return write_at(at, lambda r: pack_message(Answer(id=r.id + 1, choice=0)))


def illegal(at: int | None = None, *, react_only: bool = False) -> Hook:
    """An index one past the end of the legal actions at request ``at`` (None: every
    request; with ``react_only``, every +3 Breaker reaction)."""

    async def hook(end: BotEnd, request: Request, n: int) -> bool:
        if not _at(at, n) or (react_only and not isinstance(request, React)):
            return False
        await end.send(Answer(id=request.id, choice=len(request.legal)))
        return True

    return hook


def die(at: int, status: int = 2, stderr: str = "scripted: leaving\n") -> Hook:
    """Write ``stderr`` and exit with ``status`` when request ``at`` comes."""

    async def hook(end: BotEnd, request: Request, n: int) -> bool:
        if n == at:
            end.write_stderr(stderr)
            end.exit(status)
        return False

    return hook


def close_output(at: int) -> Hook:
    """Close the bot's output when request ``at`` comes, and go on running."""

    async def hook(end: BotEnd, request: Request, n: int) -> bool:
        if n != at:
            return False
        end.close_output()
        await trio.sleep_forever()
        return True  # pragma: no cover - never reached

    return hook


def answer_ahead(at: int) -> Hook:
    """Answer request ``at``, and the next one (its id guessed) in the same write."""

    async def hook(end: BotEnd, request: Request, n: int) -> bool:
        if n != at:
            return False
        answer = end.codec.send(Answer(id=request.id, choice=0, last_card=True))
        # The bot's own codec would refuse to send the second one.
        await end.write(answer + pack_message(Answer(id=request.id + 1, choice=0)))
        return True

    return hook


async def wrong_version(end: BotEnd) -> None:
    """A ``bot_hello`` claiming protocol version 2."""
    await end.write(msgpack.packb({"type": "bot_hello", "protocol": 2, "name": "future"}))


async def exit_at_start(end: BotEnd) -> None:
    """Exits with status 3 instead of answering ``hello``."""
    end.write_stderr("scripted: exiting at start\n")
    end.exit(3)


async def no_hello(end: BotEnd) -> None:
    """Never answers ``hello``."""
    await trio.sleep_forever()


async def answer_after_game_over(end: BotEnd, game_over: GameOver, last_id: int) -> None:
    """After ``game_over``, an answer to the request the next game will open first."""
    await end.write(pack_message(Answer(id=last_id + 1, choice=0)))
