"""A unit of work: games played one after the other by the same bot processes (one per
bot and seat rotation, so that no process plays a deal twice), started when first
needed and restarted after a crash when the settings allow it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Container, Iterable, Sequence
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import attrs
import trio

from referee.core import (
    BotCrashed,
    BotFault,
    BotSpec,
    BotTimeout,
    GameOutcome,
    InfraEvent,
    MatchSettings,
    ScheduledGame,
    sole_cause,
)
from referee.match.game import (
    GameReferee,
    GameVoided,
    outcome_of,
    replay_path,
    safe_filename,
    wants_replay,
)
from referee.rules import GameResult
from referee.shell import BotConnection, open_bot

if TYPE_CHECKING:
    from referee.shell import RemoteSeats

__all__ = ["BotOpener", "BotSlot", "ProcessHistory", "RemoteBotSlot", "play_unit"]


class BotOpener(Protocol):
    """How a local bot is started and its handshake completed:
    :func:`referee.shell.bots.open_bot` (a process), or a bot that lives in memory
    (:class:`referee.testing.MemoryOpener`)."""

    def __call__(
        self, spec: BotSpec, *, startup_ms: int, grace_ms: int = ...,
        stderr_path: Path | None = ..., starved_cap: int = ...,
    ) -> AbstractAsyncContextManager[BotConnection]: ...


def _stopped_earlier(conn: BotConnection, said: str) -> BotCrashed:
    """The fault that forfeits a bot that stopped in an earlier game and is not brought
    back (restarts are off): ``said`` so, then why it stopped, its fault or else how it
    ended. The detail keeps what that fault's detail keeps (a local bot's last stderr
    lines); the bots are told only its public part."""
    why = conn.fault if conn.fault is not None else conn.crashed()
    return BotCrashed(
        f"{said} ({why.reason}: {why.detail})",
        public=f"{said} ({why.reason}: {why.public_detail})",
    )


@attrs.define
class ProcessHistory:
    """What the process slots of one bot in a unit share: how many processes of the bot
    were started (the first one's log is ``NAME-BOT.log``, later ones ``.1``, ``.2``, ...)
    and their connections, since with restarts off a bot that stopped in one of its
    processes is not started again in another."""

    starts: int = 0
    conns: list[BotConnection] = attrs.field(factory=list)

    def stopped(self) -> BotConnection | None:
        """The first of the bot's processes that stopped, if one did."""
        return next((c for c in self.conns if not c.alive), None)


class BotSlot:
    """One bot process of a match: started on demand and restarted after a crash when
    the settings allow it.

    Each process lives in a host task of its own in the match's nursery, so starting,
    restarting and stopping bots in any order never crosses Trio's nesting rules."""

    def __init__(
        self,
        spec: BotSpec,
        settings: MatchSettings,
        log_name: str,
        nursery: trio.Nursery,
        history: ProcessHistory | None = None,
        opener: BotOpener = open_bot,
    ) -> None:
        self.spec = spec
        self.opener = opener
        self.settings = settings
        self.log_name = log_name
        self.nursery = nursery
        self.conn: BotConnection | None = None
        #: The stderr log of the bot's current process, when logs are kept.
        self.log_path: Path | None = None
        self.history = ProcessHistory() if history is None else history
        self._stop: trio.Event | None = None

    async def ready(self) -> BotConnection | BotFault:
        """The bot's connection for the next game, (re)starting the bot if needed.

        A bot that failed its handshake comes back with its ``fault`` set, so that the
        game forfeits it with that fault's reason. A bot that stopped in an earlier game
        while restarts are off cannot play: the fault to forfeit it with comes back."""
        conn = self.conn
        if conn is not None and conn.alive:
            return conn
        history = self.history
        stopped = history.stopped()
        if stopped is not None and not self.settings.restart:
            return _stopped_earlier(
                stopped, "the bot is not restarted after it stopped in an earlier game"
            )
        self.stop()
        log_dir = self.settings.log_dir
        stderr_path = None
        if log_dir is not None:
            suffix = f".{history.starts}" if history.starts else ""
            name = f"{self.log_name}-{safe_filename(self.spec.name)}{suffix}.log"
            stderr_path = log_dir / name
        self.log_path = stderr_path
        history.starts += 1
        self._stop = trio.Event()
        self.conn = await self.nursery.start(self._host, stderr_path, self._stop)
        history.conns.append(self.conn)
        return self.conn

    async def _host(
        self,
        stderr_path: Path | None,
        stop: trio.Event,
        task_status: trio.TaskStatus[BotConnection] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        control = self.settings.time
        try:
            async with self.opener(
                self.spec,
                startup_ms=control.startup_ms,
                grace_ms=control.grace_ms,
                stderr_path=stderr_path,
                starved_cap=self.settings.starved_cap,
            ) as conn:
                task_status.started(conn)
                await stop.wait()
        finally:
            if stderr_path is not None and not self.settings.empty_logs:
                _remove_if_empty(stderr_path)

    def stop(self) -> None:
        """Let the bot's host task say goodbye and stop the process."""
        if self._stop is not None:
            self._stop.set()
            self._stop = None

    def renew(self) -> None:
        """Stop the bot's process, which did nothing wrong, so that the next game
        starts a fresh one (a voided game is played again by fresh processes)."""
        conn, self.conn = self.conn, None
        if conn is not None and conn in self.history.conns:
            self.history.conns.remove(conn)
        self.stop()


def _remove_if_empty(path: Path) -> None:
    """Remove the closed log ``path`` if its bot wrote nothing (a metadata operation
    on a local file, as its creation was)."""
    try:
        if path.stat().st_size == 0:
            path.unlink()
    except OSError:  # never made (the bot did not start), or gone already
        pass


class RemoteBotSlot:
    """A remote bot of a match: the connection its owner opened (docs/remote.md),
    taken from the remote seats when a game needs it and given back when the unit is
    over, so that a remote bot keeps one connection across units.

    A bot that is not connected is waited for once per absence, up to its seat's join
    deadline (:meth:`referee.shell.remote.RemoteSeats.take`): the first game that needs it
    waits, later games forfeit it at once until it joins. With restarts off, a bot
    whose connection ended in an earlier game of the unit is not waited for again."""

    def __init__(self, spec: BotSpec, settings: MatchSettings, seats: RemoteSeats) -> None:
        self.spec = spec
        self.settings = settings
        self.seats = seats
        self.conn: BotConnection | None = None
        #: Connections taken from the seats by this slot.
        self.joins = 0

    async def ready(self, join_by: float) -> BotConnection | BotFault:
        """The bot's connection for the next game, waiting for it when it is not
        connected, until ``join_by`` (Trio's clock) or its seat's earlier join deadline;
        the fault that forfeits it if it cannot play."""
        conn = self.conn
        if conn is not None and await conn.check_idle():
            return conn
        if conn is not None:
            await conn.process.kill()  # whatever is left of the connection
            if not self.settings.restart:
                return _stopped_earlier(
                    conn,
                    "the bot is not waited for after its connection ended in an earlier game",
                )
            self.conn = None
        conn = await self.seats.take(self.spec.name, join_by)
        if conn is None:
            return BotTimeout(f"did not join within {self.seats.join_timeout_s:g} s")
        self.conn = conn
        self.joins += 1
        return conn

    def stop(self) -> None:
        """Give the connection back to the seats, for the bot's next unit."""
        conn, self.conn = self.conn, None
        if conn is not None:
            self.seats.give_back(self.spec.name, conn)


async def play_unit(
    games: Iterable[ScheduledGame],
    bots: Sequence[BotSpec],
    settings: MatchSettings,
    on_game: Callable[[GameOutcome], Awaitable[None] | None] | None = None,
    match_name: str = "match",
    *,
    remote: RemoteSeats | None = None,
    replayed: Container[str] = (),
    opener: BotOpener = open_bot,
) -> list[GameOutcome]:
    """Play ``games`` (all between the given bots) with one process per bot and seat
    rotation, started when first needed and restarted after a crash when the settings
    allow it. A deal is played once per rotation, so no bot process ever plays two games
    of one deal: in the second it would know the other hands and the draw order from the
    first. Callers that play a rotation at a time (league units, ``match``) therefore
    have one process per bot alive. ``games`` may be a generator: it is consumed one game
    at a time, so several units can share one.

    ``replayed`` holds the ids of games that are played only so that the bots' processes
    live through the same games as in an earlier run (a league resumed mid-unit): their
    outcomes are neither returned nor passed to ``on_game``, and no replay is written.

    Remote bots (``BotSpec.remote``) play over their connections to ``remote``; a
    remote bot must not be in two units at once. ``opener`` starts the local ones (by
    default as processes).

    Exceptions leave unwrapped (a ``KeyboardInterrupt`` first), not in the exception
    group of the nursery that hosts the bots."""
    outcomes: list[GameOutcome] = []
    try:
        await _play_games(
            games, bots, settings, on_game, match_name, outcomes, remote, replayed, opener
        )
    except BaseExceptionGroup as group:
        raised = sole_cause(group)
    else:
        return outcomes
    raise raised


async def _play_games(
    games: Iterable[ScheduledGame],
    bots: Sequence[BotSpec],
    settings: MatchSettings,
    on_game: Callable[[GameOutcome], Awaitable[None] | None] | None,
    match_name: str,
    outcomes: list[GameOutcome],
    remote: RemoteSeats | None,
    replayed: Container[str],
    opener: BotOpener,
) -> None:
    async with trio.open_nursery() as nursery:
        local = {b.name: b for b in bots if not b.remote}
        remote_slots = _remote_slots(bots, settings, remote)
        slots: dict[tuple[str, int], BotSlot] = {}
        histories = {name: ProcessHistory() for name in local}
        log_name = safe_filename(match_name)

        def slot_for(name: str, rotation: int) -> BotSlot | RemoteBotSlot:
            if name in remote_slots:
                return remote_slots[name]
            slot = slots.get((name, rotation))
            if slot is None:
                slot = BotSlot(local[name], settings, log_name, nursery, histories[name],
                               opener)
                slots[name, rotation] = slot
            return slot

        try:
            for game in games:
                # A unit cancelled while it stored its last game (in a thread, which
                # runs to its end) stops here, before its bots are asked to play on:
                # their hosts are being cancelled too, and say goodbye.
                await trio.lowlevel.checkpoint_if_cancelled()
                seat_slots = [slot_for(name, game.rotation) for name in game.seats]
                referee, result, infra = await _play_game(game, seat_slots, settings, remote)
                if game.game_id in replayed:
                    continue
                outcome = await _outcome(game, referee, result, infra, seat_slots, settings)
                outcomes.append(outcome)
                await _report(on_game, outcome)
        finally:
            for slot in slots.values():
                slot.stop()
            for remote_slot in remote_slots.values():
                remote_slot.stop()


def _remote_slots(
    bots: Sequence[BotSpec], settings: MatchSettings, remote: RemoteSeats | None
) -> dict[str, RemoteBotSlot]:
    """A slot for each remote bot, over its one connection to ``remote`` (what its
    owner runs behind it is theirs); ValueError for a remote bot with no seat open."""
    remote_slots: dict[str, RemoteBotSlot] = {}
    for b in bots:
        if not b.remote:
            continue
        if remote is None or b.name not in remote.tokens:
            raise ValueError(f"bot {b.name!r} is remote, but it has no remote seat open")
        remote_slots[b.name] = RemoteBotSlot(b, settings, remote)
    return remote_slots


async def _outcome(
    game: ScheduledGame,
    referee: GameReferee,
    result: GameResult | None,
    infra: tuple[InfraEvent, ...],
    seat_slots: Sequence[BotSlot | RemoteBotSlot],
    settings: MatchSettings,
) -> GameOutcome:
    """A played game's outcome (a voided one's when ``result`` is None), its replay
    saved first when the settings want one."""
    if result is None:
        return GameOutcome(game, (), 0, None, None, infra=infra, voided=True)
    path = None
    if settings.replay_dir is not None and wants_replay(settings, game, result):
        path = replay_path(settings.replay_dir, game.game_id)
        # Off the loop: other games' clocks run meanwhile.
        await trio.to_thread.run_sync(referee.replay.save, path)
    logs = [slot.log_path if isinstance(slot, BotSlot) else None for slot in seat_slots]
    return attrs.evolve(
        outcome_of(game, result, path, referee.times.seats(), logs), infra=infra)


async def _report(
    on_game: Callable[[GameOutcome], Awaitable[None] | None] | None, outcome: GameOutcome
) -> None:
    """Hand ``outcome`` to ``on_game``, awaiting it when it is a coroutine function."""
    if on_game is not None:
        maybe = on_game(outcome)
        if maybe is not None:
            await maybe


async def _play_game(
    game: ScheduledGame,
    seat_slots: Sequence[BotSlot | RemoteBotSlot],
    settings: MatchSettings,
    remote: RemoteSeats | None,
) -> tuple[GameReferee, GameResult | None, tuple[InfraEvent, ...]]:
    """Play one game, again with fresh processes while an infrastructure fault voids it
    (at most ``settings.void_replays`` times): its referee, its result (None: voided
    every time) and the infrastructure events of the voided plays."""
    infra: list[InfraEvent] = []
    while True:
        # The remote seats of a game that start waiting for their bots wait
        # until the same deadline, kept for the rest of each one's absence.
        join_by = trio.current_time() + (0 if remote is None else remote.join_timeout_s)
        # One bot after the other: bots started at once would share the CPUs
        # during their start-up time, and a heavy bot could miss it through no
        # fault of its own.
        conns: list[BotConnection | BotFault] = []
        for slot in seat_slots:
            if isinstance(slot, RemoteBotSlot):
                conns.append(await slot.ready(join_by))
            else:
                conns.append(await slot.ready())
        referee = GameReferee(game, conns, settings)
        referee.attempt = len(infra)
        try:
            return referee, await referee.run(), tuple(infra)
        except GameVoided as void:
            infra.append(void.event)
        for slot in seat_slots:
            if isinstance(slot, BotSlot):
                slot.renew()
        if len(infra) > settings.void_replays:
            return referee, None, tuple(infra)
