"""A FastAPI service whose instances must never process one document twice
at once: POST /documents/{id}/process takes the document's quorum lock with
``async with`` and answers 423 Locked while another request — in this
instance or any other — holds it.

Run three instances against one quorum::

    REDLOCK_CONFIG=redlock.toml uvicorn documents_app:app --port 8001
    REDLOCK_CONFIG=redlock.toml uvicorn documents_app:app --port 8002
    REDLOCK_CONFIG=redlock.toml uvicorn documents_app:app --port 8003

PROCESSING_LOG, when set, names a file each processing appends its start and
end to (the example's test reads it to check that no two overlap).
"""

from __future__ import annotations

import asyncio
import os
import time

from fastapi import FastAPI, HTTPException

import redlock_quorum

app = FastAPI()
# One client per process, for every request; a busy lock answers at once
# (no retries): the caller is told 423 and may come back later.
client = redlock_quorum.Client(config=os.environ.get("REDLOCK_CONFIG"))
WORK_SECONDS = float(os.environ.get("PROCESSING_SECONDS", "0.2"))
LOG = os.environ.get("PROCESSING_LOG")


def record(event: str, document_id: str, fence: int) -> None:
    if LOG:
        with open(LOG, "a", encoding="utf-8") as log:
            log.write(f"{event} {document_id} {fence} {os.getpid()} {time.monotonic():.6f}\n")


@app.post("/documents/{document_id}/process")
async def process(document_id: str):
    try:
        async with client.lock_async(f"doc:{document_id}", fenced=True,
                                     cancel_on_loss=True) as guard:
            record("start", document_id, guard.fence)
            await asyncio.sleep(WORK_SECONDS)  # the processing itself
            record("end", document_id, guard.fence)
            return {"document": document_id, "processed": True, "fence": guard.fence}
    except redlock_quorum.NotAcquired:
        raise HTTPException(status_code=423, detail="the document is being processed")
    except redlock_quorum.LockLost:
        # Whatever was written under a lost lock is fenced by its token.
        raise HTTPException(status_code=503, detail="the lock was lost; try again")


@app.on_event("shutdown")
def close_client() -> None:
    client.close()
