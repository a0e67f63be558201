#!/usr/bin/env python3
"""The cases of bench/peers/compare, run with redis-py's single-node Lock.

The single-node reference, NOT a quorum lock: redis-py's Lock is one
`SET key token NX PX ttl` on ONE node, and a compare-and-delete script to
release it. It runs against the first node of --nodes only (compare passes
it one node), and its JSON line says so ("nodes": 1, "quorum": false).
Debian's python3-redis (scripts/setup); its asyncio client
(redis.asyncio, one event loop, as node's drivers have one), with
`Redis.lock(name, timeout=..., sleep=..., blocking_timeout=...)`.

    python3 redis_py_driver.py --case latency|inflight|contended
        --nodes host:port [--cycles N] [--warmup N] [--seconds S]
        [--width W] [--workers W] [--prefix TEXT]

The same command line, cases and JSON fields as node_redlock_driver.js
(read its header for the cases). Settings, matched to the other drivers:
  - TTL 10 s everywhere (timeout=10);
  - latency and inflight never contend: acquire(blocking=False), so a
    refusal fails the run (retry count 0);
  - contended: blocking until acquired, sleep=0.010 s between attempts
    (redis-py has no jitter: a fixed 10 ms, the mean pause of the others),
    blocking_timeout=20 s; a wait longer than 20 s fails the run and one of
    1 s or more counts as a stall (as in node_redlock_driver.js);
  - no drift factor: redis-py computes no validity, the node's TTL is all
    there is.
Connections: latency and inflight use one Redis client, whose pool opens a
connection per command in flight (64 at most); contended gives each worker
a Redis client of its own. attempts_per_acquire counts the SET NX calls.

peak_rss_kib is getrusage(RUSAGE_SELF).ru_maxrss: the whole python process.
Exit status: 0 on success, 1 when a run failed, 2 on usage.
"""

import asyncio
import json
import math
import os
import resource
import sys
import time

try:
    import redis
    import redis.asyncio
    from redis.asyncio.lock import Lock
except ImportError:
    sys.stderr.write("redis_py_driver: no redis module (Debian: python3-redis; run scripts/setup)\n")
    sys.exit(2)

TTL_S = 10
SLEEP_S = 0.010
MAX_WAIT_S = 20.0
STALL_S = 1.0

DEFAULTS = {
    "case": "",
    "nodes": "",
    "cycles": 2000,
    "warmup": 200,
    "seconds": 5.0,
    "width": 64,
    "workers": 8,
    "prefix": f"peers:py:{os.getpid()}",
}


def usage(message):
    sys.stderr.write(f"redis_py_driver: {message}\n")
    sys.exit(2)


def parse_args(argv):
    options = dict(DEFAULTS)
    if len(argv) % 2 != 0:
        usage(f"bad argument '{argv[-1]}'")
    for i in range(0, len(argv), 2):
        name = argv[i][2:] if argv[i].startswith("--") else ""
        if name not in options:
            usage(f"bad argument '{argv[i]}'")
        value = argv[i + 1]
        default = DEFAULTS[name]
        try:
            options[name] = type(default)(value) if not isinstance(default, str) else value
        except ValueError:
            usage(f"--{name}: not a number: {value}")
    if options["case"] not in ("latency", "inflight", "contended"):
        usage("--case must be latency, inflight or contended")
    if options["nodes"] == "":
        usage("--nodes host:port is required")
    return options


def parse_node(text):
    first = text.split(",")[0]
    host, colon, port = first.rpartition(":")
    if not colon or not host or not port.isdigit() or not 0 < int(port) < 65536:
        usage(f"bad node '{first}'")
    return host, int(port)


class CountingLock(Lock):
    """redis-py's Lock, counting its SET NX attempts."""

    attempts = 0

    async def do_acquire(self, token):
        self.attempts += 1
        return await super().do_acquire(token)


def percentile(samples, q):
    if not samples:
        return 0.0
    ordered = sorted(samples)
    rank = math.ceil(q * len(ordered))
    return ordered[min(len(ordered) - 1, max(rank, 1) - 1)]


def micros(ns):
    return ns / 1000.0


def make_client(node):
    return redis.asyncio.Redis(host=node[0], port=node[1])


async def lock_cycle(client, key):
    lock = client.lock(key, timeout=TTL_S, lock_class=CountingLock, thread_local=False)
    if not await lock.acquire(blocking=False):
        raise RuntimeError(f"refused: {key}")
    await lock.release()


async def run_latency(options, node):
    client = make_client(node)
    samples = []
    total = options["warmup"] + options["cycles"]
    started = time.monotonic_ns()
    for i in range(total):
        if i == options["warmup"]:
            started = time.monotonic_ns()
        begin = time.monotonic_ns()
        await lock_cycle(client, f"{options['prefix']}:lat:{i}")
        if i >= options["warmup"]:
            samples.append(micros(time.monotonic_ns() - begin))
    seconds = (time.monotonic_ns() - started) / 1e9
    await client.close()
    return {
        "cycles": len(samples),
        "p50_us": percentile(samples, 0.5),
        "p99_us": percentile(samples, 0.99),
        "ops_per_s": len(samples) / seconds,
    }


async def run_inflight(options, node):
    client = make_client(node)
    samples = []
    state = {"next_key": 0, "completed": 0, "measuring": False, "stopping": False,
             "started": 0, "ended": 0}
    window_ns = int(options["seconds"] * 1e9)

    async def worker():
        while not state["stopping"]:
            begin = time.monotonic_ns()
            key = f"{options['prefix']}:fly:{state['next_key']}"
            state["next_key"] += 1
            await lock_cycle(client, key)
            end = time.monotonic_ns()
            if state["stopping"]:
                break
            if state["measuring"]:
                samples.append(micros(end - begin))
                if end - state["started"] >= window_ns:
                    state["stopping"] = True
                    state["ended"] = end
            else:
                state["completed"] += 1
                if state["completed"] >= options["warmup"]:
                    state["measuring"] = True
                    state["started"] = end

    await asyncio.gather(*(worker() for _ in range(options["width"])))
    await client.close()
    seconds = (state["ended"] - state["started"]) / 1e9
    return {
        "width": options["width"],
        "cycles": len(samples),
        "seconds": seconds,
        "ops_per_s": len(samples) / seconds,
        "p50_us": percentile(samples, 0.5),
        "p99_us": percentile(samples, 0.99),
    }


async def run_contended(options, node):
    workers = options["workers"]
    clients = [make_client(node) for _ in range(workers)]
    for client in clients:
        await client.ping()
    key = f"{options['prefix']}:contended"
    window_ns = int(options["seconds"] * 1e9)
    waits = []
    per_worker = [0] * workers
    state = {"attempts": 0, "warmup_left": max(options["warmup"], 0), "stopping": False,
             "failure": "", "started": time.monotonic_ns()}
    state["deadline"] = state["started"] + window_ns

    async def worker(w):
        client = clients[w]
        while not state["stopping"]:
            lock = client.lock(key, timeout=TTL_S, sleep=SLEEP_S, blocking_timeout=MAX_WAIT_S,
                               lock_class=CountingLock, thread_local=False)
            begin = time.monotonic_ns()
            acquired = await lock.acquire()
            held = time.monotonic_ns()
            if not acquired:
                state["failure"] = f"worker {w} waited {MAX_WAIT_S} s for the lock"
                state["stopping"] = True
                break
            if state["warmup_left"] > 0:
                state["warmup_left"] -= 1
                if state["warmup_left"] == 0:
                    state["started"] = held
                    state["deadline"] = held + window_ns
            elif held < state["deadline"]:
                waits.append(micros(held - begin))
                per_worker[w] += 1
                state["attempts"] += lock.attempts
            else:
                state["stopping"] = True
            await lock.release()

    await asyncio.gather(*(worker(w) for w in range(workers)))
    for client in clients:
        await client.close()
    if state["failure"]:
        raise RuntimeError(state["failure"])
    seconds = (state["deadline"] - state["started"]) / 1e9
    return {
        "workers": workers,
        "seconds": seconds,
        "acquisitions": len(waits),
        "acquisitions_per_s": len(waits) / seconds,
        "wait_p50_us": percentile(waits, 0.5),
        "wait_p99_us": percentile(waits, 0.99),
        "wait_max_us": max(waits, default=0.0),
        "stalls": sum(1 for wait in waits if wait >= STALL_S * 1e6),
        "min_per_worker": min(per_worker),
        "max_per_worker": max(per_worker),
        "attempts_per_acquire": state["attempts"] / len(waits) if waits else 0.0,
        "retry": "blocking, sleep 10 ms (fixed, no jitter), blocking_timeout 20 s",
    }


CASES = {"latency": run_latency, "inflight": run_inflight, "contended": run_contended}


def main():
    options = parse_args(sys.argv[1:])
    node = parse_node(options["nodes"])
    result = asyncio.run(CASES[options["case"]](options, node))
    line = {
        "impl": "redis-py",
        "case": options["case"],
        "nodes": 1,
        "quorum": False,
        "ttl_ms": TTL_S * 1000,
        **result,
        "peak_rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
    }
    sys.stdout.write(json.dumps(line) + "\n")


if __name__ == "__main__":
    try:
        main()
    except (RuntimeError, redis.RedisError, OSError) as error:
        sys.stderr.write(f"redis_py_driver: {error}\n")
        sys.exit(1)
