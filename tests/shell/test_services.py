"""service_nursery: service tasks beside a body, the body's exception unwrapped."""

from __future__ import annotations

import pytest
import trio

from referee.shell.services import service_nursery


async def test_the_body_exception_leaves_unwrapped_and_services_stop() -> None:
    stopped = trio.Event()

    async def service() -> None:
        try:
            await trio.sleep_forever()
        finally:
            stopped.set()

    with pytest.raises(KeyError) as caught:
        async with service_nursery() as nursery:
            nursery.start_soon(service)
            await trio.sleep(0)
            raise KeyError("body")
    assert caught.value.args == ("body",)
    assert caught.value.__context__ is None
    assert stopped.is_set()


async def test_a_clean_body_cancels_its_services() -> None:
    async with service_nursery() as nursery:
        nursery.start_soon(trio.sleep_forever)
    # Reaching here at all means the service was cancelled.


async def test_a_service_that_raises_is_not_hidden() -> None:
    async def broken() -> None:
        raise OSError("service")

    with pytest.RaisesGroup(OSError):
        async with service_nursery() as nursery:
            nursery.start_soon(broken)
            await trio.sleep_forever()
