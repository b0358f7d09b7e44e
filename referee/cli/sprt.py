"""``taki-referee sprt NEW OLD``: a regression gate for CI."""

from __future__ import annotations

import argparse
import math
import sys

import attrs
from rich.console import Console

from referee.cli.match import checked_settings, master_seed, require_deal, require_directories
from referee.cli.output import FaultTally, describe_counts, print_json, progress
from referee.cli.remote import remote_seats
from referee.cli.sandboxing import sandboxed_bots
from referee.config import available_cpus, parse_bot_arg
from referee.core import GameOutcome, TimeControl, UsageError
from referee.league import FORFEITS, game_score, require_bots, run_sprt
from referee.ratings import Sprt, SprtState
from referee.rules import Rules

#: Largest Elo difference an SPRT hypothesis may name: beyond a few thousand Elo the
#: expected score rounds to exactly 0 or 1 and the likelihood ratio is undefined.
MAX_ELO = 2000


def checked_sprt(args: argparse.Namespace) -> Sprt:
    """The test the arguments ask for; UsageError for bounds or limits out of range."""
    for flag, value in (("--elo0", args.elo0), ("--elo1", args.elo1)):
        if not -MAX_ELO <= value <= MAX_ELO:  # also refuses nan and inf
            raise UsageError(f"{flag} must be between -{MAX_ELO} and {MAX_ELO}, got {value}")
    try:
        sprt = Sprt(args.elo0, args.elo1, args.alpha, args.beta)
    except ValueError as exc:
        raise UsageError(f"bad SPRT bounds: {exc}") from None
    if args.max_games < 2:
        raise UsageError("--max-games must be at least 2 (one duplicate pair)")
    if args.concurrency is not None and args.concurrency < 1:
        raise UsageError("--concurrency must be at least 1")
    if args.max_forfeits is not None and args.max_forfeits < 0:
        raise UsageError("--max-forfeits must be at least 0")
    return sprt


async def run_sprt_command(args: argparse.Namespace, rules: Rules, time: TimeControl) -> int:
    new = parse_bot_arg(args.new, 0, "NEW")
    old = parse_bot_arg(args.old, 1, "OLD")
    if new.name == old.name:
        old = attrs.evolve(old, name=f"{old.name}-old")
    new, old = sandboxed_bots(args, [new, old])
    sprt = checked_sprt(args)
    settings = checked_settings(
        rules=rules, time=time, log_dir=args.log_dir,
        void_replays=args.void_replays,
        replay_dir=args.replay_dir,
        replays_lost_by=new.name if args.replays == "lost" else None,
    )
    require_deal(rules, 2)
    require_directories(("--log-dir", args.log_dir), ("--replay-dir", args.replay_dir))
    seed = master_seed(args)
    settings = attrs.evolve(settings, master_seed=seed)
    concurrency = args.concurrency or available_cpus()
    if not args.no_bot_check:
        # A baseline that cannot start would lose every game: H1 for a broken OLD.
        await require_bots([new, old], time, limit=2)
    score = GameScore(new.name)
    tally = FaultTally()
    current: list[SprtState] = [sprt.start()]

    def status() -> str:
        return f"{score.describe()}; {describe_state(current[0])}"

    def finished(outcome: GameOutcome) -> None:
        score.add(outcome)
        tally.add(outcome)
        advance()

    def interrupted() -> None:
        """On Ctrl-C or SIGTERM: where the test stood."""
        err = Console(stderr=True, soft_wrap=True, highlight=False)
        err.print(f"partial result: {new.name} vs {old.name}: {status()}")
        tally.print()

    args.on_interrupt = interrupted
    bar = sys.stderr.isatty() and not args.json
    async with remote_seats(args, [new, old]) as seats:
        if seats is not None:
            # As with the bot check: a remote NEW or OLD that never joins would forfeit
            # every game, and the test would reach a verdict on forfeits alone.
            absent = await seats.wait_until_joined(seats.join_timeout_s)
            if absent:
                raise UsageError(
                    f"remote bot(s) {', '.join(absent)} did not join within"
                    f" {seats.join_timeout_s:g} s; no game was played"
                )
        with progress(args.max_games, "sprt", terminal_bar=bar, status=status,
                      interval_s=args.progress_interval) as advance:
            outcome = await run_sprt(
                new, old, sprt, settings, max_games=args.max_games, seed=seed,
                concurrency=concurrency, on_pair=lambda state: current.__setitem__(0, state),
                on_game=finished, max_forfeits=args.max_forfeits, remote=seats,
            )
    args.on_interrupt = None
    state = outcome.state
    estimate = state.estimate()
    verdict = {"H1": "H1 accepted: NEW is stronger", "H0": "H0 accepted: NEW is not stronger",
               FORFEITS: f"stopped: {outcome.stopped}",
               }.get(outcome.status, "no decision: the game cap was reached")
    if args.json:
        print_json({
            "result": outcome.status if outcome.status != "continue" else "cap",
            "stopped": outcome.stopped,
            "score": score.to_json(),
            "games": outcome.games,
            "pairs": state.pairs,
            "pentanomial": list(state.counts),
            "llr": round(state.llr(), 4),
            "bounds": [round(sprt.lower, 4), round(sprt.upper, 4)],
            "elo": round(estimate.elo, 1),
            "ci95": [round(x, 1) for x in estimate.ci95],
            "los": round(estimate.los, 4),
            "forfeits": outcome.forfeits,
            "voided": outcome.voided,
            "seed": seed,
        })
    else:
        console = Console(soft_wrap=True)
        console.print(f"{new.name} vs {old.name}: {outcome.games} games, {state.pairs} pairs, "
                      f"pentanomial {list(state.counts)}, master seed {seed}", highlight=False)
        console.print(score.describe(), highlight=False)
        console.print(f"Elo {estimate.elo:+.1f} (95% {estimate.ci95[0]:+.1f} .. "
                      f"{estimate.ci95[1]:+.1f}), LOS {estimate.los:.1%}", highlight=False)
        console.print(f"LLR {state.llr():+.2f} in [{sprt.lower:+.2f}, {sprt.upper:+.2f}] "
                      f"(elo0={sprt.elo0:g}, elo1={sprt.elo1:g}, alpha={sprt.alpha:g}, "
                      f"beta={sprt.beta:g}): {verdict}", highlight=False)
        for bot, counts in sorted(outcome.forfeits.items()):
            console.print(f"forfeits of {bot}: {describe_counts(counts)}", highlight=False)
    tally.print()
    return outcome.exit_code


@attrs.define
class GameScore:
    """NEW's wins, losses and draws game by game, as match runners print them."""

    new: str
    wins: int = 0
    losses: int = 0
    draws: int = 0

    def add(self, outcome: GameOutcome) -> None:
        if outcome.voided:
            return
        points = game_score(outcome, self.new)
        if points == 1.0:
            self.wins += 1
        elif points == 0.0:
            self.losses += 1
        else:
            self.draws += 1

    def describe(self) -> str:
        games = self.wins + self.losses + self.draws
        share = (self.wins + 0.5 * self.draws) / games if games else 0.5
        return (f"score of {self.new}: {self.wins} - {self.losses} - {self.draws}"
                f" [{share:.3f}] {games} games")

    def to_json(self) -> dict[str, int]:
        return {"wins": self.wins, "losses": self.losses, "draws": self.draws}


def describe_state(state: SprtState) -> str:
    """Elo with its interval and the LLR with its bounds, on one line."""
    sprt = state.sprt
    estimate = state.estimate()
    low, high = estimate.ci95
    interval = "" if not (math.isfinite(low) and math.isfinite(high)) else (
        f" ({low:+.1f} .. {high:+.1f})")
    return (f"Elo {estimate.elo:+.1f}{interval}, LLR {state.llr():+.2f}"
            f" [{sprt.lower:+.2f}, {sprt.upper:+.2f}]")
