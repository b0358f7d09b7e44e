"""Super Taki as a PettingZoo environment, for training bots (docs/rl.md).

``referee.rl.env(players=N, **rule_flags)`` returns an AEC environment over the pure
rules core. It needs the ``rl`` extra (``pip install -e '.[rl]'``: PettingZoo, Gymnasium,
NumPy). It imports nothing of the referee's I/O: a game here is the rules engine alone.
"""

from referee.rl.encoding import ACTION_COUNT, OBSERVATION_SIZE, action_index, encode_view
from referee.rl.environment import TakiEnv, env
from referee.rl.policy_bot import Policy, as_choose

__all__ = [
    "ACTION_COUNT", "OBSERVATION_SIZE", "Policy", "TakiEnv", "action_index", "as_choose",
    "encode_view", "env",
]
