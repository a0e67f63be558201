"""Real redis-server processes for the binding's tests, as the C++ fixture
starts them: free loopback ports, a temporary directory each, stopped by
their pid (never by name)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from typing import List

import pytest

REDIS_SERVER = os.environ.get("REDLOCK_TEST_REDIS_SERVER") or "/usr/bin/redis-server"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _ping(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2) as conn:
            conn.sendall(b"PING\r\n")
            return conn.recv(16).startswith(b"+PONG")
    except OSError:
        return False


class RedisNode:
    def __init__(self, cluster: bool = False) -> None:
        self.directory = tempfile.mkdtemp(prefix="redlock-py-redis-")
        for _attempt in range(5):
            self.port = _free_port()
            extra: List[str] = []
            if cluster:
                # Cluster mode, its bus on a free port of its own.
                self.bus_port = _free_port()
                extra = ["--cluster-enabled", "yes", "--cluster-port", str(self.bus_port),
                         "--cluster-config-file", os.path.join(self.directory, "nodes.conf"),
                         "--cluster-node-timeout", "2000"]
            self.process = subprocess.Popen(
                [REDIS_SERVER, "--port", str(self.port), "--bind", "127.0.0.1", "--dir",
                 self.directory, "--save", "", "--appendonly", "no", "--protected-mode", "no",
                 "--logfile", os.path.join(self.directory, "redis.log")] + extra,
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline and self.process.poll() is None:
                if _ping(self.port):
                    return
                time.sleep(0.02)
            self.stop()
        raise RuntimeError("redis-server did not start; see " + self.directory)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def command(self, *words: str) -> bytes:
        """One command over a fresh connection; the raw reply."""
        payload = f"*{len(words)}\r\n".encode()
        for word in words:
            data = word.encode()
            payload += b"$%d\r\n%s\r\n" % (len(data), data)
        with socket.create_connection(("127.0.0.1", self.port), timeout=2) as conn:
            conn.sendall(payload)
            return conn.recv(65536)

    def pause(self) -> None:
        """SIGSTOP: the node keeps its connections and answers nothing."""
        os.kill(self.process.pid, signal.SIGSTOP)

    def resume(self) -> None:
        os.kill(self.process.pid, signal.SIGCONT)

    def stop(self) -> None:
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGCONT)
            os.kill(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.kill(self.process.pid, signal.SIGKILL)
                self.process.wait()


@pytest.fixture
def nodes():
    started: List[RedisNode] = [RedisNode() for _ in range(3)]
    try:
        yield started
    finally:
        for node in started:
            node.stop()
            shutil.rmtree(node.directory, ignore_errors=True)


@pytest.fixture
def addresses(nodes) -> List[str]:
    return [node.address for node in nodes]


class RedisClusterMember:
    """A Redis Cluster of three masters, each given a third of the slots,
    formed with CLUSTER ADDSLOTSRANGE and CLUSTER MEET: one quorum member."""

    def __init__(self) -> None:
        self.masters: List[RedisNode] = []
        try:
            self.masters = [RedisNode(cluster=True) for _ in range(3)]
            bounds = [(0, 5460), (5461, 10921), (10922, 16383)]
            for master, (first, last) in zip(self.masters, bounds):
                assert master.command("CLUSTER", "ADDSLOTSRANGE", str(first), str(last)) == \
                    b"+OK\r\n"
            for master in self.masters[1:]:
                assert self.masters[0].command(
                    "CLUSTER", "MEET", "127.0.0.1", str(master.port), str(master.bus_port)) == \
                    b"+OK\r\n"
            deadline = time.monotonic() + 30
            while not all(b"cluster_state:ok" in m.command("CLUSTER", "INFO")
                          for m in self.masters):
                if time.monotonic() > deadline:
                    raise RuntimeError("the cluster did not form; see " +
                                       self.masters[0].directory)
                time.sleep(0.05)
        except BaseException:
            self.stop()
            raise

    @property
    def seeds(self) -> List[str]:
        return [master.address for master in self.masters]

    def stop(self) -> None:
        for master in self.masters:
            master.stop()
            shutil.rmtree(master.directory, ignore_errors=True)


@pytest.fixture
def cluster_members():
    started: List[RedisClusterMember] = []
    try:
        for _ in range(2):
            started.append(RedisClusterMember())
        yield started
    finally:
        for member in started:
            member.stop()
