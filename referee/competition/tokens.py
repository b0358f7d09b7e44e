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
import os
import re
import secrets
from pathlib import Path
from typing import Final

from referee.competition.errors import CompetitionError

__all__ = ["TOKEN_PATTERN", "digest", "digests_match", "new_token", "organizer_token"]

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


def organizer_token(path: Path) -> tuple[str, bool]:
    """The digest of the organizer's token in ``path``, created (mode 0600) with a fresh
    token when the file is missing; and whether it was created."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        token = path.read_text(encoding="ascii", errors="replace").strip()
        if TOKEN_PATTERN.match(token) is None:
            raise CompetitionError(
                f"{path}: not an organizer token (64 hexadecimal digits); remove the file"
                " and a new token is written at the next start") from None
        return digest(token), False
    except OSError as exc:
        raise CompetitionError(f"cannot write the organizer's token to {path}:"
                               f" {exc.strerror}") from None
    token = new_token()
    with os.fdopen(fd, "w", encoding="ascii") as out:
        out.write(token + "\n")
    return digest(token), True
