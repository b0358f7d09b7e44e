"""An upload's idempotency key: a client makes one at random and sends it again with
each retry of the same upload, so that a retry returns the first upload's submission
instead of making another."""

from __future__ import annotations

import re
import secrets
from typing import Final

from referee.competition.errors import Refusal, Refused

__all__ = ["UPLOAD_KEY", "check_upload_key", "new_upload_key"]

#: What an upload's idempotency key may be: 16 to 128 letters, digits, '-' and '_'.
UPLOAD_KEY: Final = re.compile(r"[A-Za-z0-9_-]{16,128}")


def new_upload_key() -> str:
    """A fresh random idempotency key for one upload."""
    return secrets.token_urlsafe(24)


def check_upload_key(key: str | None, what: str = "an upload's key") -> None:
    """Refused (a bad upload) unless ``key`` is None or a well-formed key; ``what`` names
    where the key came from in the message."""
    if key is not None and UPLOAD_KEY.fullmatch(key) is None:
        raise Refused(Refusal.BAD_UPLOAD, f"{what} must be 16 to 128 letters, digits,"
                      " '-' and '_'")
