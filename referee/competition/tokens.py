"""Participants' and the organizer's tokens: 256 random bits, written as 64 hexadecimal
digits, shown once and stored as their SHA-256.

A plain hash is enough here: a slow one (scrypt, PBKDF2) protects guessable passwords,
and a 256-bit random token cannot be guessed, so its hash cannot be reversed either. A
plain hash also lets the store find a token's participant by an index. The comparison
that follows is made in constant time all the same.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from typing import Final

__all__ = ["TOKEN_PATTERN", "digest", "digests_match", "new_token"]

#: What a token looks like (anything else is refused before it is hashed).
TOKEN_PATTERN: Final = re.compile(r"^[0-9a-f]{64}$")


def new_token() -> str:
    return secrets.token_hex(32)


def digest(token: str) -> str:
    """The SHA-256 of a token, in hexadecimal: what the database keeps."""
    return hashlib.sha256(token.encode("ascii")).hexdigest()


def digests_match(token: str, stored: str) -> bool:
    """Whether ``token`` is the one whose digest is ``stored`` (constant time)."""
    if TOKEN_PATTERN.match(token) is None:
        return False
    return hmac.compare_digest(digest(token), stored)
