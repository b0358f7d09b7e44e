"""A trained policy entered as a bot: the SDK's ``choose`` from a function of the
environment's observation and action mask (docs/rl.md, "A policy as a bot")."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from referee.rl.encoding import ACTION_COUNT, action_index, encode_view
from referee.rules import Action

__all__ = ["Policy", "as_choose"]

#: A policy: the observation vector and the action mask to the index of an action.
Policy = Callable[[NDArray[np.float32], NDArray[np.int8]], int]


def as_choose(policy: Policy) -> Callable[[dict[str, Any], list[dict[str, Any]]],
                                          tuple[int, bool]]:
    """``choose(view, legal)`` for ``taki_protocol.run_bot``: the request's view and
    legal actions become the observation and the mask the policy was trained on, and
    its action becomes the index of that action in ``legal``. The bot always declares
    "last card!", as the environment does."""

    def choose(view: dict[str, Any], legal: list[dict[str, Any]]) -> tuple[int, bool]:
        indices = [action_index(Action.from_wire(action)) for action in legal]
        mask = np.zeros(ACTION_COUNT, dtype=np.int8)
        mask[indices] = 1
        chosen = int(policy(encode_view(view, True), mask))
        if chosen not in indices:
            raise ValueError(f"the policy chose action {chosen}, which is masked out")
        return indices.index(chosen), True

    return choose
