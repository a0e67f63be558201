"""Quorum locks (the Redlock algorithm) for Python, on the redlock C++ library.

A lock is held by a majority of N independent Redis masters, renews itself
while the ``with`` block runs, says the moment it is lost (``guard.lost``), and
can hand out fencing tokens (``fenced=True``)::

    import redlock_quorum

    with redlock_quorum.Client(nodes=["127.0.0.1:7101", "127.0.0.1:7102",
                                      "127.0.0.1:7103"]) as client:
        with client.lock("nightly-report", fenced=True) as guard:
            write_report(token=guard.fence)   # the storage checks the token

docs/python.md has the whole API and its contract.
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
import weakref
from typing import Any, Dict, List, Optional, Sequence

from . import _native

__all__ = [
    "AsyncGuard",
    "Client",
    "ConfigError",
    "Guard",
    "Lock",
    "LockError",
    "LockLost",
    "NotAcquired",
]


class LockError(Exception):
    """A lock operation failed. ``nodes`` lists every node's outcome:
    dicts with ``node``, ``name``, ``status``, ``latency_us`` and ``detail``."""

    def __init__(self, message: str, nodes: Optional[List[Dict[str, Any]]] = None):
        super().__init__(message)
        self.nodes: List[Dict[str, Any]] = list(nodes or [])


class NotAcquired(LockError):
    """The lock was busy, or no majority granted it within the wait."""


class LockLost(LockError):
    """The lock was lost while held (it could not be renewed in time)."""


class ConfigError(LockError):
    """The quorum configuration is invalid; the message says
    ``file:line:col: what was expected``."""


def _raise(failure) -> None:
    kind, message, nodes = failure
    if kind == "invalid":
        raise ValueError(message)
    if kind == "not_acquired":
        raise NotAcquired(message, nodes)
    if kind == "lost":
        raise LockLost(message, nodes)
    raise LockError(message, nodes)


def _toml_value(key: str, value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ConfigError(f"{key}: expected a finite number, got {value!r}")
        return repr(value)
    if isinstance(value, str):
        escaped = "".join(
            c if c not in '"\\' and 0x20 <= ord(c) < 0x7F else f"\\u{ord(c):04x}" for c in value
        )
        return f'"{escaped}"'
    raise ConfigError(f"{key}: expected a bool, a number or a string, got {type(value).__name__}")


def _quorum_text(nodes: Sequence[str], settings: Dict[str, Any]) -> str:
    """The quorum file the arguments describe: one reader checks every
    configuration, so a keyword gets the file's checks and messages
    (_argument_error then names the argument instead of a line of this
    text)."""
    if isinstance(nodes, str):
        raise ConfigError('nodes: expected a list of "host:port" strings, got one string')
    lines: List[str] = []
    for address in nodes:
        if not isinstance(address, str):
            raise ConfigError(f"nodes: expected strings, got {type(address).__name__}")
        lines += ["[[node]]", "address = " + _toml_value("address", address)]
    if settings:
        lines.append("[lock]")
        for key, value in settings.items():
            lines.append(f"{key} = {_toml_value(key, value)}")
    return "\n".join(lines) + "\n"


def _argument_error(error: str, nodes: Sequence[str], settings: Dict[str, Any]) -> str:
    """A reader's error about _quorum_text's text ("nodes=:LINE:COL: ..."),
    told by the argument that line came from: ``nodes[i]`` or the keyword.
    Each node's address is two lines of the text, the [lock] header one."""
    head, _, rest = error.partition(": ")
    parts = head.split(":")
    if len(parts) != 3 or parts[0] != "nodes=" or not parts[1].isdigit():
        return error
    line = int(parts[1])
    origins = [f"nodes[{i}]" for i in range(len(nodes)) for _ in range(2)]
    if settings:
        origins.append("keyword arguments")
        # The keyword's name only: a value may be a secret given by mistake.
        origins += [f"keyword {key}" for key in settings]
    if 1 <= line <= len(origins):
        return f"{origins[line - 1]}: {rest}"
    return error


def _target(resource, semaphore, permits):
    """What lock()/lock_async() take: (target, permits) for the native side."""
    if semaphore is not None:
        if resource is not None:
            raise TypeError("give a resource or semaphore=, not both")
        if not isinstance(semaphore, str) or not isinstance(permits, int) or permits < 1:
            raise TypeError("semaphore= takes a name and permits= a count of at least 1")
        return semaphore, permits
    if permits is not None:
        raise TypeError("permits= goes with semaphore=")
    if isinstance(resource, str):
        return resource, None
    if isinstance(resource, (list, tuple)) and resource and all(
            isinstance(name, str) for name in resource):
        return list(resource), None
    raise TypeError("expected a resource name, or a non-empty list of them")


class Lock:
    """One holding from ``Client.acquire``: not renewed; extend or release it."""

    def __init__(self, record: Dict[str, Any]):
        self._record = record

    resource = property(lambda self: self._record["resource"])
    value = property(lambda self: self._record["value"], doc="The lock's random value.")
    fence = property(lambda self: self._record["fence"], doc="The fencing token, or None.")
    ttl_ms = property(lambda self: self._record["ttl_ms"])
    valid_until = property(
        lambda self: self._record["valid_until"],
        doc="The local validity deadline on the time.monotonic() scale.",
    )

    def __repr__(self) -> str:
        return f"Lock(resource={self.resource!r}, fence={self.fence!r})"


def _at_risk_share(share: Optional[float]) -> Optional[float]:
    """The at-risk share as the library takes it: None, or strictly
    between 0 and 1."""
    if share is None:
        return None
    share = float(share)
    if not 0.0 < share < 1.0:
        raise ValueError(f"at_risk_share must be between 0 and 1 (exclusive), not {share!r}")
    return share


class Guard:
    """A held lock that renews itself on the library's loop (no Python thread).

    ``lost`` is a ``threading.Event`` set the moment the lock is lost. Leaving
    the ``with`` block releases it; after a loss the block still ends
    normally — check ``guard.lost`` (or ``guard.valid``) before acting.

    ``at_risk`` is a ``threading.Event`` set while an at-risk episode lasts
    (``lock(..., at_risk_share=...)``): renewals have not succeeded in time
    and less than that share of the TTL is left. A renewal that succeeds
    clears it; a loss sets ``lost``. Never set without ``at_risk_share``.
    """

    def __init__(self, native, lost: threading.Event, at_risk: Optional[threading.Event] = None):
        self._native = native
        self.lost = lost
        self.at_risk = at_risk if at_risk is not None else threading.Event()

    value = property(lambda self: self._native.value, doc="The lock's random value.")
    resource = property(lambda self: self._native.resource)
    fence = property(lambda self: self._native.fence, doc="The fencing token, or None.")
    valid = property(lambda self: self._native.valid, doc="Held and inside its validity now.")
    valid_until = property(
        lambda self: self._native.valid_until,
        doc="The local validity deadline on the time.monotonic() scale (moves with renewals).",
    )
    renewals = property(lambda self: self._native.renewals)
    permit = property(lambda self: self._native.permit, doc="A semaphore permit's number, or None.")
    resources = property(lambda self: self._native.resources,
                         doc="Every resource held (a lock over several: in the order asked).")

    def release(self) -> int:
        """Releases now; the number of nodes that deleted the lock."""
        return self._native.release()

    def __enter__(self) -> "Guard":
        return self

    def __exit__(self, *exc) -> None:
        self.release()

    def __repr__(self) -> str:
        return f"Guard(resource={self.resource!r}, fence={self.fence!r}, valid={self.valid})"


class AsyncGuard:
    """A held lock for ``async with``: the same as Guard, with ``lost`` and
    ``at_risk`` ``asyncio.Event`` objects of the loop that entered the block.

    With ``cancel_on_loss=True`` a loss cancels the task that entered the
    block; the block then ends with ``LockLost`` instead of
    ``CancelledError``.
    """

    def __init__(self, client: "Client", target, permits, ttl_ms, wait_ms, fenced,
                 cancel_on_loss: bool, at_risk_share: Optional[float] = None):
        self._client = client
        self._args = (target, permits, ttl_ms, wait_ms, fenced)
        self._at_risk_share = at_risk_share
        self._risk_id = 0
        self.at_risk = asyncio.Event()
        self._cancel_on_loss = cancel_on_loss
        self._native = None
        self._lost_cancelled = False
        self.lost = asyncio.Event()

    value = property(lambda self: self._native.value, doc="The lock's random value.")
    resource = property(lambda self: self._native.resource)
    fence = property(lambda self: self._native.fence, doc="The fencing token, or None.")
    valid = property(lambda self: self._native.valid, doc="Held and inside its validity now.")
    valid_until = property(lambda self: self._native.valid_until)
    renewals = property(lambda self: self._native.renewals)
    permit = property(lambda self: self._native.permit, doc="A semaphore permit's number, or None.")
    resources = property(lambda self: self._native.resources)

    async def __aenter__(self) -> "AsyncGuard":
        loop = asyncio.get_running_loop()
        task = asyncio.current_task(loop)  # given the loop: no getpid() call to find it again
        completions = self._client._completions(loop)
        arrived = loop.create_future()

        def lost_now(_why: str, _unused) -> None:
            self.lost.set()
            if self._cancel_on_loss and task is not None and not task.done():
                self._lost_cancelled = True
                task.cancel()

        def deliver(native, failure) -> None:
            if arrived.cancelled():
                # The waiter gave up meanwhile: what it was granted goes back.
                completions.forget(lost_id)
                completions.forget(risk_id)
                if native is not None:
                    native.release_async(completions.native, 0)
                return
            arrived.set_result((native, failure))

        def risk_now(at_risk: bool, _unused) -> None:
            if at_risk:
                self.at_risk.set()
            else:
                self.at_risk.clear()

        lost_id = completions.expect(lost_now)
        done_id = completions.expect(deliver)
        risk_id = completions.expect(risk_now, repeating=True) if self._at_risk_share else 0
        self._risk_id = risk_id
        target, permits, ttl_ms, wait_ms, fenced = self._args
        cancel = self._client._native.lock_async(target, permits, ttl_ms, wait_ms, fenced,
                                                 completions.native, done_id, lost_id,
                                                 self._at_risk_share, risk_id)
        try:
            native, failure = await completions.arrival(arrived)
        except asyncio.CancelledError:
            if arrived.done() and not arrived.cancelled():
                # Granted, then cancelled before the task resumed: the grant
                # is in hand and goes back at once.
                completions.forget(lost_id)
                completions.forget(risk_id)
                granted, _ = arrived.result()
                if granted is not None:
                    granted.release_async(completions.native, 0)
            else:
                cancel()  # nothing stays on the nodes: a late grant is released
            raise
        if native is None:
            completions.forget(lost_id)
            completions.forget(risk_id)
            _raise(failure)
        self._native = native
        self._loop = loop  # __aexit__ runs on it: no second lookup of the running loop
        self._completions = completions
        self._lost_id = lost_id
        return self

    async def __aexit__(self, exc_type, exc, tb) -> bool:
        if self._native is not None:
            # Released on the library's loop; the answer comes back as the
            # acquire's did (bounded by the node timeouts).
            completions = self._completions
            released = self._loop.create_future()

            def deliver(count: int, _unused) -> None:
                if not released.done():
                    released.set_result(count)

            self._native.release_async(completions.native, completions.expect(deliver))
            try:
                await completions.arrival(released)
            finally:
                completions.forget(self._lost_id)
                completions.forget(self._risk_id)
        if self._lost_cancelled and exc_type is asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None and hasattr(task, "uncancel"):
                task.uncancel()
            raise LockLost("the lock was lost while the block ran") from exc
        return False


class _Completions:
    """What the library's loop hands to one asyncio loop: acquires decided,
    losses, releases answered. The native queue's eventfd is watched with
    ``loop.add_reader``; each wake-up takes every result queued so far and
    runs the handler registered under its id (ids unknown or forgotten are
    dropped: a release nobody waits for, a loss after the block ended)."""

    def __init__(self, loop: asyncio.AbstractEventLoop, spin_us: int):
        self.native = _native.CompletionQueue()
        self._spin_s = spin_us / 1e6
        # How long results have been taking to come back (a moving average,
        # seconds): polling is worth its CPU only while they come back
        # within the budget, as on a LAN; a queue whose results take longer
        # (a far quorum, waits in line) parks at once.
        self._typical_s = 0.0
        # Weak: the client's table of queues is keyed weakly by the loop, and
        # a strong reference here would keep every finished loop alive.
        self._loop = weakref.ref(loop)
        self._handlers: Dict[int, Any] = {}
        # Handlers that stay after they ran (an at-risk episode's beginning
        # and end come again), until forgotten.
        self._repeating: Dict[int, Any] = {}
        self._next_id = 0
        loop.add_reader(self.native.fd, self._take)

    async def arrival(self, future: "asyncio.Future"):
        """Awaits a result of the library's loop. While results have been
        coming back within the spin budget, first polls for up to that
        budget by yielding to the event loop (other tasks run meanwhile, and
        the result is taken on the first turn after it is queued) instead of
        parking at once: a parked event loop is woken from ``epoll_wait``
        and needs a second turn to resume the task, which costs an
        ``async with`` about as much as its two round trips to a local
        quorum cost a C++ caller (docs/python.md, "What it costs")."""
        started = time.perf_counter()
        try:
            if self._spin_s > 0 and self._typical_s <= self._spin_s:
                deadline = started + self._spin_s
                while not future.done() and time.perf_counter() < deadline:
                    await asyncio.sleep(0)
            return await future
        finally:
            self._typical_s += (time.perf_counter() - started - self._typical_s) / 8

    def expect(self, handler, repeating: bool = False) -> int:
        self._next_id += 1
        (self._repeating if repeating else self._handlers)[self._next_id] = handler
        return self._next_id

    def forget(self, completion_id: int) -> None:
        self._handlers.pop(completion_id, None)
        self._repeating.pop(completion_id, None)

    def _take(self) -> None:
        handlers = self._handlers
        repeating = self._repeating
        for completion_id, first, second in self.native.take():
            handler = handlers.pop(completion_id, None)
            if handler is None:
                handler = repeating.get(completion_id)
            if handler is not None:
                handler(first, second)

    def detach(self) -> None:
        """Stops watching the queue (from any thread; the loop may be gone)."""
        loop = self._loop()
        if loop is None or loop.is_closed():
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop or not loop.is_running():
            loop.remove_reader(self.native.fd)
        else:
            loop.call_soon_threadsafe(loop.remove_reader, self.native.fd)


class Client:
    """A client of one quorum.

    ``Client(config="redlock.toml")`` reads a quorum file; ``Client()`` finds
    one (``$REDLOCK_CONFIG``, else ``./redlock.toml``); ``Client(nodes=[...],
    ttl_ms=..., fenced=...)`` takes the nodes as ``"host:port"`` strings and
    ``[lock]`` keys as keyword arguments. Close it with ``close()`` or use it
    as a context manager. One client serves many threads.

    ``spin_us`` bounds how long a wait for the nodes polls for its result
    before it sleeps — an ``async with`` parks on the event loop, ``lock``,
    ``acquire`` and the releases block (0: they sleep at once); a wait
    polls only while results have been coming back within that time.
    """

    def __init__(self, config: Optional[str] = None, nodes: Optional[Sequence[str]] = None, *,
                 spin_us: int = 250, **lock_settings: Any):
        if config is not None and nodes is not None:
            raise ConfigError("give config= or nodes=, not both")
        if spin_us < 0:
            raise ConfigError(f"spin_us = {spin_us}: a budget is 0 or more microseconds")
        if nodes is None and lock_settings:
            raise ConfigError(
                "lock settings as keywords go with nodes=; a quorum file has its own [lock] table"
            )
        if nodes is not None:
            native, error = _native.client_from_text(_quorum_text(nodes, lock_settings), "nodes=")
        else:
            native, error = _native.client_from_file(None if config is None else str(config))
        if native is None:
            if nodes is not None:
                error = _argument_error(error, nodes, lock_settings)
            raise ConfigError(error)
        self._native = native
        self._spin_us = int(spin_us)
        native.set_spin_us(self._spin_us)
        # One completion queue per asyncio loop that awaits this client.
        self._loops: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Completions]" = (
            weakref.WeakKeyDictionary())

    def _completions(self, loop: asyncio.AbstractEventLoop) -> _Completions:
        completions = self._loops.get(loop)
        if completions is None:
            completions = self._loops[loop] = _Completions(loop, self._spin_us)
        return completions

    def lock(self, resource=None, *, semaphore: Optional[str] = None,
             permits: Optional[int] = None, ttl_ms: Optional[int] = None,
             wait_ms: Optional[int] = None, fenced: Optional[bool] = None,
             at_risk_share: Optional[float] = None) -> Guard:
        """Acquires and returns a self-renewing guard (use it in ``with``):
        ``resource`` is a name, or a list of names locked all at once or not
        at all; ``semaphore="name", permits=N`` takes one of N permits.
        With ``at_risk_share`` (0 < share < 1) ``guard.at_risk`` is set while
        renewals are late and less than that share of the TTL is left.
        Raises NotAcquired when the lock is busy or no majority granted it
        within ``wait_ms``; Ctrl-C during the wait cancels it."""
        target, count = _target(resource, semaphore, permits)
        share = _at_risk_share(at_risk_share)
        lost = threading.Event()
        at_risk = threading.Event()

        def risk_now(flag: bool) -> None:
            if flag:
                at_risk.set()
            else:
                at_risk.clear()

        native, failure = self._native.lock(target, count, ttl_ms, wait_ms, fenced,
                                            lambda _why: lost.set(), share, risk_now)
        if native is None:
            _raise(failure)
        return Guard(native, lost, at_risk)

    def lock_async(self, resource=None, *, semaphore: Optional[str] = None,
                   permits: Optional[int] = None, ttl_ms: Optional[int] = None,
                   wait_ms: Optional[int] = None, fenced: Optional[bool] = None,
                   cancel_on_loss: bool = False,
                   at_risk_share: Optional[float] = None) -> AsyncGuard:
        """The same as ``lock`` for ``async with`` on asyncio: the wait never
        blocks the event loop (the library's loop hands results back through
        a queue the event loop watches), and cancelling the waiting task
        cancels the acquire. Raises NotAcquired on entry."""
        target, count = _target(resource, semaphore, permits)
        return AsyncGuard(self, target, count, ttl_ms, wait_ms, fenced, cancel_on_loss,
                          _at_risk_share(at_risk_share))

    def acquire(self, resource: str, *, ttl_ms: Optional[int] = None,
                wait_ms: Optional[int] = None, fenced: Optional[bool] = None) -> Lock:
        """Acquires without renewal; raises NotAcquired."""
        record, failure = self._native.acquire(resource, ttl_ms, wait_ms, fenced)
        if record is None:
            _raise(failure)
        return Lock(record)

    def extend(self, lock: Lock, *, ttl_ms: Optional[int] = None) -> Lock:
        """Resets the lock's TTL on a majority; raises LockError when it is
        no longer held there."""
        record, failure = self._native.extend(lock._record, ttl_ms)
        if record is None:
            _raise(failure)
        return Lock(record)

    def release(self, lock: Lock) -> int:
        """Releases; the number of nodes that deleted the lock."""
        return self._native.release(lock._record)

    def inspect(self, resource: Optional[str] = None, *, semaphore: Optional[str] = None,
                permits: Optional[int] = None) -> Dict[str, Any]:
        """Who holds ``resource``, by majority read: ``holder`` (None, or a
        dict of ``value``, ``validity_ms`` and ``fence``), the majority's
        ``fence`` counter, ``readers``, and each node's view in ``nodes``
        (its key's ``value`` and ``pttl_ms``). ``semaphore="name",
        permits=N`` reports ``holders`` instead, one per permit a majority
        holds (each with its ``permit``), and each node's ``permits`` keys.
        Writes nothing. Raises LockError without a majority. A holder's
        value is a secret while the lock is held: it is what release
        checks."""
        if resource is not None and not isinstance(resource, str):
            raise TypeError("inspect takes one resource name (or semaphore=, permits=)")
        target, count = _target(resource, semaphore, permits)
        view, failure = self._native.inspect(target, count)
        if view is None:
            _raise(failure)
        return view

    def node_health(self) -> List[Dict[str, Any]]:
        """Each node's connection state, last error and transport warnings."""
        return self._native.node_health()

    def close(self) -> None:
        """Stops the client; guards still held lose their renewal."""
        for completions in list(self._loops.values()):
            completions.detach()
        self._loops.clear()
        self._native.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
