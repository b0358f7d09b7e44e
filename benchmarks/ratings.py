"""How well each rating model recovers known strengths from multiplayer leagues.

Each replication draws every bot's true Elo, plays a league of duplicate blocks (a table
of ``seats`` bots drawn at random, ranked ``seats`` times) from a generator, rates it with
each model of ``referee.ratings.leaderboard.rate`` and compares: Spearman rank correlation
with the truth, RMS Elo error after centring both on their mean, and how often the 95%
interval holds the true rating.  Two generators, so that neither model is favoured by
the way the rankings are made:

* ``plackett-luce``: a bot's score is its strength plus Gumbel noise; places by score.
* ``thurstone``: the same with normal noise (standard deviation 1.702 / sqrt 2 natural
  units, so that heads-up the win probability is close to the logistic Elo curve).

openskill's Plackett-Luce model (a sequential Bayesian update) is shown as well when the
package is installed; only its rank correlation, since its ratings are not on the Elo scale.

Run from the repository root: ``python -m benchmarks.ratings [--replications 100]``;
``--timing`` times one fit and its bootstrap instead.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import time
from collections.abc import Callable, Sequence

from referee.ratings.elo import ELO_PER_NAT, RatedGame
from referee.ratings.leaderboard import RATING_MODELS, RatingReport, rate

#: Noise of one bot's score in one game, from its strength (natural-log units).
Noise = Callable[[random.Random], float]

THURSTONE_SD = 1.702 / math.sqrt(2.0)
GENERATORS: dict[str, Noise] = {
    "plackett-luce": lambda rng: -math.log(-math.log(rng.random() or 1e-300)),
    "thurstone": lambda rng: rng.gauss(0.0, THURSTONE_SD),
}


def true_elos(bots: int, spread: float, rng: random.Random) -> dict[str, float]:
    """Elo of ``bots`` bots, normal with standard deviation ``spread``, centred on 1500."""
    elos = [rng.gauss(0.0, spread) for _ in range(bots)]
    mean = statistics.fmean(elos)
    return {f"bot{i:02d}": 1500.0 + e - mean for i, e in enumerate(elos)}


def league(elos: dict[str, float], blocks: int, seats: int, noise: Noise,
           rng: random.Random) -> list[RatedGame]:
    """``blocks`` duplicate blocks of ``seats`` games each, every block on a random table."""
    names = sorted(elos)
    games = []
    for block in range(blocks):
        players = rng.sample(names, seats)
        for _ in range(seats):
            score = {p: elos[p] / ELO_PER_NAT + noise(rng) for p in players}
            order = sorted(players, key=score.__getitem__, reverse=True)
            games.append(RatedGame({p: k + 1 for k, p in enumerate(order)}, block=block))
    return games


def ranks(values: Sequence[float]) -> list[float]:
    """Ranks from 1, ties sharing their mean rank."""
    order = sorted(range(len(values)), key=values.__getitem__)
    out = [0.0] * len(values)
    k = 0
    while k < len(order):
        end = k
        while end + 1 < len(order) and values[order[end + 1]] == values[order[k]]:
            end += 1
        for m in range(k, end + 1):
            out[order[m]] = (k + end) / 2.0 + 1.0
        k = end + 1
    return out


def spearman(a: Sequence[float], b: Sequence[float]) -> float:
    return statistics.correlation(ranks(a), ranks(b))


def rms_centred(truth: Sequence[float], estimate: Sequence[float]) -> float:
    shift = statistics.fmean(estimate) - statistics.fmean(truth)
    return math.sqrt(statistics.fmean((e - shift - t) ** 2 for t, e in
                                      zip(truth, estimate, strict=True)))


def openskill_ratings(games: Sequence[RatedGame]) -> dict[str, float] | None:
    """Each bot's mu after openskill's Plackett-Luce updates, game by game; None when
    openskill is not installed."""
    try:
        from openskill.models import PlackettLuce
    except ImportError:
        return None
    model = PlackettLuce()
    rating = {}
    for game in games:
        names = list(game.places)
        teams = [[rating.get(n) or model.rating(name=n)] for n in names]
        updated = model.rate(teams, ranks=[float(game.places[n]) for n in names])
        for name, team in zip(names, updated, strict=True):
            rating[name] = team[0]
    return {name: r.mu for name, r in rating.items()}


class Tally:
    """The figures of one model over the replications."""

    def __init__(self) -> None:
        self.rho: list[float] = []
        self.rms: list[float] = []
        self.covered = 0
        self.intervals = 0
        self.width: list[float] = []
        self.seconds = 0.0

    def add(self, elos: dict[str, float], report: RatingReport) -> None:
        names = sorted(elos)
        truth = [elos[n] for n in names]
        estimate = [report.bot(n).elo for n in names]
        self.rho.append(spearman(truth, estimate))
        self.rms.append(rms_centred(truth, estimate))
        for name in names:
            ci = report.bot(name).ci95
            if ci is not None:
                self.intervals += 1
                self.covered += ci[0] <= elos[name] <= ci[1]
                self.width.append(ci[1] - ci[0])

    def row(self, label: str) -> str:
        n = len(self.rms)
        se = statistics.stdev(self.rms) / math.sqrt(n) if n > 1 else math.nan
        cover = f"{self.covered / self.intervals:9.1%}" if self.intervals else f"{'-':>9}"
        width = f"{statistics.fmean(self.width):9.0f}" if self.width else f"{'-':>9}"
        rms = f"{statistics.fmean(self.rms):6.1f} ±{se:4.1f}" if self.rms else f"{'-':>12}"
        return (f"{label:<36}{statistics.fmean(self.rho):9.3f}{rms:>14}{cover}{width}"
                f"{self.seconds:8.1f}")


def paired(pl: Sequence[float], bt: Sequence[float]) -> str:
    """The paired difference of RMS errors over the same leagues."""
    excess = [p - b for p, b in zip(pl, bt, strict=True)]
    se = statistics.stdev(excess) / math.sqrt(len(excess)) if len(excess) > 1 else math.nan
    lower = sum(e < 0 for e in excess)
    return (f"{'':<4}RMS Elo, plackett-luce minus bradley-terry: {statistics.fmean(excess):+.1f}"
            f" ±{se:.1f}; plackett-luce's lower in {lower} of {len(excess)} leagues")


def compare(args: argparse.Namespace) -> None:
    print(f"{args.bots} bots, true Elo normal (sd {args.spread:g}), {args.blocks} blocks per"
          f" league (a table ranked once per seat), {args.replications} leagues per case,"
          f" {args.resamples} bootstrap resamples, seed {args.seed}")
    print(f"{'generator / seats / model':<36}{'Spearman':>9}{'RMS Elo':>14}{'cover95':>9}"
          f"{'CI width':>9}{'s':>8}")
    for generator in args.generators:
        for seats in args.seats:
            rng = random.Random(f"{args.seed}/{generator}/{seats}")
            tallies = {model: Tally() for model in RATING_MODELS}
            reference = Tally()
            for _ in range(args.replications):
                elos = true_elos(args.bots, args.spread, rng)
                games = league(elos, args.blocks, seats, GENERATORS[generator], rng)
                for model, tally in tallies.items():
                    start = time.perf_counter()
                    report = rate(games, resamples=args.resamples, seed=args.seed, model=model)
                    tally.seconds += time.perf_counter() - start
                    tally.add(elos, report)
                mu = openskill_ratings(games)
                if mu is not None:
                    names = sorted(elos)
                    reference.rho.append(spearman([elos[n] for n in names],
                                                  [mu.get(n, 0.0) for n in names]))
            for model, tally in tallies.items():
                print(tally.row(f"{generator} / {seats} / {model}"))
            if reference.rho:
                print(f"{f'{generator} / {seats} / openskill':<36}"
                      f"{statistics.fmean(reference.rho):9.3f}")
            print(paired(tallies["plackett-luce"].rms, tallies["bradley-terry"].rms))


def timing(args: argparse.Namespace) -> None:
    rng = random.Random(args.seed)
    elos = true_elos(args.bots, args.spread, rng)
    for seats in args.seats:
        games = league(elos, args.blocks, seats, GENERATORS[args.generators[0]], rng)
        for model in RATING_MODELS:
            start = time.perf_counter()
            rate(games, resamples=0, model=model)
            fit = time.perf_counter() - start
            start = time.perf_counter()
            report = rate(games, resamples=args.resamples, seed=args.seed, model=model)
            total = time.perf_counter() - start
            print(f"{model}: {args.bots} bots, {len(games)} games of {seats}: "
                  f"fit {fit * 1000:.1f} ms, fit + {report.resamples} resamples {total:.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bots", type=int, default=8, help="bots (default 8)")
    parser.add_argument("--seats", type=int, nargs="+", default=[4, 6],
                        help="players per table (default 4 6)")
    parser.add_argument("--blocks", type=int, default=40,
                        help="duplicate blocks per league (default 40)")
    parser.add_argument("--spread", type=float, default=150.0,
                        help="standard deviation of the true Elo (default 150)")
    parser.add_argument("--replications", type=int, default=100,
                        help="leagues per generator and table size (default 100)")
    parser.add_argument("--resamples", type=int, default=100,
                        help="bootstrap resamples (default 100)")
    parser.add_argument("--generators", nargs="+", choices=sorted(GENERATORS),
                        default=sorted(GENERATORS), help="how the rankings are drawn")
    parser.add_argument("--seed", type=int, default=0, help="seed (default 0)")
    parser.add_argument("--timing", action="store_true",
                        help="time one fit and its bootstrap per model instead")
    args = parser.parse_args()
    for seats in args.seats:
        if not 2 <= seats <= args.bots:
            parser.error(f"--seats must be between 2 and --bots ({args.bots}), got {seats}")
    if args.replications < 1 or args.blocks < 1:
        parser.error("--replications and --blocks must be at least 1")
    (timing if args.timing else compare)(args)


if __name__ == "__main__":
    main()
