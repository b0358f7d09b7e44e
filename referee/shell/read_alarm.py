"""One timer for all the reads of a bot's stdout, in place of a cancel scope per read.

Trio times a wait out with a cancel scope, and entering and leaving one costs more CPU
than the rest of a read (a few microseconds; ``benchmarks/ipc.py`` counts a decision's).
A bot's stdout is read once per request, each time with a deadline. Instead of a scope
per read, one task per bot (:meth:`ReadAlarm.run`) sleeps until the deadline of the read
in progress; when a read still waits then, the alarm wakes it the way Trio wakes the
waiters of a file descriptor about to be closed (:func:`trio.lowlevel.notify_closing`,
which leaves the descriptor open), and the read raises :class:`trio.TooSlowError`.

The alarm is set lazily: a read that ends before its deadline leaves the alarm set for
that deadline; when it rings, it finds no read late and sleeps until the deadline of
the read in progress then (none: until one brings it forward). A request costs two
assignments; the alarm rings at most once per deadline that passes.
"""

from __future__ import annotations

import math

import trio

__all__ = ["ReadAlarm"]


class ReadAlarm:
    """The alarm of the reads of file descriptor ``fd`` (one reader at a time). Until
    its task runs (:meth:`run`), and after it stopped, a read takes a cancel scope."""

    __slots__ = ("_fallback", "_fd", "_rang", "_sleep", "_stop", "deadline", "rang_at")

    def __init__(self, fd: int) -> None:
        self._fd = fd
        #: The deadline of the read in progress (inf: none), on Trio's clock.
        self.deadline = math.inf
        #: The deadline at which the alarm last woke a read.
        self.rang_at = math.inf
        self._rang = False
        self._sleep: trio.CancelScope | None = None
        self._fallback: trio.CancelScope | None = None  # a read's own scope
        self._stop = trio.CancelScope(shield=True)

    async def run(self) -> None:
        """The alarm's task, until :meth:`stop` (it never raises)."""
        with self._stop:
            while True:
                with trio.CancelScope(deadline=self.deadline) as sleep:
                    self._sleep = sleep
                    await trio.sleep_forever()
                self._sleep = None
                if self._fd >= 0 and trio.current_time() >= self.deadline:  # a read is late
                    self._rang = True
                    self.rang_at, self.deadline = self.deadline, math.inf
                    trio.lowlevel.notify_closing(self._fd)

    def stop(self) -> None:
        """Stop the alarm's task, before the descriptor is closed (its number may then
        be another file's): it wakes nothing from now on."""
        self._stop.cancel()
        self._sleep, self._fd = None, -1

    def bring_forward(self, deadline: float) -> None:
        """End the read in progress at ``deadline`` at the latest."""
        if deadline < self.deadline:
            self.deadline = deadline
            for scope in (self._sleep, self._fallback):
                if scope is not None and deadline < scope.deadline:
                    scope.deadline = deadline

    async def wait_readable(self, deadline: float) -> None:
        """Wait until ``fd`` is readable (or at its end); :class:`trio.TooSlowError`
        once ``deadline`` (Trio's clock) passed."""
        sleep = self._sleep
        if sleep is None:
            await self._wait_in_scope(deadline)
            return
        self.deadline = deadline
        self._rang = False
        if deadline < sleep.deadline:  # usually not: it is set for an earlier read's
            sleep.deadline = deadline
        try:
            await trio.lowlevel.wait_readable(self._fd)
        except trio.ClosedResourceError:
            if self._rang:
                raise trio.TooSlowError from None
            raise
        finally:
            self.deadline = math.inf
            self._rang = False

    async def _wait_in_scope(self, deadline: float) -> None:
        self.deadline = deadline
        with trio.CancelScope(deadline=deadline) as scope:
            self._fallback = scope
            try:
                await trio.lowlevel.wait_readable(self._fd)
                return
            finally:
                self._fallback, self.deadline = None, math.inf
        self.rang_at = scope.deadline
        raise trio.TooSlowError
