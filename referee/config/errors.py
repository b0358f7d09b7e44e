"""The error of a setting the referee cannot use."""

from __future__ import annotations

from referee.core import UserError


class SettingsError(UserError):
    """A setting that the referee cannot use; the message says where and why."""
