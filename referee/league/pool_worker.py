"""A referee worker process: plays the units of work its coordinator sends.

Run as ``python -m referee.league.pool_worker`` by :mod:`referee.league.pool_executor`.
It reads tasks from its standard input and writes results to its standard output, each a
frame of an 8-byte big-endian length and a pickle (both ends are the referee's own code;
no bot ever writes to these pipes). A task is a
:class:`~referee.league.dask_worker.UnitTask`, played with
:func:`~referee.league.dask_worker.play_unit_task`; the end of its input ends the
worker. Anything else the worker prints goes to its standard error.

Ctrl-C is the coordinator's to handle: a worker runs in a session of its own, out of
the terminal's reach, and SIGTERM (the coordinator stopping it) stops its unit as Ctrl-C
would, bots included. On Linux a worker also gets SIGTERM when its coordinator dies.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import pickle
import signal
import struct
import sys
from typing import BinaryIO

from referee.league.dask_worker import UnitTask, play_unit_task

#: A frame's header: the length of the pickle that follows.
HEADER = struct.Struct(">Q")
#: ``prctl(PR_SET_PDEATHSIG, ...)``: a signal when the parent process dies (Linux).
PR_SET_PDEATHSIG = 1


def read_frame(stream: BinaryIO) -> bytes | None:
    """The next frame's pickle, or None at the end of the stream."""
    header = stream.read(HEADER.size)
    if len(header) < HEADER.size:
        return None
    (length,) = HEADER.unpack(header)
    body = stream.read(length)
    if len(body) < length:
        return None
    return body


def frame(value: object) -> bytes:
    body = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    return HEADER.pack(len(body)) + body


def _die_with_the_coordinator() -> None:
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def _interrupt(signum: int, frame: object) -> None:
    """SIGTERM, turned into SIGINT: Trio raises that one where it is safe (or at once
    outside Trio), so the unit's tasks stop their bots on the way out. A KeyboardInterrupt
    raised by this handler itself could land inside Trio's own machinery and leave the
    event loop abandoned with its tasks' cleanup never run."""
    os.kill(os.getpid(), signal.SIGINT)


def _interrupted(exc: BaseException) -> bool:
    """Whether ``exc`` is the interrupt, alone or as Trio reports it out of a nursery."""
    if isinstance(exc, BaseExceptionGroup):
        rest = exc.split(KeyboardInterrupt)[1]
        return rest is None
    return isinstance(exc, KeyboardInterrupt)


def main() -> int:
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _interrupt)
    _die_with_the_coordinator()
    # The results go down a pipe of their own; print() and the like go to stderr.
    results = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    tasks = sys.stdin.buffer
    try:
        while (body := read_frame(tasks)) is not None:
            task = pickle.loads(body)
            if not isinstance(task, UnitTask):
                raise TypeError(f"not a unit of work: {type(task).__name__}")
            results.write(frame(play_unit_task(task)))
            results.flush()
    except BaseException as exc:
        if _interrupted(exc):
            return 130
        raise
    return 0


if __name__ == "__main__":
    sys.exit(main())
