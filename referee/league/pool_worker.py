"""A referee worker process: plays the units of work its coordinator sends.

Run as ``python -m referee.league.pool_worker`` by :mod:`referee.league.pool_executor`.
It reads tasks from its standard input and writes results to its standard output, each a
frame of an 8-byte big-endian length and a pickle (both ends are the referee's own code;
no bot ever writes to these pipes). A task is a
:class:`~referee.league.dask_worker.UnitTask`, played with
:func:`~referee.league.dask_worker.play_unit_task`. Anything else the worker prints goes
to its standard error.

How long a worker lives: exactly as long as its coordinator holds its standard input
open. The coordinator holds the only write end of that pipe, so the kernel closes it
when the coordinator closes it, exits, or is killed with SIGKILL, at any moment, even
before the worker has finished starting. A thread started by the worker's first
instruction (before the referee's modules are imported) reads the tasks from the pipe at
all times; at its end it stops the worker: a unit in progress is interrupted as Ctrl-C
would interrupt it (its bots are stopped, and their guards would kill them if the worker
itself were killed), and the worker exits. SIGTERM does the same.

No parent-death signal (``PR_SET_PDEATHSIG``): the coordinator starts its workers from
one of Trio's worker threads, and the kernel sends that signal when the forking *thread*
ends, which an idle one does after 10 seconds, in the middle of a unit.

Ctrl-C is the coordinator's to handle: a worker runs in a session of its own, out of
the terminal's reach.
"""

from __future__ import annotations

import os
import pickle
import queue
import signal
import struct
import sys
import threading
from typing import BinaryIO

#: A frame's header: the length of the pickle that follows.
HEADER = struct.Struct(">Q")
#: The exit status of a worker stopped in the middle of a unit.
INTERRUPTED = 130


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


class Lifeline:
    """The worker's standard input, read by a thread of its own: the tasks, one at a time,
    and the coordinator's end.

    At the end of the input (or when it breaks), a worker that is playing a unit is
    interrupted at once (SIGINT, see :func:`_interrupt`): the unit stops its bots on
    the way out. A worker that is not (starting, or between units) has no bot to stop,
    and exits at once."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream
        self._tasks: queue.SimpleQueue[bytes] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._busy = False
        self._thread = threading.Thread(target=self._read, name="lifeline", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _read(self) -> None:
        try:
            while (body := read_frame(self._stream)) is not None:
                self._tasks.put(body)
        except (OSError, ValueError):  # a broken pipe is an end too
            pass
        with self._lock:
            if not self._busy:
                # No unit, hence no bot: nothing to stop. At once, even in the middle
                # of the imports, which take seconds on a loaded machine.
                os._exit(0)
            os.kill(os.getpid(), signal.SIGINT)

    def next_task(self) -> bytes:
        """The next task, marking the worker busy."""
        body = self._tasks.get()
        with self._lock:
            self._busy = True
            return body

    def done(self) -> None:
        """The unit is over (its bots are stopped): the end of the input no longer
        needs to interrupt anything."""
        with self._lock:
            self._busy = False


def main() -> int:
    """Play the tasks; the exit status when stopped in the middle of a unit (the end of
    the input between units exits with status 0 from the lifeline's thread)."""
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _interrupt)
    lifeline = Lifeline(sys.stdin.buffer)
    try:
        lifeline.start()
        # Only now the referee's own modules, which take a while to import: a
        # coordinator that dies meanwhile stops the worker all the same.
        from referee.league.dask_worker import UnitTask, play_unit_task

        # The results go down a pipe of their own; print() and the like go to stderr.
        results = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
        os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
        while True:
            body = lifeline.next_task()
            task = pickle.loads(body)
            if not isinstance(task, UnitTask):
                raise TypeError(f"not a unit of work: {type(task).__name__}")
            result = play_unit_task(task)
            lifeline.done()
            try:
                results.write(frame(result))
                results.flush()
            except BrokenPipeError:  # the coordinator is gone: nobody to tell
                return INTERRUPTED
    except BaseException as exc:
        if _interrupted(exc):
            return INTERRUPTED
        raise


if __name__ == "__main__":
    try:
        code = main()
    except KeyboardInterrupt:  # the end of the input, seen just as main() returned
        code = INTERRUPTED
    # Stopped: the unit's bots are stopped, and nobody waits for anything more. Exit
    # without the interpreter's teardown, which takes a while on a loaded machine.
    sys.stderr.flush()
    os._exit(code)
