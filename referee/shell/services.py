"""A nursery for service tasks beside a body of code.

A bot process drains its stderr and watches for its exit; remote seats accept
connections. Those tasks never raise, so whatever leaves their nursery is the body's own
exception, which Trio wraps in an exception group. :func:`service_nursery` hands it back
unwrapped, so that callers see the exception they would see without the services.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import trio

__all__ = ["service_nursery"]


@contextlib.asynccontextmanager
async def service_nursery() -> AsyncIterator[trio.Nursery]:
    """Yield a nursery for tasks that never raise; cancel them when the body is done.

    An exception of the body leaves unwrapped; a group that holds anything else (a
    service that did raise, against its contract) leaves as it is."""
    raised: BaseException | None = None
    unwrapped = False
    try:
        async with trio.open_nursery() as nursery:
            try:
                yield nursery
            except BaseException as exc:
                raised = exc
                raise
            finally:
                nursery.cancel_scope.cancel()
    except BaseExceptionGroup as group:
        if raised is None or len(group.exceptions) != 1 or group.exceptions[0] is not raised:
            raise
        unwrapped = True
    if unwrapped:  # outside the handler: no group chained as its context
        assert raised is not None
        raise raised
