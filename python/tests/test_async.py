"""`async with` on asyncio against real nodes: the wait never blocks the
event loop, losses arrive as an asyncio.Event (and cancel the block with
cancel_on_loss), and a cancelled wait leaves nothing on the nodes."""

from __future__ import annotations

import asyncio
import gc
import time
import weakref

import pytest

from redlock_quorum import Client, LockLost, NotAcquired


def lock_key(resource: str) -> str:
    return "redlock:lock:" + resource


# 0: every await parks on the event loop at once; 250: the default budget,
# polled first while results come back within it.
@pytest.mark.asyncio
@pytest.mark.parametrize("spin_us", [0, 250])
async def test_async_with_holds_the_lock_and_releases_it(nodes, addresses, spin_us):
    with Client(nodes=addresses, release_at_majority=False, spin_us=spin_us) as client:
        async with client.lock_async("doc:1", fenced=True) as guard:
            assert isinstance(guard.lost, asyncio.Event)
            assert guard.valid and isinstance(guard.fence, int)
            for node in nodes:
                assert guard.value.encode() in node.command("GET", lock_key("doc:1"))
        for node in nodes:
            assert node.command("EXISTS", lock_key("doc:1")) == b":0\r\n"


@pytest.mark.asyncio
async def test_a_busy_lock_raises_not_acquired_on_entry(addresses):
    with Client(nodes=addresses, retry_count=0) as client:
        async with client.lock_async("doc:2"):
            with pytest.raises(NotAcquired) as raised:
                async with client.lock_async("doc:2"):
                    pass
            assert len(raised.value.nodes) == 3


# 100 000: a budget far longer than a turn of the ticker, so that the fifty
# waits poll as long as they may; polling yields to the event loop.
@pytest.mark.asyncio
@pytest.mark.parametrize("spin_us", [0, 250, 100_000])
async def test_the_event_loop_stays_responsive_while_fifty_tasks_wait(addresses, spin_us):
    with Client(nodes=addresses, retry_delay_ms=50, spin_us=spin_us) as client:
        gaps = []
        served = 0
        stop = asyncio.Event()

        async def ticker():
            last = time.monotonic()
            while not stop.is_set():
                await asyncio.sleep(0.01)
                now = time.monotonic()
                gaps.append(now - last)
                last = now

        async def waiter():
            nonlocal served
            async with client.lock_async("queue", wait_ms=30000):
                served += 1

        ticking = asyncio.create_task(ticker())
        async with client.lock_async("queue"):
            waiters = [asyncio.create_task(waiter()) for _ in range(50)]
            await asyncio.sleep(0.5)  # all fifty wait, the loop ticks on
            assert served == 0
        await asyncio.wait_for(asyncio.gather(*waiters), timeout=60)
        stop.set()
        await ticking
        assert served == 50
        assert max(gaps) < 0.1, f"the loop stalled for {max(gaps) * 1000:.0f} ms"


@pytest.mark.asyncio
async def test_a_loss_sets_the_event_and_cancel_on_loss_ends_the_block(nodes, addresses):
    with Client(nodes=addresses, ttl_ms=600) as client:
        guard = client.lock_async("doc:3", cancel_on_loss=True)

        async def hold():
            async with guard:
                for node in nodes:
                    node.command("DEL", lock_key("doc:3"))
                await asyncio.sleep(10)  # cancelled long before this ends

        with pytest.raises(LockLost):
            await asyncio.wait_for(hold(), timeout=20)
        assert guard.lost.is_set()


@pytest.mark.asyncio
async def test_at_risk_is_an_event_set_while_renewals_are_late(nodes, addresses):
    with Client(nodes=addresses, ttl_ms=3000, node_timeout_ms=100,
                reconnect_max_ms=100) as client:
        async with client.lock_async("at-risk", at_risk_share=0.6) as guard:
            assert isinstance(guard.at_risk, asyncio.Event)
            assert not guard.at_risk.is_set()
            for node in nodes[:2]:
                node.pause()
            try:
                await asyncio.wait_for(guard.at_risk.wait(), timeout=5)
                assert not guard.lost.is_set()
            finally:
                for node in nodes[:2]:
                    node.resume()
            deadline = time.monotonic() + 5
            while guard.at_risk.is_set() and time.monotonic() < deadline:
                await asyncio.sleep(0.01)
            assert not guard.at_risk.is_set(), "a renewal that succeeded ends the episode"
            assert guard.valid and not guard.lost.is_set()


@pytest.mark.asyncio
async def test_a_cancelled_wait_leaves_nothing_on_the_nodes(nodes, addresses):
    with Client(nodes=addresses, release_at_majority=False) as client:
        holder = client.lock("doc:4")

        async def waiter():
            async with client.lock_async("doc:4", wait_ms=30000):
                raise AssertionError("never granted while held")

        task = asyncio.create_task(waiter())
        # Cancelled inside the wait: once it is in the node's fair queue
        # (where a waiter waits by default).
        deadline = time.monotonic() + 5
        while nodes[0].command("ZCARD", "redlock:queue:doc:4") == b":0\r\n":
            assert time.monotonic() < deadline, "the waiter never started waiting"
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        holder.release()
        # A grant that raced the cancel is released: the key goes from
        # every node within a bounded wait.
        deadline = time.monotonic() + 5
        while any(node.command("EXISTS", lock_key("doc:4")) != b":0\r\n" for node in nodes):
            assert time.monotonic() < deadline, "a lock stayed behind the cancelled wait"
            await asyncio.sleep(0.01)


@pytest.mark.asyncio
async def test_results_that_arrive_together_reach_every_waiting_task(nodes, addresses):
    with Client(nodes=addresses, release_at_majority=False) as client:
        entered = asyncio.Event()
        count = 20
        held = []

        async def take(index: int):
            async with client.lock_async(f"burst:{index}") as guard:
                held.append(guard.value)
                if len(held) == count:
                    entered.set()
                await asyncio.wait_for(entered.wait(), timeout=20)

        await asyncio.wait_for(asyncio.gather(*(take(i) for i in range(count))), timeout=30)
        assert len(set(held)) == count
        for node in nodes:
            for index in range(count):
                assert node.command("EXISTS", lock_key(f"burst:{index}")) == b":0\r\n"


def test_one_client_serves_one_event_loop_after_another(addresses):
    async def cycle(resource: str) -> int:
        async with client.lock_async(resource, fenced=True) as guard:
            return guard.fence

    with Client(nodes=addresses) as client:
        fences = [asyncio.run(asyncio.wait_for(cycle("loops"), timeout=10)) for _ in range(3)]
        assert fences == sorted(set(fences))
        # And the blocking side still works beside them.
        with client.lock("loops", fenced=True) as guard:
            assert guard.fence > fences[-1]


def test_a_finished_event_loop_is_not_kept_alive_by_the_client(addresses):
    async def cycle():
        async with client.lock_async("loops:gc"):
            pass

    with Client(nodes=addresses) as client:
        loop = asyncio.new_event_loop()
        loop.run_until_complete(asyncio.wait_for(cycle(), timeout=10))
        loop.close()
        gone = weakref.ref(loop)
        del loop
        gc.collect()
        assert gone() is None, "the client kept a closed event loop alive"
