"""examples/python against real processes: three uvicorn instances of the
documents app behind one quorum, hit concurrently with httpx, and three
nightly jobs started at once."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

# python3-httpx, python3-fastapi and python3-uvicorn: scripts/setup installs
# them, so a missing one fails the suite rather than skipping these tests
# unnoticed; REDLOCK_SKIP_PYTHON_EXAMPLES=1 skips them on purpose.
if os.environ.get("REDLOCK_SKIP_PYTHON_EXAMPLES") == "1":
    pytest.skip("REDLOCK_SKIP_PYTHON_EXAMPLES=1", allow_module_level=True)
import fastapi  # noqa: E402,F401
import httpx  # noqa: E402
import uvicorn  # noqa: E402,F401

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "python"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def quorum_file(tmp_path: Path, addresses) -> Path:
    path = tmp_path / "redlock.toml"
    path.write_text("".join(f'[[node]]\naddress = "{a}"\n' for a in addresses)
                    + "[lock]\nretry_count = 0\nrelease_at_majority = false\n")
    return path


def environment(config: Path, **extra: str) -> dict:
    env = dict(os.environ, REDLOCK_CONFIG=str(config), **extra)
    return env


def test_three_instances_never_process_one_document_at_once(nodes, addresses, tmp_path):
    config = quorum_file(tmp_path, addresses)
    log = tmp_path / "processing.log"
    ports = [free_port() for _ in range(3)]
    servers = [
        subprocess.Popen([sys.executable, "-m", "uvicorn", "documents_app:app", "--host",
                          "127.0.0.1", "--port", str(port), "--app-dir", str(EXAMPLES),
                          "--log-level", "warning"],
                         env=environment(config, PROCESSING_LOG=str(log),
                                         PROCESSING_SECONDS="0.1"))
        for port in ports
    ]
    try:
        deadline = time.monotonic() + 20
        for port in ports:
            while True:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                    break
                except OSError:
                    assert time.monotonic() < deadline, "uvicorn did not start"
                    time.sleep(0.05)

        def post(i: int) -> int:
            port = ports[i % 3]
            document = f"d{i % 4}"
            with httpx.Client(timeout=10) as http:
                return http.post(f"http://127.0.0.1:{port}/documents/{document}/process").status_code

        with ThreadPoolExecutor(max_workers=24) as pool:
            statuses = list(pool.map(post, range(120)))
    finally:
        for server in servers:
            server.terminate()
        for server in servers:
            server.wait(timeout=10)

    assert set(statuses) <= {200, 423}, statuses
    assert statuses.count(423) > 0, "concurrent requests for one document were all served"
    # From the log: per document, no two processings overlap, and the
    # fencing tokens increase with each one.
    spans = {}
    for line in log.read_text().splitlines():
        event, document, fence, pid, at = line.split()
        spans.setdefault(document, {}).setdefault((int(fence), pid), {})[event] = float(at)
    assert sum(len(per) for per in spans.values()) == statuses.count(200)
    for document, runs in spans.items():
        ordered = sorted(runs.items(), key=lambda item: item[1]["start"])
        for (fence_a, _), a in ordered:
            assert "end" in a
        for ((fence_a, _), a), ((fence_b, _), b) in zip(ordered, ordered[1:]):
            assert a["end"] <= b["start"], f"{document}: two processings overlapped"
            assert fence_b > fence_a
    for node in nodes:
        assert node.command("KEYS", "redlock:lock:*") == b"*0\r\n"


def test_three_nightly_jobs_started_at_once_run_once(nodes, addresses, tmp_path):
    config = quorum_file(tmp_path, addresses)
    done = tmp_path / "done"
    done.mkdir()
    jobs = [
        subprocess.Popen([sys.executable, str(EXAMPLES / "nightly_job.py"), str(done)],
                         env=environment(config, JOB_SECONDS="0.3"), stdout=subprocess.PIPE,
                         text=True)
        for _ in range(3)
    ]
    outputs = [job.communicate(timeout=60)[0] for job in jobs]
    assert [job.returncode for job in jobs] == [0, 0, 0], outputs
    assert sum(out.startswith("ran the job") for out in outputs) == 1, outputs
    assert len(list(done.iterdir())) == 1
    # A fourth start later the same day finds the day done.
    later = subprocess.run([sys.executable, str(EXAMPLES / "nightly_job.py"), str(done)],
                           env=environment(config), capture_output=True, text=True, timeout=60)
    assert later.stdout.startswith("skipped:"), later.stdout
    for node in nodes:
        assert node.command("KEYS", "redlock:lock:*") == b"*0\r\n"
