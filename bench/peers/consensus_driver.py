#!/usr/bin/env python3
"""One case of bench/peers/consensus, run from Python with one lock client.

The four Python lock clients a backend developer weighs, each the way its
documentation tells a user to take a lock (docs/choosing.md):

  quorum    this library's binding, redlock_quorum.Client.acquire/release
            over the Redis nodes given (3 or 5): a quorum lock (Redlock)
  etcd3     python-etcd3's Lock (Debian's python3-etcd3): a lease, then a
            transaction that creates the key if it does not exist (version
            0), else a watch on the key and another try; release deletes
            the key. Not etcd's concurrency.Mutex (a key per waiter under a
            prefix, served in revision order). Its blocking acquire fails
            with Debian's tenacity, so the driver runs the same loop itself
            (make_etcd3)
  kazoo     kazoo's Lock recipe (Debian's python3-kazoo): an ephemeral
            sequential node under the lock's path, held by the lowest
            sequence, each waiter watching the node before its own
  redis-py  redis-py's Lock (Debian's python3-redis) on the FIRST Redis
            node only: SET NX PX and a compare-and-delete script; a
            single-node reference, not a quorum lock

    python3 consensus_driver.py --impl quorum|etcd3|kazoo|redis-py
        --case latency|inflight|contended --servers host:port,...
        [--label TEXT] [--cycles N] [--warmup N] [--seconds S]
        [--width W] [--workers W]
    python3 consensus_driver.py --summarize RESULTS.jsonl [CASE]

Cases, the same for every client, all from Python threads (each client's
blocking API; the GIL is part of what a Python user gets):
  latency    one thread, acquire then release of one key, never contended
             (a refusal fails the run): p50 and p99 of a cycle
  inflight   --width threads (64), each cycling on a key of its own for
             --seconds: cycles per second, p50 and p99 of a cycle
  contended  --workers threads (8) on ONE key for --seconds, each waiting
             up to 20 s per acquire: acquisitions per second, the p99 of a
             wait, and the fewest and most any worker got
Every lock is taken with a 10 s TTL (lease, session) where the client has
one. One JSON line per run on stdout; --summarize prints the medians of
every (label, case) as a Markdown table. Exit status: 0 on success, 1 when
the run failed, 2 on usage.
"""

import json
import math
import os
import resource
import statistics
import sys
import threading
import time

TTL_S = 10
MAX_WAIT_S = 20.0

DEFAULTS = {
    "impl": "",
    "case": "",
    "servers": "",
    "label": "",
    "cycles": 1000,
    "warmup": 100,
    "seconds": 4.0,
    "width": 64,
    "workers": 8,
}


def usage(message):
    sys.stderr.write(f"consensus_driver: {message}\n")
    sys.exit(2)


def parse_args(argv):
    options = dict(DEFAULTS)
    if len(argv) % 2 != 0:
        usage(f"bad argument '{argv[-1]}'")
    for i in range(0, len(argv), 2):
        name = argv[i][2:] if argv[i].startswith("--") else ""
        if name not in options:
            usage(f"bad argument '{argv[i]}'")
        default = DEFAULTS[name]
        try:
            options[name] = argv[i + 1] if isinstance(default, str) else type(default)(argv[i + 1])
        except ValueError:
            usage(f"--{name}: not a number: {argv[i + 1]}")
    if options["impl"] not in ("quorum", "etcd3", "kazoo", "redis-py"):
        usage("--impl must be quorum, etcd3, kazoo or redis-py")
    if options["case"] not in ("latency", "inflight", "contended"):
        usage("--case must be latency, inflight or contended")
    if not options["servers"]:
        usage("--servers host:port,... is required")
    options["label"] = options["label"] or options["impl"]
    return options


def host_port(text):
    host, colon, port = text.rpartition(":")
    if not colon or not host or not port.isdigit():
        usage(f"bad server '{text}'")
    return host, int(port)


# --- the clients -----------------------------------------------------------
# Each maker returns (take, close): take(key, wait_s) acquires the lock on
# `key` within wait_s seconds (0: one try) and returns its release, or None
# when it was not acquired.


def make_quorum(servers, width):
    import redlock_quorum

    client = redlock_quorum.Client(nodes=servers)

    def take(key, wait_s):
        try:
            lock = client.acquire(key, ttl_ms=TTL_S * 1000, wait_ms=int(wait_s * 1000))
        except redlock_quorum.NotAcquired:
            return None
        return lambda: client.release(lock)

    return take, client.close


def make_etcd3(servers, width):
    import etcd3

    host, port = host_port(servers[0])
    # One client (one gRPC channel) per thread at most; the locks' leases
    # and transactions go to the member given, which forwards to the
    # leader as etcd's clients do.
    local = threading.local()

    def client():
        if not hasattr(local, "client"):
            local.client = etcd3.client(host=host, port=port)
        return local.client

    def take(key, wait_s):
        lock = client().lock(key, ttl=TTL_S)
        if wait_s <= 0:
            return lock.release if lock.acquire(timeout=0) else None
        # Lock.acquire's own wait does not run with Debian's tenacity (its
        # wait callback's signature): the same loop here, a try (lease and
        # transaction) then a watch on the key, each watch at most 1 s, as
        # a delete between the failed transaction and the watch's start is
        # not seen by it.
        deadline = time.monotonic() + wait_s
        while True:
            if lock.acquire(timeout=0):
                return lock.release
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            try:
                client().watch_once(lock.key, timeout=min(left, 1.0))
            except etcd3.exceptions.WatchTimedOut:
                pass

    def close():
        # Not client.close(): its watch thread (python-etcd3 0.12) then
        # raises "Channel closed" in a loop until the process ends, which
        # it does right after this.
        pass

    return take, close


def make_kazoo(servers, width):
    from kazoo.client import KazooClient

    zk = KazooClient(hosts=",".join(servers), timeout=TTL_S)
    zk.start(timeout=20)
    # A lock object per (thread, key): kazoo's Lock is one contender.
    local = threading.local()

    def take(key, wait_s):
        locks = local.__dict__.setdefault("locks", {})
        lock = locks.get(key)
        if lock is None:
            lock = locks[key] = zk.Lock(f"/bench/{key}", threading.current_thread().name)
        acquired = lock.acquire(blocking=wait_s > 0, timeout=wait_s if wait_s > 0 else None)
        return lock.release if acquired else None

    def close():
        zk.stop()
        zk.close()

    return take, close


def make_redis_py(servers, width):
    import redis

    host, port = host_port(servers[0])
    client = redis.Redis(host=host, port=port, max_connections=max(width, 8) + 8)

    def take(key, wait_s):
        lock = client.lock(key, timeout=TTL_S, sleep=0.010, thread_local=False)
        if wait_s > 0:
            acquired = lock.acquire(blocking=True, blocking_timeout=wait_s)
        else:
            acquired = lock.acquire(blocking=False)
        return lock.release if acquired else None

    return take, client.close


MAKERS = {"quorum": make_quorum, "etcd3": make_etcd3, "kazoo": make_kazoo,
          "redis-py": make_redis_py}


# --- the cases -------------------------------------------------------------


def percentile(samples, q):
    if not samples:
        return 0.0
    ordered = sorted(samples)
    rank = math.ceil(q * len(ordered))
    return ordered[min(len(ordered) - 1, max(rank, 1) - 1)]


def cycle(take, key):
    release = take(key, 0)
    if release is None:
        raise RuntimeError(f"refused while uncontended: {key}")
    release()


def run_latency(options, take, prefix):
    samples = []
    key = f"{prefix}-lat"
    for i in range(options["warmup"] + options["cycles"]):
        begin = time.monotonic_ns()
        cycle(take, key)
        if i >= options["warmup"]:
            samples.append((time.monotonic_ns() - begin) / 1000.0)
    return {"cycles": len(samples), "p50_us": percentile(samples, 0.5),
            "p99_us": percentile(samples, 0.99)}


def run_threads(count, body):
    failures = []

    def guarded(index):
        try:
            body(index)
        except Exception as error:  # reported as the run's failure
            failures.append(f"{type(error).__name__}: {error}")

    threads = [threading.Thread(target=guarded, args=(i,), name=f"w{i}") for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise RuntimeError(failures[0])


def run_inflight(options, take, prefix):
    width = options["width"]
    samples = [[] for _ in range(width)]
    warm = threading.Barrier(width)
    window = {}

    def body(index):
        key = f"{prefix}-fly-{index}"
        for _ in range(max(1, options["warmup"] // width)):
            cycle(take, key)
        if warm.wait() == 0:
            window["start"] = time.monotonic()
        warm.wait()
        stop = window["start"] + options["seconds"]
        while time.monotonic() < stop:
            begin = time.monotonic_ns()
            cycle(take, key)
            samples[index].append((time.monotonic_ns() - begin) / 1000.0)

    run_threads(width, body)
    elapsed = time.monotonic() - window["start"]
    every = [s for each in samples for s in each]
    return {"width": width, "cycles": len(every), "ops_per_s": len(every) / elapsed,
            "p50_us": percentile(every, 0.5), "p99_us": percentile(every, 0.99)}


def run_contended(options, take, prefix):
    workers = options["workers"]
    key = f"{prefix}-contended"
    waits = [[] for _ in range(workers)]
    start = time.monotonic()
    stop = start + options["seconds"]

    def body(index):
        while time.monotonic() < stop:
            begin = time.monotonic_ns()
            release = take(key, MAX_WAIT_S)
            if release is None:
                raise RuntimeError(f"no lock within {MAX_WAIT_S:.0f} s")
            waits[index].append((time.monotonic_ns() - begin) / 1000.0)
            release()

    run_threads(workers, body)
    elapsed = time.monotonic() - start
    counts = [len(each) for each in waits]
    every = [w for each in waits for w in each]
    return {"workers": workers, "acquisitions": len(every),
            "acquisitions_per_s": len(every) / elapsed,
            "wait_p50_us": percentile(every, 0.5), "wait_p99_us": percentile(every, 0.99),
            "least_served": min(counts), "most_served": max(counts)}


CASES = {"latency": run_latency, "inflight": run_inflight, "contended": run_contended}


def run(options):
    servers = options["servers"].split(",")
    take, close = MAKERS[options["impl"]](servers, options["width"])
    prefix = f"consensus-{os.getpid()}"
    try:
        result = CASES[options["case"]](options, take, prefix)
    finally:
        close()
    result.update({"impl": options["impl"], "label": options["label"], "case": options["case"],
                   "servers": len(servers),
                   "peak_rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss})
    return result


# --- the summary -----------------------------------------------------------

COLUMNS = {
    "latency": [("p50_us", "p50 µs"), ("p99_us", "p99 µs")],
    "inflight": [("ops_per_s", "cycles/s"), ("p50_us", "p50 µs"), ("p99_us", "p99 µs")],
    "contended": [("acquisitions_per_s", "acq/s"), ("wait_p99_us", "wait p99 µs"),
                  ("least_served", "least"), ("most_served", "most")],
}


def summarize(path, only=None):
    rows = {}
    order = []
    with open(path, encoding="utf-8") as results:
        for line in results:
            line = line.strip()
            if not line.startswith("{"):
                continue
            record = json.loads(line)
            label = record.get("label") or record.get("impl")
            case = record.get("case")
            if case not in COLUMNS:
                continue
            # The C++ driver's names for the fewest and most served.
            if "min_per_worker" in record:
                record.setdefault("least_served", record["min_per_worker"])
                record.setdefault("most_served", record["max_per_worker"])
            if label not in order:
                order.append(label)
            rows.setdefault((label, case), []).append(record)
    for case, columns in COLUMNS.items():
        if only and case != only:
            continue
        print(f"\n{case} (medians of the rounds)\n")
        print("| client | " + " | ".join(title for _, title in columns) + " | rounds |")
        print("|---|" + "--:|" * (len(columns) + 1))
        for label in order:
            records = rows.get((label, case))
            if not records:
                continue
            cells = []
            for field, _ in columns:
                values = [r[field] for r in records if field in r]
                value = statistics.median(values) if values else float("nan")
                cells.append(f"{value:,.0f}")
            print(f"| {label} | " + " | ".join(cells) + f" | {len(records)} |")


def main(argv):
    if len(argv) in (2, 3) and argv[0] == "--summarize":
        summarize(argv[1], argv[2] if len(argv) == 3 else None)
        return 0
    options = parse_args(argv)
    try:
        result = run(options)
    except Exception as error:
        sys.stderr.write(f"consensus_driver: {options['label']} {options['case']}: "
                         f"{type(error).__name__}: {error}\n")
        return 1
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
