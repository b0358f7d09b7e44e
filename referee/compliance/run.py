"""Running the compliance scenarios against one bot.

The lifecycle scenarios (the handshake, and ``shutdown``, ``error`` and the end of input
at every point of a conversation) each have a process of their own. The game scenarios
then play one after another in one process of the bot, as a match plays its games, and
a new process takes over after a forfeit. Every request goes through the match runner's
referee (:mod:`referee.match.game`) and connection (:mod:`referee.shell.bots`).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from pathlib import Path

import attrs
import trio
from taki_protocol import Error, Hello, Message, Shutdown

from referee.compliance.catalogue import SCENARIOS, scenario_named
from referee.compliance.outcome import BotReport, ScenarioOutcome
from referee.compliance.scenario import Scenario
from referee.compliance.table import Exchange, GameStopped, RecordingConnection, ScenarioTable
from referee.core import SHUTDOWN_WAIT_MS, BotFault, BotSpec, BotTimeout, TimeControl, check_slack
from referee.match import GameVoided, safe_filename
from referee.shell import REFEREE_ID, open_bot

__all__ = ["LIFECYCLE", "CheckSettings", "check_bot", "scenario_catalogue"]

#: The lifecycle scenarios, by name, with what each checks.
LIFECYCLE: dict[str, str] = {
    "handshake": "hello, answered by bot_hello within the startup time",
    "shutdown-before-game": "shutdown right after the handshake: exit with status 0",
    "end-of-input": "end of input after the handshake: exit",
    "shutdown-mid-game": "shutdown in the middle of a game: exit with status 0",
    "error-mid-game": "error in the middle of a game: exit within 200 ms",
    "shutdown-after-game-over": "shutdown after game_over: exit with status 0",
}
#: The game scenario the lifecycle checks play (a short one).
LIFECYCLE_GAME = "decide-play"
#: How long a bot that owes no answer is watched after game_over for anything it writes.
IDLE_WATCH_S = 0.02
#: The lines of the bot's stderr a failed scenario shows.
STDERR_LINES = 10
#: What a bot that had to be stopped should do instead (a JVM's orderly exit, say).
EXIT_ADVICE = "exit at once, without clean-up (PROTOCOL.md section 3.6)"
#: How often a scenario voided by an infrastructure fault is played again.
VOID_REPLAYS = 2


def scenario_catalogue() -> list[tuple[str, str, str]]:
    """Every scenario's name, group and summary, in the order they run."""
    return [*((name, "lifecycle", summary) for name, summary in LIFECYCLE.items()),
            *((s.name, s.group, s.summary) for s in SCENARIOS)]


@attrs.frozen
class CheckSettings:
    time: TimeControl = attrs.field(factory=TimeControl)
    #: Where the bot's stderr goes, one file per process (None: nowhere).
    log_dir: Path | None = None
    #: The scenarios to run, by name (empty: every one).
    only: frozenset[str] = frozenset()
    #: What the fixed waits (a bot's exit after shutdown, error or the end of its input,
    #: ``referee.core.margins``) are multiplied by, on top of the host's load.
    slack: float = attrs.field(default=1.0, converter=check_slack)

    def wanted(self, name: str) -> bool:
        return not self.only or name in self.only


def _lifecycle(name: str, problem: str | None = None, request: Message | None = None,
               fault: BotFault | None = None) -> ScenarioOutcome:
    """A lifecycle scenario's outcome: passed, or ``problem`` after ``request``."""
    if problem is None:
        return ScenarioOutcome(name, "lifecycle", LIFECYCLE[name])
    return ScenarioOutcome(name, "lifecycle", LIFECYCLE[name], problem, request, fault=fault)


def _failed(scenario: Scenario, problem: str, exchange: Exchange | None = None,
            fault: BotFault | None = None) -> ScenarioOutcome:
    return ScenarioOutcome(
        scenario.name, scenario.group, scenario.summary, problem,
        request=None if exchange is None else exchange.request,
        answer=None if exchange is None else exchange.answer,
        fault=fault,
    )


def _forfeit_problem(table: ScenarioTable, reason: str, last: Exchange | None) -> str:
    """Why the bot forfeited; a timeout names the time it was allowed: the request's
    ``deadline_ms`` (a reaction's, or the decision's under the scenario's time control)
    plus the grace."""
    problem = f"forfeited ({reason})"
    if reason == "timeout" and last is not None and last.fault is not None:
        problem += (f": allowed deadline_ms {last.request.deadline_ms} ms plus"
                    f" {table.settings.time.grace_ms} ms of grace")
    return problem


async def _judge(table: ScenarioTable) -> ScenarioOutcome:
    """Whether the bot played the scenario's game through as the protocol asks."""
    scenario, conn = table.scenario, table.bot
    last = table.exchanges[-1] if table.exchanges else None
    for seat, reason, _, _ in table.state.forfeits:
        if seat == scenario.seat:
            return _failed(scenario, _forfeit_problem(table, reason, last), last, conn.fault)
    if table.undeclared:
        return _failed(scenario, 'ended its turn with one card without declaring "last card"'
                       " and drew the penalty", table.undeclared[0])
    requests = [(ex.request.TYPE, ex.request.view, ex.request.legal) for ex in table.exchanges]
    for asked in scenario.asked:
        if not any(asked.matches(*request) for request in requests):
            return _failed(scenario, "the situation was not reached: the bot was never sent"
                           f" {asked.describe()}")
    if table.state.is_over and not await conn.check_idle(IDLE_WATCH_S):
        gone = "the bot is gone" if conn.fault is None else conn.fault.public_detail
        return _failed(scenario, f"after game_over: {gone}", last, conn.fault)
    return ScenarioOutcome(scenario.name, scenario.group, scenario.summary)


async def play_scenario(scenario: Scenario, conn: RecordingConnection,
                        time_control: TimeControl) -> ScenarioOutcome:
    table = ScenarioTable(scenario, conn, time_control)
    await table.run()
    return await _judge(table)


class _Starter:
    """Starts processes of the bot under test, each with its own stderr log."""

    def __init__(self, spec: BotSpec, settings: CheckSettings) -> None:
        self.spec = spec
        self.settings = settings
        self.starts = 0
        #: The stderr log of the process started last.
        self.log: Path | None = None

    def explain(self, outcome: ScenarioOutcome, conn: RecordingConnection) -> ScenarioOutcome:
        """A failed outcome with the last stderr lines of the process that played it
        and the file its stderr went to."""
        if outcome.passed:
            return outcome
        return attrs.evolve(outcome, stderr=conn.process.stderr_tail(STDERR_LINES),
                            log=None if self.log is None else str(self.log))

    @contextlib.asynccontextmanager
    async def open(self) -> AsyncIterator[RecordingConnection]:
        log_dir = self.settings.log_dir
        stderr_path = None
        if log_dir is not None:
            stderr_path = log_dir / f"check-{safe_filename(self.spec.name)}.{self.starts}.log"
        self.starts += 1
        self.log = stderr_path
        control = self.settings.time
        async with open_bot(self.spec, startup_ms=control.startup_ms,
                            grace_ms=control.grace_ms, stderr_path=stderr_path,
                            connection=RecordingConnection,
                            slack=self.settings.slack) as conn:
            assert isinstance(conn, RecordingConnection)
            yield conn


async def _exit_status(conn: RecordingConnection, wait_s: float) -> int | None:
    """The bot's exit status once it exits, within ``wait_s`` (None: still running)."""
    with trio.move_on_after(wait_s):
        await conn.process.wait()
    return conn.process.returncode


def _exit_problem(code: int | None, after: str, wait_s: float) -> str | None:
    if code is None:
        return f"still running {wait_s * 1000:.0f} ms after {after}; {EXIT_ADVICE}"
    if code != 0:
        status = f"exited with status {code}" if code >= 0 else f"was killed by signal {-code}"
        return f"{status} after {after}"
    return None


async def _handshake_and_shutdown(starter: _Starter) -> list[ScenarioOutcome]:
    hello = Hello(referee=REFEREE_ID)
    async with starter.open() as conn:
        if conn.fault is not None:
            failed = _lifecycle("handshake", f"failed ({conn.fault.reason})", hello, conn.fault)
            return [starter.explain(failed, conn)]
        out = [_lifecycle("handshake")]
        if starter.settings.wanted("shutdown-before-game"):
            await conn.shutdown()
            problem = _exit_problem(conn.process.returncode, "shutdown", conn.exit_wait_s)
            out.append(starter.explain(_lifecycle("shutdown-before-game", problem, Shutdown()),
                                       conn))
        return out


async def _end_of_input(starter: _Starter) -> ScenarioOutcome:
    async with starter.open() as conn:
        await conn.process.close_input()
        wait_s = conn.wait_s(SHUTDOWN_WAIT_MS)
        code = await _exit_status(conn, wait_s)
        problem = None if code is not None else \
            f"still running {wait_s * 1000:.0f} ms after the end of its input;" \
            f" {EXIT_ADVICE}"
        return starter.explain(_lifecycle("end-of-input", problem), conn)


async def _mid_game(starter: _Starter, name: str, stop_after: int | None,
                    goodbye: Callable[[RecordingConnection], Awaitable[ScenarioOutcome]],
                    ) -> ScenarioOutcome:
    """Play the lifecycle game up to ``stop_after`` answers (None: to its end), then say
    goodbye; a bot that faults before that fails the scenario."""
    async with starter.open() as conn:
        table = ScenarioTable(scenario_named(LIFECYCLE_GAME), conn, starter.settings.time,
                              stop_after=stop_after)
        try:
            with contextlib.suppress(GameStopped):
                await table.run()
        except GameVoided as void:
            return _lifecycle(name, _not_judged(void, 1))
        played = await _judge(table)
        if not played.passed:
            played = attrs.evolve(played, name=name, group="lifecycle", summary=LIFECYCLE[name],
                                  problem=f"before the goodbye: {played.problem}")
            return starter.explain(played, conn)
        return starter.explain(await goodbye(conn), conn)


async def _shutdown(name: str, conn: RecordingConnection) -> ScenarioOutcome:
    await conn.shutdown()
    return _lifecycle(name, _exit_problem(conn.process.returncode, "shutdown",
                                          conn.exit_wait_s), Shutdown())


async def _error(conn: RecordingConnection) -> ScenarioOutcome:
    fault = BotTimeout("the compliance check ends this game")
    await conn.fail(fault)  # error, input closed, its goodbye time to exit, then the kill
    code = conn.process.returncode
    problem = None if code is not None and code >= 0 else \
        f"still running {conn.exit_wait_s * 1000:.0f} ms after error: killed; {EXIT_ADVICE}"
    return _lifecycle("error-mid-game", problem,
                      Error(reason="timeout", message=fault.public_detail))


async def _lifecycle_checks(starter: _Starter) -> list[ScenarioOutcome]:
    """The lifecycle scenarios; the handshake's failure ends the list there."""
    wanted = starter.settings.wanted
    out = await _handshake_and_shutdown(starter)
    if not out[0].passed:
        return out
    if wanted("end-of-input"):
        out.append(await _end_of_input(starter))
    if wanted("shutdown-mid-game"):
        out.append(await _mid_game(starter, "shutdown-mid-game", 1,
                                   lambda conn: _shutdown("shutdown-mid-game", conn)))
    if wanted("error-mid-game"):
        out.append(await _mid_game(starter, "error-mid-game", 1, _error))
    if wanted("shutdown-after-game-over"):
        out.append(await _mid_game(starter, "shutdown-after-game-over", None,
                                   lambda conn: _shutdown("shutdown-after-game-over", conn)))
    return out


async def _game_checks(starter: _Starter, scenarios: Sequence[Scenario]) -> list[ScenarioOutcome]:
    """Every game scenario, in one process while the bot keeps playing."""
    out: list[ScenarioOutcome] = []
    pending = list(scenarios)
    voids: dict[str, int] = {}
    while pending:
        async with starter.open() as conn:
            if conn.fault is not None:
                problem = ("not played: the bot failed its handshake"  # with its allowance
                           f" ({conn.fault.reason}: {conn.fault.public_detail})")
                out += [starter.explain(_failed(s, problem, fault=conn.fault), conn)
                        for s in pending]
                return out
            # At least one scenario per process, so a bot that exits at once still ends.
            first = True
            while pending and (first or conn.alive):
                first = False
                scenario = pending.pop(0)
                try:
                    played = await play_scenario(scenario, conn, starter.settings.time)
                except GameVoided as void:
                    # The machine's fault: played again by a fresh process, a few times.
                    voids[scenario.name] = tried = voids.get(scenario.name, 0) + 1
                    if tried > VOID_REPLAYS:
                        out.append(_failed(scenario, _not_judged(void, tried)))
                    else:
                        pending.insert(0, scenario)
                    break
                out.append(starter.explain(played, conn))
    return out


def _not_judged(void: GameVoided, times: int) -> str:
    return (f"not judged: voided {times} times by infrastructure faults (the machine"
            f" starved the bot or the referee; give a larger --slack or a quieter machine):"
            f" {void.event.figures.describe()}")


async def check_bot(spec: BotSpec, settings: CheckSettings) -> BotReport:
    """Run the scenarios against one bot. A bot that cannot be started at all raises
    BotStartError."""
    began = time.monotonic()
    starter = _Starter(spec, settings)
    outcomes = await _lifecycle_checks(starter)
    handshake = outcomes[0]
    games = [s for s in SCENARIOS if settings.wanted(s.name)]
    if handshake.passed:
        outcomes += await _game_checks(starter, games)
        if not settings.wanted("handshake"):
            outcomes = outcomes[1:]
    else:  # shown whatever scenarios were asked for: nothing else could run
        unplayed = "not played: the bot failed its handshake"
        outcomes += [_lifecycle(name, unplayed) for name in LIFECYCLE
                     if name != "handshake" and settings.wanted(name)]
        outcomes += [_failed(s, unplayed) for s in games]
    return BotReport(spec.name, spec.display, tuple(outcomes), time.monotonic() - began)
