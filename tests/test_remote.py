"""Remote bots over TCP: real sockets on the loopback interface only.

Remote seats are played through the ``connect`` adapter (in this process, or as the
``taki-referee connect`` command), against the referee in this process or as the
``taki-referee match`` command. Hostile peers (no token, a wrong or reused token, an
oversized or slow first message, a burst of connections) are refused while a game goes
on, without the referee's memory growing.
"""

from __future__ import annotations

import functools
import json
import os
import selectors
import socket
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import msgpack
import psutil
import pytest
import trio
from processes import live_children
from taki_protocol import BotHello, Error, pack_message, unpack_message

from referee.cli import main
from referee.cli_match import match_games
from referee.clock import TimeControl
from referee.connect import ConnectError, client_tls_context, connect_bot
from referee.league import run_league
from referee.match import GameOutcome, MatchSettings, play_block
from referee.process import BotCommand
from referee.ratings import Sprt
from referee.remote import (
    RateLimiter,
    RemoteSeats,
    RemoteSetupError,
    open_remote_seats,
    parse_address,
    server_tls_context,
    write_tokens,
)
from referee.replay import Replay, verify
from referee.settings import BotSpec, SettingsError, load_league, parse_bot_arg
from referee.sprt_run import run_sprt
from referee.store import ResultStore

ROOT = Path(__file__).resolve().parent.parent
HOSTILE = Path(__file__).resolve().parent / "hostile_bots"
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
    *, address: tuple[str, int] = LOOPBACK, **options: Any,
) -> tuple[list[GameOutcome], RemoteSeats, dict[str, Client]]:
    """A block of ``games`` with remote seats played by ``connect`` clients."""
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
            schedule = match_games([b.name for b in bots], games, seed=3)
            outcomes = await play_block(schedule, bots, settings(tmp_path), match_name="m",
                                        remote=seats)
    return outcomes, seats, done


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
    """The same seeded bots give the same games whether a seat is local or remote."""
    local = await play_block(match_games(["random1", "far"], 2, seed=3),
                             [random_bot(1), BotSpec("far", random_command(2))],
                             settings(tmp_path / "local"), match_name="m")
    outcomes, _, _ = await play_with_remote(
        tmp_path, [random_bot(1), remote("far")], {"far": random_command(2)}, games=2
    )
    assert [o.seats for o in outcomes] == [o.seats for o in local]
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
    assert ghost.forfeit == ("timeout", "did not join within 0.5 s")
    assert ghost.place == 2 and outcome.reason == "last_standing"
    assert outcome.replay is not None
    verify(Replay.load(outcome.replay))
    assert seats.joined == 0


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
    with trio.fail_after(30):
        async with (
            trio.open_nursery() as nursery,
            open_remote_seats(["far"], LOOPBACK, join_timeout_s=10) as seats,
        ):

            async def clients() -> None:
                await first.run(seats, "far", hostile_command(script, *args))
                await second.run(seats, "far", random_command(2))

            nursery.start_soon(clients)
            outcomes = await play_block(
                match_games(["random1", "far"], 2, seed=3), [random_bot(1), remote("far")],
                settings(tmp_path, time=fast), match_name="m", remote=seats,
            )
    assert outcomes[0].seats[1].forfeit is not None
    assert outcomes[0].seats[1].forfeit[0] == reason
    check_outcomes(outcomes[1:])
    assert first.error is not None and second.error is None
    if reason == "timeout":
        assert "forfeited the bot (timeout)" in str(first.error)
    assert seats.joined == 2


async def test_league_with_a_remote_bot(tmp_path: Path) -> None:
    """Blocks that seat the remote bot take turns: it keeps one connection throughout."""
    league = tmp_path / "league.toml"
    league.write_text(f"""\
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
remote = true
""")
    config = load_league(league)
    assert config.bots[2].remote and config.bots[2].display == "remote"
    client = Client()
    with trio.fail_after(40), ResultStore(tmp_path / "r.sqlite") as store:
        async with (
            trio.open_nursery() as nursery,
            open_remote_seats(["far"], LOOPBACK, join_timeout_s=10) as seats,
        ):
            nursery.start_soon(client.run, seats, "far", random_command(3))
            played = await run_league(config, store, log_dir=tmp_path / "logs", remote=seats)
        assert played == store.game_count() == 3 * 2 * 2
        assert store.forfeit_counts() == {}
        far_games = [g for g in store.games() if any(s.bot == "far" for s in g.seats)]
        assert len(far_games) == 8
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


async def test_tls_round_trip(tmp_path: Path) -> None:
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
            outcomes = await play_block(
                match_games(["random1", "far"], 2, seed=3), [random_bot(1), remote("far")],
                settings(tmp_path), match_name="m", remote=seats,
            )
    check_outcomes(outcomes)
    assert client.error is None
    assert plain.error is not None
    assert seats.joined == 1


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


def test_hostile_peers_are_refused_while_a_game_goes_on(tmp_path: Path) -> None:
    """The referee as a command, a remote bot through ``taki-referee connect`` that holds
    the game at its first decision until the attacks are over."""
    gate, waiting = tmp_path / "gate", tmp_path / "waiting"
    (tmp_path / "gated_bot.py").write_text(GATED_BOT)
    tokens = tmp_path / "tokens"
    ref_err = (tmp_path / "referee.err").open("wb")
    referee = subprocess.Popen(
        [str(CLI), "match", f"python {RANDOM_BOT} 1", "far=remote", "--games", "2",
         "--move-ms", "30000", "--listen", "127.0.0.1:0", "--tokens", str(tokens),
         "--join-timeout", "60", "--replay-dir", str(tmp_path / "replays"),
         "--log-dir", str(tmp_path / "logs"), "--json"],
        stdout=subprocess.PIPE, stderr=ref_err, cwd=tmp_path,
    )
    client = None
    try:
        # Generous waits: starting two commands can take seconds on a loaded machine.
        wait_for(tokens.exists, 60, "the tokens file")
        stderr = tmp_path / "referee.err"
        wait_for(lambda: "listen on" in stderr.read_text(), 60, "the listening address")
        port = int(stderr.read_text().split("listen on 127.0.0.1:")[1].split()[0])
        address = ("127.0.0.1", port)
        token = tokens.read_text().split()[1]
        client = subprocess.Popen(
            [str(CLI), "connect", f"127.0.0.1:{port}", "--token", token, "--",
             "python", str(tmp_path / "gated_bot.py"), str(gate), str(waiting)],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )
        wait_for(waiting.exists, 60, "the remote bot's first decision")
        ref = psutil.Process(referee.pid)
        before = ref.memory_info().rss

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
        after = ref.memory_info().rss
        growth = after - before
        print(f"referee RSS before the attacks {before / 2**20:.1f} MiB, after"
              f" {after / 2**20:.1f} MiB, growth {growth / 2**10:.0f} KiB;"
              f" bursts closed at once {closed_1}/200, {closed_2}/200")
        assert growth < 4 * 2**20
        assert referee.poll() is None and client.poll() is None  # the game goes on

        gate.touch()
        out, _ = referee.communicate(timeout=30)
        _, client_err = client.communicate(timeout=10)
    finally:
        for proc in (referee, client):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()
        ref_err.close()
    log = (tmp_path / "referee.err").read_text()
    assert referee.returncode == 0, log
    assert client.returncode == 0, client_err.decode()
    games = json.loads(out)["games"]
    assert len(games) == 2
    for game in games:
        assert all(p["forfeit"] is None for p in game["players"]), game
        verify(Replay.load(Path(game["replay"])))
    for expected in ("unknown token", "already connected", "no token",
                     "over the rate limit", "no bot_hello within 2 s", "joined from"):
        assert expected in log, expected


# ------------------------------------------------------------------------- parts


def test_parse_address() -> None:
    assert parse_address("8000") == ("127.0.0.1", 8000)
    assert parse_address(":8000") == ("127.0.0.1", 8000)
    assert parse_address("0.0.0.0:1") == ("0.0.0.0", 1)
    assert parse_address("example.org:443") == ("example.org", 443)
    assert parse_address("[::1]:9") == ("::1", 9)
    for bad in ("", "host", "host:", "::1:80", "[::1]", "h:99999"):
        with pytest.raises(RemoteSetupError):
            parse_address(bad)


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
