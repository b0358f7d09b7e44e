"""Remote bots over TCP: real sockets on the loopback interface only.

Remote seats are played through the ``connect`` adapter (in this process, or as the
``taki-referee connect`` command), against the referee in this process or as the
``taki-referee match`` command. Hostile peers (no token, a wrong or reused token, an
oversized or slow first message, a burst of connections) are refused while a game goes
on, without the referee's memory growing.
"""

from __future__ import annotations

import collections
import contextlib
import functools
import logging
import os
import selectors
import socket
import stat
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import attrs
import msgpack
import psutil
import pytest
import trio
from jsonout import strict_json
from processes import live_children
from taki_protocol import BotHello, Error, pack_message, unpack_message

from referee.cli.main import main
from referee.config.bot_commands import make_command, parse_bot_arg
from referee.config.errors import SettingsError
from referee.config.settings import load_league
from referee.core.clock import TimeControl
from referee.core.faults import BotTimeout, FaultReason
from referee.core.margins import GOODBYE_MS
from referee.core.outcomes import GameOutcome, MatchSettings, SeatForfeit
from referee.core.replay import Replay, verify
from referee.core.schedule import match_games
from referee.core.specs import BotCommand, BotSpec
from referee.core.time_use import TimeUse
from referee.league.runner import run_league
from referee.league.sprt_run import run_sprt
from referee.league.store import ResultStore
from referee.match.unit import play_unit
from referee.ratings.sprt import Sprt
from referee.shell.admission import PREAUTH_TIMEOUT_S, RateLimiter
from referee.shell.bots import BotConnection
from referee.shell.connect import ConnectError, client_tls_context, connect_bot
from referee.shell.network import RemoteSetupError, parse_address
from referee.shell.remote import MAX_PENDING_PER_ADDRESS, RemoteSeats
from referee.shell.seat_setup import open_remote_seats, server_tls_context, write_tokens
from referee.shell.stream_transport import StreamTransport

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = Path(__file__).resolve().parents[1] / "hostile_bots"
RANDOM_BOT = ROOT / "sample_bots" / "random_bot.py"
CLI = Path(sys.executable).parent / "taki-referee"
LOOPBACK = ("127.0.0.1", 0)
FAST = TimeControl(move_ms=1000, reaction_ms=1000, startup_ms=5000)


def random_command(seed: int) -> BotCommand:
    return BotCommand((sys.executable, str(RANDOM_BOT), str(seed)))


def random_bot(seed: int) -> BotSpec:
    return BotSpec(f"random{seed}", random_command(seed))


def hostile_command(script: str, *args: str) -> BotCommand:
    return BotCommand((sys.executable, str(HOSTILE / f"{script}.py"), *args))


def remote(name: str) -> BotSpec:
    return BotSpec(name, None)


@pytest.fixture(autouse=True)
def no_leftover_processes() -> Iterator[None]:
    assert live_children(zombies=False) == [], "a process was running before the test"
    yield
    assert live_children(zombies=False) == [], "the test left processes behind"


def check_outcomes(outcomes: Sequence[GameOutcome]) -> None:
    """Every game ended normally, nobody forfeited, and its replay verifies."""
    for outcome in outcomes:
        assert outcome.reason in ("win", "last_standing", "limit")
        forfeits = [s.forfeit for s in outcome.seats if s.forfeit is not None]
        assert forfeits == [], (outcome.game.game_id, forfeits)
        assert outcome.replay is not None
        result = verify(Replay.load(outcome.replay))
        assert [s.place for s in outcome.seats] == list(result.places)


def settings(tmp_path: Path, **kwargs: Any) -> MatchSettings:
    return MatchSettings(
        time=kwargs.pop("time", FAST), replay_dir=tmp_path / "replays",
        log_dir=tmp_path / "logs", **kwargs,
    )


class Client:
    """``connect_bot`` in a task, remembering how it ended."""

    def __init__(self) -> None:
        self.result: str | None = None
        self.error: ConnectError | None = None
        self.done = trio.Event()

    async def run(self, seats: RemoteSeats, name: str, command: BotCommand,
                  address: tuple[str, int] | None = None, **kwargs: Any) -> None:
        try:
            self.result = await connect_bot(
                address or seats.addresses[0], seats.tokens[name], command,
                name=f"{name}-client", **kwargs,
            )
        except ConnectError as exc:
            self.error = exc
        finally:
            self.done.set()


async def play_with_remote(
    tmp_path: Path, bots: Sequence[BotSpec], clients: dict[str, BotCommand], games: int,
    *, address: tuple[str, int] = LOOPBACK, rotation: int | None = None, **options: Any,
) -> tuple[list[GameOutcome], RemoteSeats, dict[str, Client]]:
    """A block of ``games`` (those of one ``rotation`` if given) with remote seats played
    by ``connect`` clients."""
    names = [b.name for b in bots if b.remote]
    done: dict[str, Client] = {name: Client() for name in clients}
    with trio.fail_after(30):
        async with (
            trio.open_nursery() as nursery,
            open_remote_seats(names, address, tokens_path=tmp_path / "tokens",
                              join_timeout_s=options.pop("join_timeout_s", 10),
                              **options) as seats,
        ):
            for name, command in clients.items():
                nursery.start_soon(done[name].run, seats, name, command)
            schedule = match_games([b.name for b in bots], games, seed=3, rotation=rotation)
            outcomes = await play_unit(schedule, bots, settings(tmp_path), match_name="m",
                                        remote=seats)
    return outcomes, seats, done


async def play_far(
    tmp_path: Path, seats: RemoteSeats, games: int, *, time: TimeControl = FAST,
    on_game: Callable[[GameOutcome], Awaitable[None]] | None = None,
) -> list[GameOutcome]:
    """A block of ``games`` between a local random bot and the remote seat ``far``."""
    return await play_unit(
        match_games(["random1", "far"], games, seed=3), [random_bot(1), remote("far")],
        settings(tmp_path, time=time), on_game=on_game, match_name="m", remote=seats,
    )


@contextlib.asynccontextmanager
async def far_seat(**options: Any) -> AsyncIterator[tuple[trio.Nursery, RemoteSeats]]:
    """The remote seat ``far`` on the loopback interface and a nursery for its clients,
    all done within 40 s."""
    with trio.fail_after(40):
        async with (
            trio.open_nursery() as nursery,
            open_remote_seats(["far"], LOOPBACK, **options) as seats,
        ):
            yield nursery, seats


def far_forfeit(outcome: GameOutcome) -> SeatForfeit | None:
    return next(s for s in outcome.seats if s.bot == "far").forfeit


# ------------------------------------------------------------------------- playing


async def test_match_with_a_remote_seat_through_connect(tmp_path: Path) -> None:
    bots = [random_bot(1), remote("far")]
    outcomes, seats, clients = await play_with_remote(
        tmp_path, bots, {"far": random_command(2)}, games=3
    )
    assert len(outcomes) == 3
    check_outcomes(outcomes)
    assert seats.joined == 1  # one connection for the whole match
    client = clients["far"]
    assert client.error is None and client.result is not None  # ended by shutdown
    tokens = tmp_path / "tokens"
    assert stat.S_IMODE(tokens.stat().st_mode) == 0o600
    assert tokens.read_text() == f"far {seats.tokens['far']}\n"
    assert len(seats.tokens["far"]) >= 40


async def test_remote_games_match_local_games(tmp_path: Path) -> None:
    """The same seeded bots give the same games whether a seat is local or remote. (A
    local bot plays each seat rotation in a process of its own, a remote one behind its
    one connection: the games of one rotation compare.)"""
    local = await play_unit(match_games(["random1", "far"], 6, seed=3, rotation=1),
                             [random_bot(1), BotSpec("far", random_command(2))],
                             settings(tmp_path / "local"), match_name="m")
    outcomes, _, _ = await play_with_remote(
        tmp_path, [random_bot(1), remote("far")], {"far": random_command(2)}, games=6,
        rotation=1,
    )
    assert len(outcomes) == 3
    def results(games: list[GameOutcome]) -> list[list[tuple[object, ...]]]:
        """What the games came to (not how long the bots took, nor where they logged)."""
        return [[(s.seat, s.bot, s.place, s.points, s.forfeit) for s in o.seats] for o in games]

    assert results(outcomes) == results(local)
    assert [o.actions for o in outcomes] == [o.actions for o in local]


async def test_seat_that_never_joins_forfeits_at_the_join_deadline(tmp_path: Path) -> None:
    bots = [random_bot(1), remote("ghost")]
    start = trio.current_time()
    outcomes, seats, _ = await play_with_remote(tmp_path, bots, {}, games=1,
                                                join_timeout_s=0.5)
    took = trio.current_time() - start
    assert 0.5 <= took < 3
    (outcome,) = outcomes
    ghost = next(s for s in outcome.seats if s.bot == "ghost")
    assert ghost.forfeit == SeatForfeit(FaultReason.TIMEOUT, "did not join within 0.5 s")
    assert ghost.place == 2 and outcome.reason == "last_standing"
    assert outcome.replay is not None
    verify(Replay.load(outcome.replay))
    assert seats.joined == 0


def join_waits(caplog: pytest.LogCaptureFixture) -> list[str]:
    """The referee's log lines that start or end a wait for a remote bot."""
    return [r.getMessage() for r in caplog.records
            if r.name == "referee.shell.remote" and ("waiting up to" in r.getMessage()
                                               or "did not join within" in r.getMessage())]


async def test_seat_that_never_joins_is_waited_for_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The join deadline is one per absence, not one per game: the first game waits for
    the seat, the later ones forfeit it at once."""
    caplog.set_level(logging.INFO, logger="referee.shell.remote")
    bots = [random_bot(1), remote("ghost")]
    start = trio.current_time()
    outcomes, seats, _ = await play_with_remote(tmp_path, bots, {}, games=3,
                                                join_timeout_s=3)
    took = trio.current_time() - start
    # Three waits would take 9 s or more.
    assert 3 <= took < 7, took
    assert len(outcomes) == 3
    for outcome in outcomes:
        ghost = next(s for s in outcome.seats if s.bot == "ghost")
        assert ghost.forfeit == SeatForfeit(FaultReason.TIMEOUT, "did not join within 3 s")
        assert outcome.reason == "last_standing"
    waits = join_waits(caplog)
    assert len(waits) == 2 and "waiting up to" in waits[0], waits
    assert "did not join within 3 s: its games forfeit" in waits[1]
    assert seats.joined == 0


async def test_late_joiner_plays_the_games_after_it_joins(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A seat whose join deadline has passed forfeits without a wait until its bot joins,
    and then plays; its next absence would be waited for anew."""
    caplog.set_level(logging.INFO, logger="referee.shell.remote")
    client = Client()
    async with far_seat(join_timeout_s=1) as (nursery, seats):

        async def after(outcome: GameOutcome) -> None:
            if outcome.game.game_id.endswith("2"):  # the second game: join now
                nursery.start_soon(client.run, seats, "far", random_command(2))
                while not seats.connected("far"):
                    await trio.sleep(0.01)

        outcomes = await play_far(tmp_path, seats, 4, on_game=after)
    ids = [o.game.game_id for o in outcomes]
    assert [i[-1] for i in ids] == ["1", "2", "3", "4"], ids
    for outcome in outcomes[:2]:
        assert far_forfeit(outcome) == SeatForfeit(FaultReason.TIMEOUT, "did not join within 1 s")
    check_outcomes(outcomes[2:])
    assert len(join_waits(caplog)) == 2  # the first game's wait, and its end
    assert seats.joined == 1
    assert client.error is None and client.result is not None


async def test_dropped_seat_is_waited_for_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A bot whose connection ended is waited for again, once: the first game after the
    drop waits up to the join timeout, the later ones forfeit it at once."""
    caplog.set_level(logging.INFO, logger="referee.shell.remote")
    client = Client()
    async with far_seat(join_timeout_s=2) as (nursery, seats):
        nursery.start_soon(client.run, seats, "far", hostile_command("exit_mid_game", "2"))
        outcomes = await play_far(tmp_path, seats, 4)
    forfeits = [far_forfeit(o) for o in outcomes]
    assert forfeits[0] is not None and forfeits[0].reason == "crash"
    assert forfeits[1:] == [SeatForfeit(FaultReason.TIMEOUT, "did not join within 2 s")] * 3
    ends = [w for w in join_waits(caplog) if "did not join within" in w]
    assert len(ends) == 1, join_waits(caplog)
    assert seats.joined == 1 and client.error is not None


async def test_dropped_seat_is_not_waited_for_when_restart_is_off(tmp_path: Path) -> None:
    """With restarts off, a bot whose connection ended in a game forfeits the later games
    at once, with the fault that ended it."""
    client = Client()
    async with far_seat(join_timeout_s=30) as (nursery, seats):
        nursery.start_soon(client.run, seats, "far", hostile_command("exit_mid_game", "2"))
        outcomes = await play_unit(
            match_games(["random1", "far"], 3, seed=3), [random_bot(1), remote("far")],
            settings(tmp_path, restart=False), match_name="m", remote=seats,
        )
    first = far_forfeit(outcomes[0])
    assert first is not None and first.reason == "crash"
    said = "the bot is not waited for after its connection ended in an earlier game"
    for outcome in outcomes[1:]:
        assert far_forfeit(outcome) == SeatForfeit(FaultReason.CRASH,
                                                   f"{said} (crash: {first.detail})")
        assert outcome.actions == 0
    assert seats.joined == 1


@pytest.mark.parametrize(
    ("script", "args", "reason"),
    [("exit_mid_game", ("2",), "crash"), ("sleep_forever", ("2",), "timeout")],
)
async def test_dropped_or_silent_remote_forfeits_then_rejoins(
    tmp_path: Path, script: str, args: tuple[str, ...], reason: str
) -> None:
    """A remote bot that drops its connection forfeits with crash, a silent one with
    timeout; its owner connects again with the same token and plays the next game."""
    # Short enough for the silent bot to time out quickly, long enough that the
    # honest bot of the next game never does on a busy machine.
    fast = TimeControl(move_ms=1000, reaction_ms=1000, startup_ms=5000)
    first, second = Client(), Client()
    async with far_seat(join_timeout_s=10) as (nursery, seats):

        async def clients() -> None:
            await first.run(seats, "far", hostile_command(script, *args))
            await second.run(seats, "far", random_command(2))

        nursery.start_soon(clients)
        outcomes = await play_far(tmp_path, seats, 2, time=fast)
    assert outcomes[0].seats[1].forfeit is not None
    assert outcomes[0].seats[1].forfeit.reason == reason
    check_outcomes(outcomes[1:])
    assert first.error is not None and second.error is None
    if reason == "timeout":
        assert "forfeited the bot (timeout)" in str(first.error)
    assert seats.joined == 2


# ------------------------------------------------------------------ the goodbye


class WithoutHalfClose(trio.abc.Stream):
    """A stream that cannot half-close, as TLS cannot."""

    def __init__(self, inner: trio.abc.Stream) -> None:
        self.inner = inner

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        await self.inner.send_all(data)

    async def wait_send_all_might_not_block(self) -> None:
        await self.inner.wait_send_all_might_not_block()

    async def receive_some(self, max_bytes: int | None = None) -> bytes | bytearray:
        return await self.inner.receive_some(max_bytes)

    async def aclose(self) -> None:
        await self.inner.aclose()


async def forfeit_a_bot_that_reads_to_the_end(
    wrap: Callable[[trio.SocketStream], trio.abc.Stream],
) -> tuple[StreamTransport, bytes, float]:
    """Forfeit a remote bot that reads until end of file and then closes its end; the
    transport, what the bot read, and how long the forfeit took."""
    ours, theirs = (trio.SocketStream(s) for s in trio.socket.socketpair())
    transport = StreamTransport(wrap(ours), ours, "a test peer")
    conn = BotConnection("far", transport)
    received = bytearray()

    async def bot() -> None:
        while data := await theirs.receive_some():
            received.extend(data)
        await theirs.aclose()

    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(bot)
            start = trio.current_time()
            await conn.fail(BotTimeout("no answer within 1000 ms"))
            took = trio.current_time() - start
    # The goodbye time is the one the connection gave (GOODBYE_MS, scaled by the load).
    assert conn.exit_wait_s >= GOODBYE_MS / 1000
    return transport, bytes(received), took - conn.exit_wait_s


ERROR = Error(reason="timeout", message="no answer within 1000 ms")


async def test_a_forfeited_remote_bot_reads_end_of_file_after_its_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """On plain TCP the error is followed by end of file, as on a local bot's stdin: the
    bot that reads on until its input ends is not cut off, it closes the connection."""
    monkeypatch.setattr("referee.shell.bots.GOODBYE_MS", 30000)  # only the end of file ends it
    transport, received, _ = await forfeit_a_bot_that_reads_to_the_end(lambda s: s)
    assert unpack_message(received) == ERROR
    assert transport.status() == "closed the connection"


async def test_without_half_close_a_forfeit_still_ends_within_the_goodbye() -> None:
    """Over a stream that cannot half-close (TLS) the bot gets its error, and the
    connection is closed when the goodbye time is over."""
    transport, received, took = await forfeit_a_bot_that_reads_to_the_end(WithoutHalfClose)
    assert unpack_message(received) == ERROR
    assert transport.status() == "was disconnected by the referee"
    assert 0 <= took < 1.5  # past the goodbye time


def league_file(path: Path, far: str) -> Path:
    """A league of two random bots and ``far``, whose ``[[bots]]`` lines are ``far``."""
    path.write_text(f"""\
[league]
table_size = 2
deals = 2
seed = 1
concurrency = 2
replay_dir = "replays"

[time]
move_ms = 1000

[[bots]]
name = "random1"
command = "python {RANDOM_BOT} 1"

[[bots]]
name = "random2"
command = "python {RANDOM_BOT} 2"

[[bots]]
name = "far"
{far}
""")
    return path


def league_results(store: ResultStore) -> dict[str, tuple[object, ...]]:
    """Each stored game's result, by id: what the bots did, not where it is stored nor
    how long the bots took."""
    return {g.game_id: (g.block, g.seed, g.actions, g.reason,
                        tuple(attrs.evolve(s, time=TimeUse()) for s in g.seats))
            for g in store.games()}


async def test_league_with_a_remote_bot(tmp_path: Path) -> None:
    """Blocks that seat the remote bot take turns: it keeps one connection throughout,
    and the league's results are those of the same league with the bot run locally."""
    # The greedy bot is deterministic: one process for the whole league (remote) and one
    # per block (local) play alike, whatever order the blocks take.
    greedy = f"python {ROOT / 'sample_bots' / 'greedy_bot.py'}"
    local = load_league(league_file(tmp_path / "local.toml", f'command = "{greedy}"'))
    config = load_league(league_file(tmp_path / "league.toml", "remote = true"))
    assert config.bots[2].remote and config.bots[2].display == "remote"
    client = Client()
    with trio.fail_after(80), ResultStore(tmp_path / "r.sqlite") as store, \
            ResultStore(tmp_path / "local.sqlite") as local_store:
        await run_league(local, local_store, log_dir=tmp_path / "local-logs")
        async with (
            trio.open_nursery() as nursery,
            open_remote_seats(["far"], LOOPBACK, join_timeout_s=10) as seats,
        ):
            nursery.start_soon(client.run, seats, "far", make_command(greedy))
            played = await run_league(config, store, log_dir=tmp_path / "logs", remote=seats)
        assert played == store.game_count() == 3 * 2 * 2
        assert store.forfeit_counts() == {}
        far_games = [g for g in store.games() if any(s.bot == "far" for s in g.seats)]
        assert len(far_games) == 8
        results = league_results(store)
        assert len(results) == 12
        assert results == league_results(local_store)
    assert seats.joined == 1
    assert client.error is None and client.result is not None


async def test_sprt_with_a_remote_bot(tmp_path: Path) -> None:
    """Its games are played one at a time, whatever the concurrency."""
    client = Client()
    with trio.fail_after(30):
        async with (
            trio.open_nursery() as nursery,
            open_remote_seats(["new"], LOOPBACK, join_timeout_s=10) as seats,
        ):
            nursery.start_soon(client.run, seats, "new", random_command(2))
            outcome = await run_sprt(remote("new"), random_bot(1), Sprt(0, 10), settings(tmp_path),
                                     max_games=4, concurrency=2, remote=seats)
    assert outcome.games == 4 and outcome.state.pairs == 2
    assert outcome.forfeits == {}
    assert seats.joined == 1 and client.error is None


# ------------------------------------------------------------------------- transports


def ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as s:
            s.bind(("::1", 0))
    except OSError:
        return False
    return True


@pytest.mark.skipif(not ipv6_loopback(), reason="cannot bind the IPv6 loopback address ::1")
async def test_ipv6_loopback(tmp_path: Path) -> None:
    assert parse_address("[::1]:0") == ("::1", 0)
    outcomes, seats, clients = await play_with_remote(
        tmp_path, [random_bot(1), remote("far")], {"far": random_command(2)}, games=1,
        address=("::1", 0),
    )
    check_outcomes(outcomes)
    assert seats.addresses[0][0] == "::1"
    assert clients["far"].error is None


def tls_files(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A CA and a certificate for 127.0.0.1 it signed: (ca, cert chain, key)."""
    import trustme  # in the test extra: the TLS test fails without it

    ca = trustme.CA()
    cert = ca.issue_cert("127.0.0.1", "localhost")
    paths = tmp_path / "ca.pem", tmp_path / "cert.pem", tmp_path / "key.pem"
    ca.cert_pem.write_to_path(str(paths[0]))
    cert.private_key_and_cert_chain_pem.write_to_path(str(paths[1]))
    cert.private_key_pem.write_to_path(str(paths[2]))
    return paths


def remote_log(caplog: pytest.LogCaptureFixture) -> str:
    return "\n".join(r.getMessage() for r in caplog.records if r.name == "referee.shell.remote")


async def test_tls_round_trip(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="referee.shell.remote")
    ca, cert, key = tls_files(tmp_path)
    client = Client()
    plain = Client()
    with trio.fail_after(30):
        async with (
            trio.open_nursery() as nursery,
            open_remote_seats(["far"], LOOPBACK, join_timeout_s=10,
                              tls=server_tls_context(cert, key)) as seats,
        ):
            # A client that does not speak TLS is refused before it gets anywhere.
            await plain.run(seats, "far", random_command(2))
            nursery.start_soon(functools.partial(
                client.run, seats, "far", random_command(2), tls=client_tls_context(ca)
            ))
            outcomes = await play_far(tmp_path, seats, 2)
    check_outcomes(outcomes)
    assert client.error is None
    # Both sides say what went wrong, and what likely caused it.
    assert plain.error is not None
    assert "closed the connection before answering; likely it serves TLS (connect with" \
        " --tls)" in str(plain.error)
    assert "failed before it joined: SSLError: " in remote_log(caplog)
    assert "the peer does not speak TLS: is the bot connecting without --tls?" \
        in remote_log(caplog)
    assert seats.joined == 1


async def test_tls_client_of_a_plain_referee(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="referee.shell.remote")
    ca, _, _ = tls_files(tmp_path)
    client = Client()
    async with open_remote_seats(["far"], LOOPBACK) as seats:
        await client.run(seats, "far", random_command(2), tls=client_tls_context(ca))
    assert client.error is not None
    assert str(client.error).startswith("TLS handshake with 127.0.0.1:")
    assert "likely the referee serves plain TCP (connect without --tls)" in str(client.error)
    assert "it began a TLS handshake, but this referee serves plain TCP" in remote_log(caplog)
    assert seats.refused["protocol"] == 1


async def test_connect_explains_a_refusal_over_the_address_share(tmp_path: Path) -> None:
    """A connection over its address's share is closed without a word; ``connect``
    names the likely reasons."""
    client = Client()
    async with open_remote_seats(["far"], LOOPBACK, max_pending=2,
                                 max_pending_per_address=1) as seats:
        with socket.create_connection(seats.addresses[0]):  # silent, from 127.0.0.1 too
            with trio.fail_after(10):
                while seats.pending != 1:
                    await trio.sleep(0.01)
            await client.run(seats, "far", random_command(2))
    assert client.error is not None
    assert "closed the connection before answering" in str(client.error)
    assert "refused this address for opening too many connections (wait a few seconds," \
        " then try again)" in str(client.error)
    assert seats.refused["busy"] == 1 and seats.joined == 0


# ------------------------------------------------------------------------- refusals


def hello_bytes(token: str | None, name: str = "intruder") -> bytes:
    return pack_message(BotHello(name=name, token=token))


def exchange(address: tuple[str, int], data: bytes, timeout: float = 3.0) -> tuple[bytes, float]:
    """Send ``data`` on a new connection and read until the referee closes it: (what
    it sent, how long it took to close)."""
    with socket.create_connection(address, timeout=timeout) as sock:
        start = time.monotonic()
        sock.sendall(data)
        received = b""
        try:
            while chunk := sock.recv(65536):
                received += chunk
        except ConnectionResetError:
            pass
        return received, time.monotonic() - start


def refusal(received: bytes) -> str:
    message = unpack_message(received)
    assert isinstance(message, Error), message
    assert message.reason == "protocol"
    return message.message


async def test_connect_command_exits_non_zero_on_a_wrong_token(tmp_path: Path) -> None:
    async with open_remote_seats(["far"], LOOPBACK) as seats:
        host, port = seats.addresses[0]
        result = await trio.run_process(
            [str(CLI), "connect", f"{host}:{port}", "--token", "not-the-token", "--",
             "python", str(RANDOM_BOT)],
            capture_stdout=True, capture_stderr=True, check=False,
        )
    err = result.stderr.decode()
    assert result.returncode == 1, err
    assert "refused the bot: unknown token" in err
    assert "Traceback" not in err
    assert seats.refused["unknown_token"] == 1


def test_connect_command_cannot_reach_a_referee(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code = main(["connect", f"127.0.0.1:{port}", "--token", "t", "--", "python",
                 str(RANDOM_BOT)])
    assert code == 1
    assert f"cannot connect to 127.0.0.1:{port}: Connection refused" in capsys.readouterr().err


GATED_BOT = """\
import os, random, sys, time
from taki_protocol import run_bot

gate, waiting = sys.argv[1], sys.argv[2]
rng = random.Random(5)

def choose(view, legal):
    if not os.path.exists(gate):
        open(waiting, "w").close()
        while not os.path.exists(gate):
            time.sleep(0.01)
    return rng.randrange(len(legal)), True

run_bot(choose, name="gated")
"""


def wait_for(check: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def burst(address: tuple[str, int], count: int) -> tuple[int, int]:
    """Open ``count`` connections at once; (closed by the referee within 0.5 s, still
    open then)."""
    socks = []
    try:
        for _ in range(count):
            sock = socket.create_connection(address, timeout=2)
            sock.setblocking(False)
            socks.append(sock)
        selector = selectors.DefaultSelector()
        for sock in socks:
            selector.register(sock, selectors.EVENT_READ)
        closed: set[socket.socket] = set()
        deadline = time.monotonic() + 0.5
        while len(closed) < count and (left := deadline - time.monotonic()) > 0:
            for key, _ in selector.select(left):
                sock = key.fileobj
                assert isinstance(sock, socket.socket)
                try:
                    data = sock.recv(1024)
                except ConnectionResetError:
                    data = b""
                assert data == b"", "the referee sent something before any hello"
                closed.add(sock)
                selector.unregister(sock)
        selector.close()
        return len(closed), count - len(closed)
    finally:
        for sock in socks:
            sock.close()


def slowloris(
    address: tuple[str, int], result: dict[str, float], connected: threading.Event
) -> None:
    """Send a bot_hello one byte every 0.3 s: never complete within 2 s. ``connected`` is
    set once the connection is in the referee's accept queue."""
    data = hello_bytes("x" * 40)
    with socket.create_connection(address, timeout=5) as sock:
        start = time.monotonic()
        connected.set()
        try:
            for byte in data:
                sock.sendall(bytes([byte]))
                time.sleep(0.3)
        except OSError:
            pass
        try:
            while sock.recv(4096):
                pass
        except OSError:
            pass
        result["closed_after"] = time.monotonic() - start


class RefereeCommand:
    """``taki-referee match`` of a local random bot against the remote seat ``far``,
    as a command with its stderr in a file, and the ``taki-referee connect`` commands
    that play the seat."""

    def __init__(self, tmp_path: Path) -> None:
        self.stderr_path = tmp_path / "referee.err"
        self._stderr = self.stderr_path.open("wb")
        tokens = tmp_path / "tokens"
        self.process = subprocess.Popen(
            [str(CLI), "match", f"python {RANDOM_BOT} 1", "far=remote", "--games", "2",
             # The remote bot holds its first request, a decision or a reaction, until
             # the test opens the gate; the seed fixes the deal.
             "--move-ms", "30000", "--reaction-ms", "30000", "--seed", "0",
             "--listen", "127.0.0.1:0", "--tokens", str(tokens),
             "--join-timeout", "60", "--replay-dir", str(tmp_path / "replays"),
             "--log-dir", str(tmp_path / "logs"), "--json"],
            stdout=subprocess.PIPE, stderr=self._stderr, cwd=tmp_path,
        )
        self.clients: list[subprocess.Popen[bytes]] = []
        # Generous waits: starting a command can take seconds on a loaded machine.
        wait_for(tokens.exists, 60, "the tokens file")
        wait_for(lambda: "listen on" in self.log(), 60, "the listening address")
        port = int(self.log().split("listen on 127.0.0.1:")[1].split()[0])
        self.address = ("127.0.0.1", port)
        self.token = tokens.read_text().split()[1]
        self.memory = psutil.Process(self.process.pid).memory_info

    def log(self) -> str:
        return self.stderr_path.read_text()

    def connect(self, *bot: str) -> subprocess.Popen[bytes]:
        """``taki-referee connect`` with the seat's token, for the bot command ``bot``."""
        client = subprocess.Popen(
            [str(CLI), "connect", "{}:{}".format(*self.address), "--token", self.token,
             "--", *bot],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )
        self.clients.append(client)
        return client

    def running(self) -> bool:
        return self.process.poll() is None and all(c.poll() is None for c in self.clients)

    def games(self) -> list[dict[str, Any]]:
        """Wait for the match to end: its two games, each checked (no forfeit, a replay
        that verifies), once the referee and the clients have exited with status 0."""
        out, _ = self.process.communicate(timeout=60)
        errors = [client.communicate(timeout=10)[1].decode() for client in self.clients]
        assert self.process.returncode == 0, self.log()
        for client, error in zip(self.clients, errors, strict=True):
            assert client.returncode == 0, error
        games: list[dict[str, Any]] = strict_json(out)["games"]
        assert len(games) == 2
        for game in games:
            assert all(p["forfeit"] is None for p in game["players"]), game
            verify(Replay.load(Path(game["replay"])))
        return games

    def kill(self) -> None:
        for proc in (self.process, *self.clients):
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        self._stderr.close()


@contextlib.contextmanager
def referee_command(tmp_path: Path) -> Iterator[RefereeCommand]:
    """A :class:`RefereeCommand`, killed with its clients on exit if they still run."""
    run = None
    try:
        run = RefereeCommand(tmp_path)
        yield run
    finally:
        if run is not None:
            run.kill()


def test_hostile_peers_are_refused_while_a_game_goes_on(tmp_path: Path) -> None:
    """The referee as a command, a remote bot through ``taki-referee connect`` that holds
    the game at its first decision until the attacks are over."""
    gate, waiting = tmp_path / "gate", tmp_path / "waiting"
    (tmp_path / "gated_bot.py").write_text(GATED_BOT)
    with referee_command(tmp_path) as run:
        address, token = run.address, run.token
        run.connect("python", str(tmp_path / "gated_bot.py"), str(gate), str(waiting))
        wait_for(waiting.exists, 60, "the remote bot's first decision")
        before = run.memory().rss

        # No token, a wrong token, the right token while its bot is connected.
        assert "no token" in refusal(exchange(address, hello_bytes(None))[0])
        assert refusal(exchange(address, hello_bytes("guess"))[0]) == "unknown token"
        assert "already connected" in refusal(exchange(address, hello_bytes(token))[0])
        # A first message over 4 KiB is dropped as soon as a header says so, or as
        # soon as 4 KiB have arrived.
        big = msgpack.packb({"type": "bot_hello", "protocol": 1, "name": "x" * 5000})
        received, took = exchange(address, big)
        assert "string of 5000 bytes, over the maximum message size of 4096" in refusal(received)
        assert took < 1.5  # well before the 2 s pre-auth timeout
        padded = msgpack.packb({"type": "bot_hello", "protocol": 1, "name": "x",
                                "pad": ["0123456789"] * 500})
        received, took = exchange(address, padded)
        assert "exceeds the maximum size of 4096" in refusal(received)
        assert took < 1.5
        # Something that is not a bot_hello at all.
        assert "bot_hello" in refusal(exchange(address, pack_message(Error(
            reason="crash", message="hi")))[0])
        # A peer that trickles its hello is cut off at 2 s, while bursts come and go.
        slow: dict[str, float] = {}
        connected = threading.Event()
        thread = threading.Thread(target=slowloris, args=(address, slow, connected))
        thread.start()
        # Queued ahead of the bursts, so the rate limit cannot be what closes it.
        assert connected.wait(10)
        closed_1, open_1 = burst(address, 200)
        closed_2, open_2 = burst(address, 200)
        thread.join(10)
        assert 1.8 <= slow["closed_after"] < 3.5, slow
        # Most of each burst is over the rate limit and closed at once.
        assert closed_1 >= 150 and closed_2 >= 150, (closed_1, open_1, closed_2, open_2)
        time.sleep(0.5)
        after = run.memory().rss
        growth = after - before
        print(f"referee RSS before the attacks {before / 2**20:.1f} MiB, after"
              f" {after / 2**20:.1f} MiB, growth {growth / 2**10:.0f} KiB;"
              f" bursts closed at once {closed_1}/200, {closed_2}/200")
        assert growth < 4 * 2**20
        assert run.running()  # the game goes on

        gate.touch()
        run.games()
    log = run.log()
    for expected in ("unknown token", "already connected", "no token",
                     "over the rate limit", "no bot_hello within 2 s", "joined from"):
        assert expected in log, expected


LOOPBACK_NETWORK = pytest.mark.skipif(
    sys.platform != "linux", reason="needs all of 127/8 on the loopback interface (Linux)"
)


@LOOPBACK_NETWORK
async def test_room_is_made_for_an_address_that_holds_fewer() -> None:
    """With every place taken, a new connection from an address that holds fewer than
    another takes the place of that address's oldest connection; one from an address
    over its share is closed."""

    async def connect_from(source: str) -> trio.socket.SocketType:
        sock = trio.socket.socket()
        await sock.bind((source, 0))
        await sock.connect(seats.addresses[0])
        return sock

    async def settled(pending: int, **refused: int) -> None:
        with trio.fail_after(10):
            while seats.pending != pending or any(
                seats.refused[kind] != count for kind, count in refused.items()
            ):
                await trio.sleep(0.01)

    async def closed(sock: trio.socket.SocketType) -> bool:
        with trio.move_on_after(5):
            try:
                return await sock.recv(1) == b""
            except ConnectionResetError:
                return True
        return False

    async with open_remote_seats(["far"], LOOPBACK, preauth_timeout_s=60, max_pending=4,
                                 max_pending_per_address=2) as seats:
        a1, a2, b1, b2 = [await connect_from(s) for s in ("127.0.0.2",) * 2 + ("127.0.0.3",) * 2]
        await settled(4)
        a3 = await connect_from("127.0.0.2")  # over its address's share
        await settled(4, busy=1)
        assert await closed(a3)
        c1 = await connect_from("127.0.0.4")  # .2 and .3 hold two each: .2's oldest goes
        await settled(4, busy=1, dropped=1)
        assert await closed(a1)
        c2 = await connect_from("127.0.0.4")  # .3 holds two, .4 one: .3's oldest goes
        await settled(4, busy=1, dropped=2)
        assert await closed(b1)
        d1 = await connect_from("127.0.0.5")  # .4 holds the most now
        await settled(4, busy=1, dropped=3)
        assert await closed(c1)
        e1 = await connect_from("127.0.0.6")  # four hold one each, .6 none: .2's goes
        await settled(4, busy=1, dropped=4)
        assert await closed(a2)
        e2 = await connect_from("127.0.0.6")  # .6 holds as many as any other: refused
        await settled(4, busy=2, dropped=4)
        assert await closed(e2)
        assert seats.pending == 4 and seats.refused["timeout"] == 0
        for sock in (a2, a3, b1, b2, c1, c2, d1, e1, e2, a1):
            sock.close()


def hold_pending(
    address: tuple[str, int], sources: Sequence[str], per_source: int,
    stop: threading.Event, stats: collections.Counter[str],
) -> None:
    """From each address of ``sources``, keep ``per_source`` silent connections to the
    referee, opening one more (at most every 0.1 s per address) whenever one is closed,
    until ``stop`` is set. Counts connections opened and closed by the referee."""
    selector = selectors.DefaultSelector()
    held: dict[str, list[socket.socket]] = {source: [] for source in sources}
    next_open = dict.fromkeys(sources, 0.0)
    try:
        while not stop.is_set():
            now = time.monotonic()
            for source in sources:
                if len(held[source]) < per_source and now >= next_open[source]:
                    next_open[source] = now + 0.1
                    try:
                        sock = socket.create_connection(address, 2, (source, 0))
                    except OSError:
                        stats["failed"] += 1
                        continue
                    sock.setblocking(False)
                    selector.register(sock, selectors.EVENT_READ, source)
                    held[source].append(sock)
                    stats["opened"] += 1
            for key, _ in selector.select(0.02):
                sock = key.fileobj
                assert isinstance(sock, socket.socket)
                with contextlib.suppress(OSError):
                    sock.recv(1024)  # the end, or an error message first (a timeout)
                selector.unregister(sock)
                sock.close()
                held[key.data].remove(sock)
                stats["closed"] += 1
    finally:
        for socks in held.values():
            for sock in socks:
                sock.close()
        selector.close()


@pytest.mark.slow  # a flood of connections from twelve threads, against a deadline
@LOOPBACK_NETWORK
def test_a_few_addresses_cannot_lock_a_bot_out(tmp_path: Path) -> None:
    """Silent connections from other addresses (Linux routes all of 127/8 to the
    loopback interface) keep coming: first 20 at a time from each of four addresses,
    more than one address may have authenticating; then from eight more, more than all
    may have. The seat's bot connects from an address of its own all the same: it joins
    and plays, and the referee's memory and log stay small."""
    gate, waiting = tmp_path / "gate", tmp_path / "waiting"
    (tmp_path / "gated_bot.py").write_text(GATED_BOT)
    stats: collections.Counter[str] = collections.Counter()
    stop = threading.Event()
    with referee_command(tmp_path) as run:
        attacks = [
            threading.Thread(target=hold_pending, args=(
                run.address, [f"127.0.0.{i}" for i in sources], per_source, stop, stats))
            for sources, per_source in ((range(2, 6), 20),
                                        (range(6, 14), MAX_PENDING_PER_ADDRESS + 2))
        ]
        try:
            attacks[0].start()
            wait_for(lambda: "from its address are authenticating already" in run.log(), 60,
                     "the first addresses to be refused over their share")
            attacks[1].start()
            wait_for(lambda: "to make room" in run.log(), 60, "the room to run out")
            before = run.memory().rss
            run.connect("python", str(tmp_path / "gated_bot.py"), str(gate), str(waiting))
            wait_for(waiting.exists, 60, "the remote bot's first decision")
            time.sleep(2 * PREAUTH_TIMEOUT_S)  # the attack goes on while the bot plays
            after = run.memory().rss
        finally:
            stop.set()
            for attack in attacks:
                attack.join(10)
        assert run.running()
        gate.touch()
        run.games()
    log = run.log()
    growth = after - before
    lines = log.count("\n")
    print(f"referee RSS before the bot joined {before / 2**20:.1f} MiB, after"
          f" {after / 2**20:.1f} MiB, growth {growth / 2**10:.0f} KiB; silent connections"
          f" opened {stats['opened']}, closed by the referee {stats['closed']};"
          f" {lines} log lines")
    assert growth < 4 * 2**20
    assert stats["failed"] == 0
    assert "joined from 127.0.0.1:" in log
    # The referee refused or dropped many connections, and said so in a few lines.
    assert stats["closed"] > 300
    assert lines < stats["closed"] / 4, log


# ------------------------------------------------------------------------- parts


def test_rate_limiter() -> None:
    now = [0.0]
    limiter = RateLimiter(2.0, 3, max_tracked=8, clock=lambda: now[0])
    assert [limiter.allow("10.0.0.1") for _ in range(5)] == [True, True, True, False, False]
    assert limiter.allow("10.0.0.2")  # another address has its own bucket
    now[0] += 0.5  # one attempt more per half second
    assert limiter.allow("10.0.0.1") and not limiter.allow("10.0.0.1")
    # IPv6 addresses share their /64; an IPv4-mapped address is its IPv4 address.
    assert RateLimiter.key("2001:db8::1") == RateLimiter.key("2001:db8::ffff") == "2001:db8::/64"
    assert RateLimiter.key("::ffff:10.0.0.1") == "10.0.0.1"
    for i in range(100):  # many addresses: the table stays bounded
        limiter.allow(f"10.1.0.{i}")
    assert len(limiter) <= 8


def test_tokens_are_long_hex_and_never_read_as_an_option() -> None:
    # A token that began with "-" was taken for an option by `connect --token TOKEN`.
    seats = RemoteSeats([f"bot{i}" for i in range(200)], join_timeout_s=1)
    for token in seats.tokens.values():
        assert len(token) == 64 and all(c in "0123456789abcdef" for c in token)
    assert len(set(seats.tokens.values())) == 200


def test_tokens_file_is_private_and_replaced_whole(tmp_path: Path) -> None:
    path = tmp_path / "tokens"
    path.write_text("old\n")
    os.chmod(path, 0o644)
    write_tokens(path, {"a": "t1", "b": "t2"})
    assert path.read_text() == "a t1\nb t2\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["tokens"]
    with pytest.raises(RemoteSetupError, match="cannot write the tokens file"):
        write_tokens(tmp_path / "missing" / "tokens", {"a": "t"})


def test_remote_bot_settings(tmp_path: Path) -> None:
    spec = parse_bot_arg("far=remote", 0)
    assert spec.remote and spec.command is None and spec.display == "remote"
    with pytest.raises(SettingsError, match="needs a name"):
        parse_bot_arg("remote", 0)
    league = tmp_path / "league.toml"
    base = '[[bots]]\nname = "a"\ncommand = "python a.py"\n\n[[bots]]\nname = "b"\n'
    league.write_text(base + 'remote = true\ncommand = "x"\n')
    with pytest.raises(SettingsError, match=r"league.toml:8: \[\[bots\]\] #2 command: a remote"):
        load_league(league)
    league.write_text(base + 'remote = "yes"\n')
    with pytest.raises(SettingsError, match="remote: must be true or false"):
        load_league(league)
    league.write_text('[league]\nexecutor = "dask://h:1"\n\n' + base + "remote = true\n")
    with pytest.raises(SettingsError, match=r'remote bots \(b\) .* need the "local" executor'):
        load_league(league)


def test_command_line_needs_listen_and_tokens_for_remote_seats(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bot = f"python {RANDOM_BOT}"
    assert main(["match", bot, "far=remote", "--log-dir", str(tmp_path)]) == 2
    assert "--listen HOST:PORT" in capsys.readouterr().err
    assert main(["match", bot, bot, "--listen", "0", "--log-dir", str(tmp_path)]) == 2
    assert "only for remote bots" in capsys.readouterr().err
    assert main(["match", bot, "far=remote", "--listen", "nowhere", "--tokens",
                 str(tmp_path / "t"), "--log-dir", str(tmp_path)]) == 2
    assert "bad address" in capsys.readouterr().err
