"""The SQLite plumbing of the results database: transactions, what an SQLite error
means for its user, and how two league descriptions compare."""

from __future__ import annotations

import contextlib
import sqlite3


def explain(exc: sqlite3.Error) -> str:
    """What an SQLite error means for the user of a results database."""
    name = getattr(exc, "sqlite_errorname", "") or ""
    if name.startswith("SQLITE_READONLY"):
        return "the file is read-only (check the permissions of the file and of its folder)"
    if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")):
        return (
            "another program is using it (it holds a lock on the database);"
            " retry when that program has finished"
        )
    if name.startswith("SQLITE_NOTADB"):
        return "not an SQLite database"
    if name.startswith("SQLITE_CANTOPEN"):
        return "cannot open the file (does its folder exist, and may it be written to?)"
    return str(exc)


def fields(description: str) -> dict[str, str] | None:
    """``name=value;name=value`` as a mapping; None for another form."""
    parts = [part.partition("=") for part in description.split(";")]
    if not all(sep for _, sep, _ in parts):
        return None
    return {name: value for name, _, value in parts}


def agrees(stored: str, wanted: str) -> bool:
    """Whether every field of ``wanted`` has its value in ``stored``."""
    before, after = fields(stored), fields(wanted)
    if before is None or after is None:
        return False
    return all(before.get(name) == value for name, value in after.items())


def difference(stored: str, wanted: str) -> str:
    """What differs between two ``name=value;name=value`` descriptions, e.g.
    ``seed: 5 in the database, 6 now`` (for the names of ``wanted``); the whole values
    when they have another form."""
    before, after = fields(stored), fields(wanted)
    if before is None or after is None:
        return f"{stored!r} in the database, {wanted!r} now"
    return "; ".join(
        f"{name}: {before.get(name, '(none)')} in the database, {value} now"
        for name, value in after.items()
        if before.get(name) != value
    )


class Transaction:
    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def __enter__(self) -> None:
        self._db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, *rest: object) -> None:
        if exc_type is None:
            try:
                self._db.execute("COMMIT")
            except sqlite3.Error:
                # SQLite may have rolled back already (a full disk does): the error
                # that says why is the one to raise, not one from a second rollback.
                if self._db.in_transaction:
                    with contextlib.suppress(sqlite3.Error):
                        self._db.execute("ROLLBACK")
                raise
        elif self._db.in_transaction:
            with contextlib.suppress(sqlite3.Error):
                self._db.execute("ROLLBACK")
