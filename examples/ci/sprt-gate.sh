#!/usr/bin/env bash
# A CI gate for a Taki bot: is the bot at HEAD stronger than at BASE? (docs/ci.md)
#
#   sprt-gate.sh BASE [HEAD]
#
# Checks out both commits of the repository it runs in, builds the bot in each with
# $BOT_BUILD, plays them against each other with `taki-referee sprt` and leaves in $OUT:
#   sprt.json      the verdict, score, Elo, LLR and forfeits (taki-referee sprt --json)
#   summary.md     the same in words (also appended to $GITHUB_STEP_SUMMARY on GitHub)
#   lost/          replays of the games HEAD lost, as JSON and as HTML pages
#   logs/          the bots' stderr
# Exit status: sprt's own (0: HEAD is stronger; 1: it is not, or it forfeited more than
# $MAX_FORFEITS games; 3: no decision within $MAX_GAMES games; 2: a usage error).
#
# Environment:
#   BOT_RUN       the bot's command, {dir} standing for the checkout (required),
#                 e.g. "python {dir}/my_bot.py" or "{dir}/target/release/my_bot"
#   BOT_BUILD     run in each checkout before the games (default: nothing)
#   OUT           where the artifacts go (default: gate)
#   MAX_GAMES     the game cap (default 2000)
#   MAX_FORFEITS  HEAD forfeiting more games than this fails the gate (default 10)
#   SPRT_ARGS     more options for taki-referee sprt, e.g. "--elo1 5 --move-ms 200"
#   TAKI_REFEREE  the referee's command (default: taki-referee)
set -euo pipefail

base=${1:?usage: sprt-gate.sh BASE [HEAD]}
head=${2:-HEAD}
: "${BOT_RUN:?set BOT_RUN to the command of the bot, with {dir} for its checkout}"
out=${OUT:-gate}
referee=${TAKI_REFEREE:-taki-referee}

work=$(mktemp -d)
cleanup() {
    git worktree remove --force "$work/old" 2>/dev/null || true
    git worktree remove --force "$work/new" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

git worktree add --quiet --detach "$work/old" "$base"
git worktree add --quiet --detach "$work/new" "$head"
for side in old new; do
    (cd "$work/$side" && eval "${BOT_BUILD:-true}")
done

rm -rf "$out"
mkdir -p "$out/lost"
status=0
# shellcheck disable=SC2086  # SPRT_ARGS holds several options
"$referee" sprt "new=${BOT_RUN//\{dir\}/$work/new}" "old=${BOT_RUN//\{dir\}/$work/old}" \
    --max-games "${MAX_GAMES:-2000}" --max-forfeits "${MAX_FORFEITS:-10}" \
    --replay-dir "$out/lost" --log-dir "$out/logs" --json ${SPRT_ARGS:-} \
    > "$out/sprt.json" || status=$?

if [[ $status == 2 ]]; then
    exit 2  # the referee said why on stderr; there is no verdict to report
fi
python3 - "$out/sprt.json" "$base" "$head" > "$out/summary.md" <<'PY'
import json, sys
result = json.load(open(sys.argv[1]))
verdict = {"H1": "stronger: the gate passes", "H0": "not stronger: the gate fails",
           "forfeits": f"stopped: {result['stopped']}", "cap": "no decision within the game cap"}
score = result["score"]
elo, lo, hi = (f"{x:+.1f}" if x is not None else "?" for x in [result["elo"], *result["ci95"]])
print(f"## SPRT {sys.argv[3]} vs {sys.argv[2]}: {verdict[result['result']]}")
print()
print(f"- score: {score['wins']} wins, {score['losses']} losses, {score['draws']} draws"
      f" in {result['games']} games")
print(f"- Elo {elo} (95% {lo} .. {hi}), LLR {result['llr']:+.2f} in"
      f" [{result['bounds'][0]:+.2f}, {result['bounds'][1]:+.2f}]")
for bot, counts in sorted(result["forfeits"].items()):
    print(f"- forfeits of {bot}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
print(f"- master seed {result['seed']} (--seed repeats the games)")
PY
lost=("$out"/lost/*.json)
if [[ -e ${lost[0]} ]]; then
    "$referee" replay render "${lost[@]}" > /dev/null  # each page beside its replay
fi
if [[ -n ${GITHUB_STEP_SUMMARY:-} ]]; then
    cat "$out/summary.md" >> "$GITHUB_STEP_SUMMARY"
fi
cat "$out/summary.md"
exit $status
