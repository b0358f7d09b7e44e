"""A policy entered as a bot: here a random choice among the unmasked actions, where a
trained network would go (docs/rl.md).

Usage:
    taki-referee match "python examples/rl/masked_random_bot.py" \
        "python sample_bots/greedy_bot.py"
"""

import numpy as np
from taki_protocol import run_bot

from referee.rl import as_choose

rng = np.random.default_rng(0)


def policy(observation: np.ndarray, mask: np.ndarray) -> int:
    return int(rng.choice(np.flatnonzero(mask)))


if __name__ == "__main__":
    run_bot(as_choose(policy), name="masked-random")
