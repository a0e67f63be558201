"""The binding's blocking API against real nodes: `with` locks, exclusion
across threads, fencing, loss, errors with node outcomes, configuration."""

from __future__ import annotations

import threading
import time

import pytest

import redlock_quorum
from redlock_quorum import Client, ConfigError, NotAcquired


def lock_key(resource: str) -> str:
    return "redlock:lock:" + resource


def test_a_with_block_holds_the_lock_on_every_node_and_releases_it(nodes, addresses):
    with Client(nodes=addresses, release_at_majority=False) as client:
        with client.lock("report") as guard:
            assert guard.valid
            assert guard.valid_until > time.monotonic()
            assert not guard.lost.is_set()
            for node in nodes:
                assert guard.value.encode() in node.command("GET", lock_key("report"))
        for node in nodes:
            assert node.command("EXISTS", lock_key("report")) == b":0\r\n"


def test_a_busy_lock_raises_not_acquired_with_every_nodes_outcome(addresses):
    with Client(nodes=addresses, retry_count=0) as client:
        with client.lock("busy"):
            with pytest.raises(NotAcquired) as raised:
                client.lock("busy")
    assert len(raised.value.nodes) == 3
    assert {node["status"] for node in raised.value.nodes} <= {"busy", "pending"}
    assert any(node["status"] == "busy" for node in raised.value.nodes)
    assert isinstance(raised.value, redlock_quorum.LockError)


def test_sixteen_threads_never_hold_the_lock_at_once(addresses):
    inside = 0
    most = 0
    entered = 0
    guard_lock = threading.Lock()
    with Client(nodes=addresses) as client:

        def worker():
            nonlocal inside, most, entered
            for _ in range(5):
                with client.lock("shared", wait_ms=20000):
                    with guard_lock:
                        inside += 1
                        entered += 1
                        most = max(most, inside)
                    time.sleep(0.001)
                    with guard_lock:
                        inside -= 1

        threads = [threading.Thread(target=worker) for _ in range(16)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
            assert not thread.is_alive()
    assert entered == 80
    assert most == 1


def test_fencing_tokens_increase(addresses):
    with Client(nodes=addresses, fenced=True) as client:
        tokens = []
        for _ in range(5):
            with client.lock("ledger") as guard:
                tokens.append(guard.fence)
    assert all(isinstance(token, int) for token in tokens)
    assert tokens == sorted(tokens) and len(set(tokens)) == 5


def test_a_lost_lock_sets_the_event(nodes, addresses):
    with Client(nodes=addresses, ttl_ms=600) as client:
        guard = client.lock("taken-away")
        # Someone deletes the lock on every node: the next renewal fails.
        for node in nodes:
            node.command("DEL", lock_key("taken-away"))
        assert guard.lost.wait(timeout=5)
        assert not guard.valid
        guard.release()


def test_at_risk_is_set_while_renewals_are_late_and_cleared_by_a_renewal(nodes, addresses):
    # Renewals fail fast and retry (node timeout 100 ms) while two of three
    # nodes are stopped; with 60 % of a 3 s TTL as the share, an episode
    # begins about 1.2 s after the last renewal, long before the loss.
    with Client(nodes=addresses, ttl_ms=3000, node_timeout_ms=100,
                reconnect_max_ms=100) as client:
        guard = client.lock("at-risk", at_risk_share=0.6)
        assert isinstance(guard.at_risk, threading.Event)
        assert not guard.at_risk.is_set()
        for node in nodes[:2]:
            node.pause()
        try:
            assert guard.at_risk.wait(timeout=5)
            assert not guard.lost.is_set()
        finally:
            for node in nodes[:2]:
                node.resume()
        deadline = time.monotonic() + 5
        while guard.at_risk.is_set() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not guard.at_risk.is_set(), "a renewal that succeeded ends the episode"
        assert guard.valid and not guard.lost.is_set()
        guard.release()


def test_at_risk_share_outside_zero_to_one_is_a_value_error(addresses):
    with Client(nodes=addresses) as client:
        for bad in (0, 1, 1.5, -0.1):
            with pytest.raises(ValueError):
                client.lock("bad-share", at_risk_share=bad)
        guard = client.lock("no-share")
        assert not guard.at_risk.is_set()
        guard.release()


def test_acquire_extend_release_without_a_block(nodes, addresses):
    with Client(nodes=addresses, release_at_majority=False, max_ttl_ms=30000) as client:
        lock = client.acquire("manual", ttl_ms=5000)
        assert lock.value and lock.fence is None
        longer = client.extend(lock, ttl_ms=20000)
        ttl = int(nodes[0].command("PTTL", lock_key("manual"))[1:].split(b"\r")[0])
        assert ttl > 10000
        assert client.release(longer) == 3


def test_threads_of_one_client_taking_turns_with_acquire_and_release_all_get_the_lock(addresses):
    # A contended acquire waits in the fair queue, and the lock it wins
    # there must be released as the queue's, which removes the winner's
    # place: released as a plain lock (its record without the queue id),
    # that place stayed first in line for the lock's TTL, and every other
    # thread's wait ran out.
    with Client(nodes=addresses, max_ttl_ms=60000) as client:
        counts = [0] * 4
        failures = []

        def take_turns(index):
            try:
                for _ in range(15):
                    lock = client.acquire("turns", ttl_ms=60000, wait_ms=10000)
                    counts[index] += 1
                    client.release(lock)
            except NotAcquired as error:
                failures.append(str(error))

        threads = [threading.Thread(target=take_turns, args=(i,)) for i in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert failures == []
        assert counts == [15, 15, 15, 15]


def test_an_invalid_argument_is_a_value_error_not_a_busy_lock(addresses):
    with Client(nodes=addresses) as client:
        for bad in ({"ttl_ms": 0}, {"ttl_ms": -5}, {"wait_ms": -1}):
            with pytest.raises(ValueError):
                client.lock("bad-arguments", **bad)
            with pytest.raises(ValueError):
                client.acquire("bad-arguments", **bad)


def test_configuration_errors_say_where_and_what(tmp_path):
    with pytest.raises(ConfigError) as raised:
        Client(nodes=["127.0.0.1:1"], tll_ms=5)
    assert "did you mean ttl_ms?" in str(raised.value)
    assert str(raised.value).startswith("keyword tll_ms: ")
    with pytest.raises(ConfigError) as raised:
        Client(nodes=["127.0.0.1:1"], ttl_ms="abc", password_typo="hunter2")
    assert str(raised.value).startswith("keyword ")
    assert "hunter2" not in str(raised.value)
    with pytest.raises(ConfigError) as raised:
        Client(nodes=["127.0.0.1:1", "nowhere:not-a-port"])
    assert str(raised.value).startswith("nodes[1]: ")
    bad = tmp_path / "redlock.toml"
    bad.write_text('[[node]]\naddress = "127.0.0.1:1"\n[lock]\nttl_ms = -1\n')
    with pytest.raises(ConfigError) as raised:
        Client(config=str(bad))
    assert str(raised.value).startswith(str(bad) + ":4:")
    with pytest.raises(ConfigError):
        Client(config=str(bad), nodes=["127.0.0.1:1"])
    with pytest.raises(ConfigError) as raised:
        Client(nodes=["127.0.0.1:1"], spin_us=-1)
    assert "spin_us = -1" in str(raised.value)


def test_a_quorum_file_serves_as_well(tmp_path, addresses):
    quorum = tmp_path / "redlock.toml"
    quorum.write_text("".join(f'[[node]]\naddress = "{a}"\n' for a in addresses))
    with Client(config=str(quorum)) as client:
        with client.lock("from-file") as guard:
            assert guard.valid
        # A lock is decided at a majority: the last session may still be
        # setting up; it is up within a bounded wait.
        deadline = time.monotonic() + 5
        while not all(node["connected"] for node in client.node_health()):
            assert time.monotonic() < deadline, client.node_health()
            time.sleep(0.01)
        assert [node["warnings"] for node in client.node_health()] == [[], [], []]


WORKER = r"""
import socket, sys
import redlock_quorum

addresses, port, rounds = sys.argv[1].split(","), int(sys.argv[2]), int(sys.argv[3])

def command(*words):
    payload = b"*%d\r\n" % len(words)
    for word in words:
        payload += b"$%d\r\n%s\r\n" % (len(word), word.encode())
    with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
        conn.sendall(payload)
        return conn.recv(1024)

with redlock_quorum.Client(nodes=addresses) as client:
    for _ in range(rounds):
        with client.lock("counter", wait_ms=30000):
            # A read-modify-write that loses updates unless it is exclusive.
            reply = command("GET", "counter")
            value = int(reply.split(b"\r\n")[1]) if reply.startswith(b"$") and not reply.startswith(b"$-1") else 0
            command("SET", "counter", str(value + 1))
"""


def test_four_processes_lose_no_update_of_a_shared_counter(nodes, addresses, tmp_path):
    import os
    import subprocess
    import sys

    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    rounds = 25
    workers = [
        subprocess.Popen([sys.executable, str(script), ",".join(addresses), str(nodes[0].port),
                          str(rounds)], env=dict(os.environ))
        for _ in range(4)
    ]
    for worker in workers:
        assert worker.wait(timeout=120) == 0
    assert nodes[0].command("GET", "counter") == b"$3\r\n100\r\n"


INTERRUPTED = r"""
import sys, redlock_quorum
client = redlock_quorum.Client(nodes=sys.argv[1].split(","), release_at_majority=False)
print("waiting", flush=True)
try:
    getattr(client, sys.argv[2])("held-elsewhere", wait_ms=60000)
except KeyboardInterrupt:
    print("interrupted", flush=True)
client.close()
"""


@pytest.mark.parametrize("call", ["lock", "acquire"])
def test_ctrl_c_cancels_a_wait_and_leaves_nothing_behind(nodes, addresses, tmp_path, call):
    import signal
    import subprocess
    import sys

    with Client(nodes=addresses, release_at_majority=False) as holder:
        held = holder.lock("held-elsewhere")
        script = tmp_path / "interrupted.py"
        script.write_text(INTERRUPTED)
        waiter = subprocess.Popen([sys.executable, str(script), ",".join(addresses), call],
                                  stdout=subprocess.PIPE, text=True)
        assert waiter.stdout.readline().strip() == "waiting"
        # Inside the wait once it is in the node's fair queue (where a
        # waiter waits by default).
        deadline = time.monotonic() + 5
        while nodes[0].command("ZCARD", "redlock:queue:held-elsewhere") == b":0\r\n":
            assert time.monotonic() < deadline, "the waiter never started waiting"
            time.sleep(0.01)
        started = time.monotonic()
        waiter.send_signal(signal.SIGINT)
        try:
            out, _ = waiter.communicate(timeout=10)
        finally:
            if waiter.poll() is None:
                waiter.kill()
        assert waiter.returncode == 0
        assert out.strip() == "interrupted"
        assert time.monotonic() - started < 5
        held.release()
    for node in nodes:
        assert node.command("EXISTS", lock_key("held-elsewhere")) == b":0\r\n"


def test_ten_permits_of_a_semaphore_and_no_eleventh(addresses):
    with Client(nodes=addresses, retry_count=0) as client:
        guards = [client.lock(semaphore="llm-keys", permits=10) for _ in range(10)]
        assert sorted(guard.permit for guard in guards) == list(range(10))
        with pytest.raises(NotAcquired):
            client.lock(semaphore="llm-keys", permits=10)
        guards.pop().release()
        with client.lock(semaphore="llm-keys", permits=10) as again:
            assert again.permit is not None
        for guard in guards:
            guard.release()


def test_several_resources_at_once_or_none(nodes, addresses):
    with Client(nodes=addresses, retry_count=0, release_at_majority=False) as client:
        with client.lock(["a", "b"]) as both:
            assert both.resources == ["a", "b"]
            with pytest.raises(NotAcquired):
                client.lock(["b", "c"])
            # All or none: the failed attempt left no hold on "c".
            for node in nodes:
                assert node.command("EXISTS", lock_key("c")) == b":0\r\n"
        with pytest.raises(TypeError):
            client.lock(semaphore="s")
        with pytest.raises(TypeError):
            client.lock([])


def test_inspect_names_the_holder_by_majority(addresses):
    with Client(nodes=addresses, fenced=True) as client:
        assert client.inspect("seen")["holder"] is None
        with client.lock("seen") as guard:
            view = client.inspect("seen")
            assert view["holder"]["value"] == guard.value
            assert view["holder"]["fence"] == guard.fence
            assert 0 < view["holder"]["validity_ms"] <= 10000
            assert len(view["nodes"]) == 3


def test_inspect_of_a_semaphore_names_each_permits_holder(addresses):
    with Client(nodes=addresses, fenced=True) as client:
        view = client.inspect(semaphore="keys", permits=3)
        assert view["semaphore"] == "keys" and view["permits"] == 3
        assert view["holders"] == []
        with client.lock(semaphore="keys", permits=3) as first, \
                client.lock(semaphore="keys", permits=3) as second:
            view = client.inspect(semaphore="keys", permits=3)
            held = {holder["permit"]: holder for holder in view["holders"]}
            assert set(held) == {first.permit, second.permit}
            assert held[first.permit]["value"] == first.value
            assert held[second.permit]["fence"] == second.fence
            assert 0 < held[first.permit]["validity_ms"] <= 10000
            assert len(view["nodes"]) == 3
            for node in view["nodes"]:
                assert node["answered"]
                values = [permit["value"] for permit in node["permits"]]
                assert first.value in values and second.value in values
        assert client.inspect(semaphore="keys", permits=3)["holders"] == []
        with pytest.raises(TypeError):
            client.inspect(["a", "b"])


def test_a_guard_dropped_without_release_releases_its_lock(nodes, addresses):
    import gc

    with Client(nodes=addresses, release_at_majority=False) as client:
        guard = client.lock("dropped")
        assert nodes[0].command("EXISTS", lock_key("dropped")) == b":1\r\n"
        del guard
        gc.collect()
        for node in nodes:
            assert node.command("EXISTS", lock_key("dropped")) == b":0\r\n"


def test_a_client_dropped_without_close_while_its_locks_are_lost_shuts_down(nodes, addresses):
    import gc

    client = Client(nodes=addresses, ttl_ms=300)
    # A bounded wait: on a loaded machine a fresh node may answer the first
    # probe late, and the others then wait out a recovery delay (max_ttl,
    # here 300 ms) before they grant.
    guards = [client.lock(f"orphan-{i}", wait_ms=5000) for i in range(20)]
    for node in nodes:
        node.command("FLUSHALL")  # every renewal now fails: losses arrive meanwhile
    del client, guards
    gc.collect()  # the client's loop thread stops without deadlocking on the GIL


def test_the_readme_python_quickstart_runs_as_written(nodes, addresses, tmp_path):
    """The first ```python block of README.md, run as written from a
    directory whose ./redlock.toml names the test nodes."""
    import os
    import re
    import subprocess
    import sys
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    block = re.search(r"```python\n(.*?)```", readme, re.S)
    assert block, "README.md has no Python quickstart"
    (tmp_path / "redlock.toml").write_text(
        "".join(f'[[node]]\naddress = "{a}"\n' for a in addresses))
    environment = dict(os.environ)
    environment.pop("REDLOCK_CONFIG", None)
    ran = subprocess.run([sys.executable, "-c", block.group(1)], cwd=tmp_path, env=environment,
                         capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0, ran.stderr
    assert re.fullmatch(r"holding nightly-report with fencing token \d+\n", ran.stdout), ran.stdout
    # Released: at once on a majority (release_at_majority, the default),
    # and on the last node once its answer is in.
    deadline = time.monotonic() + 5
    for node in nodes:
        while node.command("EXISTS", lock_key("nightly-report")) != b":0\r\n":
            assert time.monotonic() < deadline, "the quickstart left its lock on a node"
            time.sleep(0.01)
