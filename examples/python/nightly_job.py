"""The nightly archive job that every instance starts at the same hour and
only one may run: the first to take the quorum lock runs it and records the
day as done; the others find the lock busy, or the day done, and skip.

    REDLOCK_CONFIG=redlock.toml python3 nightly_job.py /var/lib/archive/done

The lock keeps two runs apart; the record keeps a later start (an instance
that was slow to boot) from running the day again once the first finished.
"""

from __future__ import annotations

import datetime
import os
import sys
import time

import redlock_quorum


def archive() -> None:
    time.sleep(float(os.environ.get("JOB_SECONDS", "0.5")))  # the job itself


def main(done_directory: str) -> int:
    day = datetime.date.today().isoformat()
    marker = os.path.join(done_directory, day)
    with redlock_quorum.Client(config=os.environ.get("REDLOCK_CONFIG")) as client:
        try:
            with client.lock("nightly-archive", fenced=True) as guard:
                if os.path.exists(marker):
                    print(f"skipped: {day} is done")
                    return 0
                archive()
                if guard.lost.is_set():
                    print("lost the lock; the next start runs the job again")
                    return 1
                with open(marker, "w", encoding="utf-8") as done:
                    done.write(f"fence {guard.fence} pid {os.getpid()}\n")
                print(f"ran the job for {day} with fencing token {guard.fence}")
                return 0
        except redlock_quorum.NotAcquired:
            print("skipped: another instance is running the job")
            return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
