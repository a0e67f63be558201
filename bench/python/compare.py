#!/usr/bin/env python3
"""Acquire + release from Python against the C++ client, same run, one node.

    PYTHONPATH=build/python bench/python/compare.py build/bench/redlock_holding_bench

Starts one redis-server (a free loopback port, a temporary directory,
stopped by its pid), then measures, in interleaved rounds, the p50 and p99
of one acquire + release cycle:

  cpp       redlock_holding_bench's BM_UnfencedAcquireRelease (BlockingClient)
  cpp-guard BM_GuardLockRelease: BlockingClient::lock and Guard::release, the
            C++ counterpart of `with`
  cpp-async BM_GuardLockAsyncRelease: BlockingClient::lock_async and
            Guard::release_async, each result handed to the waiting thread,
            the C++ counterpart of `async with`
  sync      redlock_quorum: client.acquire() then client.release()
  with      redlock_quorum: `with client.lock(...)` (a renewing guard)
  async     redlock_quorum: `async with client.lock_async(...)` on asyncio
            (by default each wait polls for its result for up to
            spin_us = 250 before it sleeps: blocks, or parks on the event
            loop)
  with-block  `with` with spin_us=0: each wait blocks at once
  async-park  `async with` with spin_us=0: each await parks at once
  redis-py  redis-py's single-node Lock (python3-redis), the reference
  asyncio-2 two awaits of futures the event loop completes itself (no
            thread, no node): what asyncio's own turns cost `async with`,
            which awaits the acquire's result and the release's answer

and prints each with its difference from the C++ client's p50, and for
`with` and `async with` also from their C++ counterpart's (what the binding
adds on top of the same work in C++).
docs/python.md records the figures.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

import redlock_quorum

CYCLES = int(os.environ.get("REDLOCK_BENCH_PY_CYCLES", "3000"))
ROUNDS = int(os.environ.get("REDLOCK_BENCH_PY_ROUNDS", "3"))


def start_node():
    directory = tempfile.mkdtemp(prefix="redlock-pybench-")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        ["/usr/bin/redis-server", "--port", str(port), "--bind", "127.0.0.1", "--dir", directory,
         "--save", "", "--appendonly", "no", "--logfile", os.path.join(directory, "log")],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return process, port, directory
        except OSError:
            time.sleep(0.02)
    raise RuntimeError("redis-server did not start")


def percentiles(samples, cpu_us=None):
    """(p50, p99, CPU per cycle): the CPU this process (the caller's thread
    and the library's loop) spent per timed cycle, None when measured
    elsewhere."""
    samples = sorted(samples)
    return samples[len(samples) // 2], samples[int(len(samples) * 0.99)], cpu_us


def timed(cycle, count=CYCLES):
    for _ in range(200):  # warm-up
        cycle()
    samples = []
    cpu_started = time.process_time()
    for _ in range(count):
        started = time.perf_counter()
        cycle()
        samples.append((time.perf_counter() - started) * 1e6)
    return percentiles(samples, (time.process_time() - cpu_started) / count * 1e6)


def run_cpp(bench, address, name="BM_UnfencedAcquireRelease"):
    out = subprocess.run(
        [bench, f"--benchmark_filter=^{name}/", "--benchmark_format=json",
         f"--benchmark_min_time={max(1, CYCLES // 1500)}"],
        env=dict(os.environ, REDLOCK_BENCH_NODES=address), capture_output=True, text=True,
        check=True).stdout
    result = json.loads(out)["benchmarks"][0]
    return result["p50_us"], result["p99_us"], None


def run_sync(client):
    def cycle():
        client.release(client.acquire("bench:py"))
    return timed(cycle)


def run_with(client):
    def cycle():
        with client.lock("bench:py"):
            pass
    return timed(cycle)


def run_async(client):
    async def main():
        for _ in range(200):
            async with client.lock_async("bench:py"):
                pass
        samples = []
        cpu_started = time.process_time()
        for _ in range(CYCLES):
            started = time.perf_counter()
            async with client.lock_async("bench:py"):
                pass
            samples.append((time.perf_counter() - started) * 1e6)
        return percentiles(samples, (time.process_time() - cpu_started) / CYCLES * 1e6)
    return asyncio.run(main())


def run_asyncio_turns():
    async def main():
        loop = asyncio.get_running_loop()

        async def two_awaits():
            for _ in range(2):
                done = loop.create_future()
                loop.call_soon(done.set_result, None)
                await done
        for _ in range(200):
            await two_awaits()
        samples = []
        for _ in range(CYCLES):
            started = time.perf_counter()
            await two_awaits()
            samples.append((time.perf_counter() - started) * 1e6)
        return percentiles(samples)
    return asyncio.run(main())


def run_redis_py(port):
    import redis
    connection = redis.Redis(host="127.0.0.1", port=port)

    def cycle():
        lock = connection.lock("bench:redis-py", timeout=10)
        lock.acquire(blocking=False)
        lock.release()
    result = timed(cycle)
    connection.close()
    return result


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    bench = sys.argv[1]
    process, port, directory = start_node()
    address = f"127.0.0.1:{port}"
    results = {name: [] for name in
               ("cpp", "cpp-guard", "cpp-async", "sync", "with", "async", "with-block", "async-park",
                "redis-py", "asyncio-2")}
    try:
        client = redlock_quorum.Client(nodes=[address], node_timeout_ms=1000)
        parking = redlock_quorum.Client(nodes=[address], node_timeout_ms=1000, spin_us=0)
        for _ in range(ROUNDS):
            results["cpp"].append(run_cpp(bench, address))
            results["cpp-guard"].append(run_cpp(bench, address, "BM_GuardLockRelease"))
            results["cpp-async"].append(run_cpp(bench, address, "BM_GuardLockAsyncRelease"))
            results["sync"].append(run_sync(client))
            results["with"].append(run_with(client))
            results["async"].append(run_async(client))
            results["with-block"].append(run_with(parking))
            results["async-park"].append(run_async(parking))
            results["redis-py"].append(run_redis_py(port))
            results["asyncio-2"].append(run_asyncio_turns())
        client.close()
        parking.close()
    finally:
        os.kill(process.pid, signal.SIGTERM)
        process.wait(timeout=10)
        shutil.rmtree(directory, ignore_errors=True)
    p50s = {name: statistics.median(r[0] for r in rounds) for name, rounds in results.items()}
    counterpart = {"with": "cpp-guard", "async": "cpp-async", "async-park": "cpp-async",
                   "with-block": "cpp-guard"}
    print(f"one node, {CYCLES} cycles x {ROUNDS} rounds; medians of the rounds' percentiles")
    print(f"{'client':10} {'p50 us':>9} {'p99 us':>9} {'p50 - cpp':>10} {'p50 - C++ same work':>20}"
          f" {'CPU us/cycle':>13}")
    for name, rounds in results.items():
        p50 = p50s[name]
        p99 = statistics.median(r[1] for r in rounds)
        same = f"{p50 - p50s[counterpart[name]]:+20.1f}" if name in counterpart else f"{'':>20}"
        cpus = [r[2] for r in rounds if r[2] is not None]
        cpu = f"{statistics.median(cpus):13.1f}" if cpus else f"{'':>13}"
        print(f"{name:10} {p50:9.1f} {p99:9.1f} {p50 - p50s['cpp']:+10.1f} {same} {cpu}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
