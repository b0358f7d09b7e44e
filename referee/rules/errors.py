"""Errors of the rules core."""

from __future__ import annotations


class RulesError(Exception):
    """Base class of the rules core's errors."""


class IllegalActionError(RulesError, ValueError):
    """An action that is not in the legal list for that seat; the state is unchanged."""


class GameOverError(RulesError):
    """An action or forfeit on a game that has already ended."""
