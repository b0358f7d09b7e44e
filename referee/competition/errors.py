"""The competition's errors: a request refused for a reason of the requester's, and a
competition that cannot run (a setup error of the organizer's or the host's)."""

from __future__ import annotations

import enum

from referee.core import RefereeError, UserError

__all__ = ["CompetitionError", "Refusal", "Refused"]


class CompetitionError(UserError):
    """The competition cannot run: its database or files cannot be used, bwrap is
    missing, a participant's name is taken. One line, exit status 2."""


class Refusal(enum.Enum):
    """Why a request was refused; the server answers each with its HTTP status."""

    #: No token, or one that belongs to nobody.
    UNAUTHENTICATED = "unauthenticated"
    #: A disabled participant, another participant's bot or submission, not the organizer.
    FORBIDDEN = "forbidden"
    NOT_FOUND = "not found"
    #: An upload over the size limit.
    TOO_LARGE = "too large"
    #: An archive that cannot be unpacked safely, or a bad manifest.
    BAD_UPLOAD = "bad upload"
    #: Too many uploads today, or too many waiting.
    TOO_MANY = "too many"
    #: Submissions are frozen (the finals).
    FROZEN = "frozen"
    #: The server's disk is below its reserve (the request may be made again later).
    NO_SPACE = "no space"
    #: The server takes as many uploads at once as it may (made again shortly, it passes).
    BUSY = "busy"


class Refused(RefereeError):
    """A request refused with a one-line reason for the requester."""

    def __init__(self, refusal: Refusal, message: str) -> None:
        super().__init__(message)
        self.refusal = refusal
        self.message = message
