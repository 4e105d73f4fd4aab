"""Executors run MatchSpecs and hand back one Outcome (MatchResult or MatchFailure) per spec.

Only the driver (the caller) writes to the database; executors just compute. The driver submits
specs, keeping about `capacity()` in flight, and takes outcomes with `next_outcome()` in completion
order (`run()` does exactly that). An executor never raises for a failing match: an exception in the
runner becomes MatchFailure(kind="error"), a lost worker or node MatchFailure(kind="worker_died").
It never retries either — the driver decides, and records every failure.

`SerialExecutor` plays in the driver's process. `RayExecutor` keeps one long-lived actor per CPU
(each imports Arena once and pins itself to a core) on a local Ray instance started on demand, or on
an existing cluster (`address`), and sends each actor batches of matches.

Pinning: a match's runner and its bot processes (children inherit the CPU affinity) share one core.
The arena/2 protocol is a strict ping-pong over pipes, so nothing runs in parallel inside a match,
and handing the pipe over on the same core avoids a cross-core wake-up per message: measured on 2
cores (bench/tournament_bench.py), a pinned serial run is 1.3-1.45x as fast. `pin=False` opts out,
for bots that run threads of their own.

Ray batching: an actor gets several matches per call when matches are short (sized so a call runs
~BATCH_TARGET_S), and its next call before the running one ends, so it never waits for the driver.
Outcomes still come back one match at a time, as each finishes (streaming generator).
"""

from __future__ import annotations

import math
import os
import socket
import sys
import time
import traceback
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from arena.errors import ConfigError, HostFault
from arena.match import MatchFailure, MatchResult, MatchSpec, Outcome, run_match
from arena.registry import SNAPSHOT_ENV

ERROR_LIMIT = 16 * 1024  # bytes of traceback kept in a MatchFailure (head and tail)
AUTO_RAY_MIN_GAMES = 500  # `auto` picks Ray from this many planned games (see choose_executor)
BATCH_TARGET_S = 0.3  # a Ray task should run about this long, so per-task costs stay negligible
BATCH_MAX = 64
STARTUP_ATTEMPTS = 3  # actors of one slot that may fail to start in a row before it is given up
QUARANTINE_AFTER = 3  # host faults in a row on one node before it gets no more work


@dataclass
class Notice:
    """Something that happened to an executor's workers worth telling and recording."""

    text: str  # one line for the terminal
    event: str = ""  # e.g. "quarantined"
    node: str = ""
    host: str = ""
    detail: str = ""


class Executor(ABC):
    """Runs matches; outcomes come back one per submitted spec, in completion order."""

    name: str = ""

    @abstractmethod
    def capacity(self) -> int:
        """How many specs may usefully be in flight (submitted, outcome not yet returned)."""

    @abstractmethod
    def submit(self, spec: MatchSpec) -> None:
        """Queue a spec to run; never blocks on the match itself."""

    @abstractmethod
    def in_flight(self) -> int:
        """Specs submitted whose outcome has not been returned yet."""

    @abstractmethod
    def next_outcome(self) -> Outcome:
        """Block until a submitted spec completes and return its outcome (RuntimeError if none)."""

    def ready(self) -> bool:
        """True if next_outcome would return without waiting (False when unsure: it may block)."""
        return False

    def notices(self) -> list[Notice]:
        """What happened to the executor since the last call worth telling."""
        return []

    def run(self, specs: Iterable[MatchSpec]) -> Iterator[Outcome]:
        """Run every spec, keeping capacity() in flight; yield each outcome as soon as it is ready."""
        specs = iter(specs)
        exhausted = False
        while True:
            while not exhausted and self.in_flight() < self.capacity():
                spec = next(specs, None)
                if spec is None:
                    exhausted = True
                else:
                    self.submit(spec)
            if not self.in_flight():
                return
            yield self.next_outcome()

    def close(self) -> None:  # noqa: B027 (optional: most executors hold nothing)
        """Release the executor's resources (safe twice)."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def execute(spec: MatchSpec, worker: str = "", node: str = "") -> Outcome:
    """run_match, with an exception in the runner turned into MatchFailure: kind "host" when a
    bot cannot run on this host (HostFault), else "error"."""
    host = socket.gethostname()
    try:
        result = run_match(spec)
    except HostFault as exc:
        return MatchFailure(spec.match_id, bounded(str(exc)), "host", worker or _default_worker(),
                            node, host)
    except Exception:  # KeyboardInterrupt and SystemExit still propagate
        return MatchFailure(spec.match_id, bounded(traceback.format_exc()), "error",
                            worker or _default_worker(), node, host)
    if worker:
        result.worker = worker
    result.node, result.host = node, host
    return result


def bounded(text: str, limit: int = ERROR_LIMIT) -> str:
    """`text` cut to at most `limit` UTF-8 bytes, keeping its head and its tail."""
    data = text.encode("utf-8", "replace")
    if len(data) <= limit:
        return text
    marker = f"\n[… {len(data) - limit} bytes dropped …]\n".encode()
    keep = (limit - len(marker) - 8) // 2  # slack: a cut multibyte character is dropped whole
    head = data[:keep].decode("utf-8", "ignore")
    tail = data[-keep:].decode("utf-8", "ignore")
    return head + marker.decode() + tail


def _default_worker() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


# -- CPU affinity -----------------------------------------------------------------------------------

def allowed_cpus() -> list[int]:
    """The CPUs this thread may run on (all CPUs where affinity is not supported)."""
    if hasattr(os, "sched_getaffinity"):
        return sorted(os.sched_getaffinity(0))
    return list(range(os.cpu_count() or 1))


def _current_cpu() -> int | None:
    try:  # field 39 of /proc/thread-self/stat: the CPU the thread last ran on
        with open("/proc/thread-self/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[36])
    except (OSError, ValueError, IndexError):
        return None


def _pin_process(cpu: int) -> None:
    """Pin every thread of this process to `cpu`; threads and children started later inherit it."""
    mask = {cpu}
    try:
        tids = [int(t) for t in os.listdir("/proc/self/task")]
    except OSError:
        tids = [0]
    for tid in tids:
        try:
            os.sched_setaffinity(tid, mask)
        except OSError:
            pass  # a thread that just ended


class SerialExecutor(Executor):
    """One match after another, in this process; the match runs when its outcome is asked for."""

    name = "serial"

    def __init__(self, pin: bool = True):
        self.pin = pin and hasattr(os, "sched_setaffinity")
        self._queue: deque[MatchSpec] = deque()

    def capacity(self) -> int:
        """One: submitting ahead gains nothing in a single process."""
        return 1

    def submit(self, spec: MatchSpec) -> None:
        """Queue the spec; it runs in next_outcome."""
        self._queue.append(spec)

    def in_flight(self) -> int:
        """Specs queued and not yet run."""
        return len(self._queue)

    def next_outcome(self) -> Outcome:
        """Run the oldest queued spec (pinned to one core if `pin`) and return its outcome."""
        if not self._queue:
            raise RuntimeError("next_outcome: no match in flight")
        spec = self._queue.popleft()
        if not self.pin:
            return execute(spec)
        # Only while the match runs: the driver's own affinity (and that of anything it starts
        # later, a Ray instance say) must not stay narrowed to one core.
        saved = os.sched_getaffinity(0)
        if len(saved) <= 1:
            return execute(spec)
        # The core the scheduler has us on now: between matches we run unpinned, so it is free to
        # move us off a core that a neighbour keeps busy.
        current = _current_cpu()
        os.sched_setaffinity(0, {current if current in saved else min(saved)})
        try:
            return execute(spec)
        finally:
            os.sched_setaffinity(0, saved)

    def close(self) -> None:
        """Drop queued specs (safe twice); the affinity is already restored after every match."""
        self._queue.clear()


# -- Ray --------------------------------------------------------------------------------------------

class _MatchWorker:
    """A Ray actor that lives for the whole run: imports Arena once, runs batches of matches."""

    def __init__(self):
        import ray

        import arena.games  # noqa: F401  (paid once here, not in the first match)

        self.allowed = allowed_cpus()
        self.ip = ray.util.get_node_ip_address()
        self.node = ray.get_runtime_context().get_node_id()
        self.worker = f"{self.ip}:{os.getpid()}"

    def info(self) -> dict:
        """Where this actor runs: node id, ip, worker name, and the CPUs it may use."""
        return {"node": self.node, "ip": self.ip, "worker": self.worker, "cpus": self.allowed}

    def pin(self, index: int) -> int:
        """Pin this process to the `index`-th allowed CPU (modulo their number); return the CPU."""
        cpu = self.allowed[index % len(self.allowed)]
        if hasattr(os, "sched_setaffinity"):
            _pin_process(cpu)
        return cpu

    def run_batch(self, batch: list[tuple[str, bytes]], snapshots: dict | None = None):
        """Run pickled specs one after another, yielding each outcome as soon as it is ready.

        `snapshots` maps a bot snapshot's hash to its packed copy in the object store, fetched
        (once per node) only for a snapshot this node does not see.
        """
        import ray
        from ray import cloudpickle

        from arena.snapshots import materialise_match

        refs = snapshots or {}
        host = socket.gethostname()

        def fetch(digest: str) -> bytes:
            if digest not in refs:
                raise HostFault(f"snapshot {digest[:8]} is not on this node and was not sent")
            return ray.get(refs[digest])

        for match_id, blob in batch:
            try:
                spec = cloudpickle.loads(blob)
            except Exception as exc:  # an in-process bot whose module this node cannot import
                yield MatchFailure(match_id, bounded(f"cannot load the match on node {host}: "
                                                     f"{type(exc).__name__}: {exc}"),
                                   "host", self.worker, self.node, host)
                continue
            try:
                spec = materialise_match(spec, fetch)
            except HostFault as exc:
                yield MatchFailure(match_id, bounded(f"{exc} (node {host})"), "host", self.worker,
                                   self.node, host)
                continue
            yield execute(spec, self.worker, self.node)


@dataclass
class _Batch:
    """Matches sent to one actor in one call, and the stream their outcomes come back on."""

    gen: object  # ray.ObjectRefGenerator
    pending: deque  # (spec, blob) not yet returned, in the order the actor runs them


@dataclass
class _Slot:
    """One actor of the pool (replaced when it dies); `index` keeps the pool's size fixed."""

    index: int
    actor: object = None
    ready_ref: object = None  # set while the actor starts
    info: dict | None = None
    core: int | None = None
    batches: list[_Batch] = field(default_factory=list)
    startup_failures: int = 0
    last_error: str = ""

    def busy(self) -> bool:
        """True while a dispatched match has not come back."""
        return any(b.pending for b in self.batches)


class RayExecutor(Executor):
    """A pool of long-lived Ray actors, one per CPU: a local instance by default, or `address`."""

    name = "ray"

    def __init__(self, address: str | None = None, workers: int | None = None, pin: bool = True,
                 *, num_cpus: int | None = None):
        # Ray is a dependency, always installed; it is imported here only because its import is
        # slow and a serial run (or a command that never plays) has no use for it.
        import ray
        from ray import cloudpickle

        self.ray = ray
        self._pickle = cloudpickle.dumps
        self.pin = pin
        self._started = False
        self.init_s = 0.0
        workers = workers or num_cpus
        if not ray.is_initialized():
            started = time.perf_counter()
            _init_ray(ray, address, workers)
            self.init_s = time.perf_counter() - started
            self._started = not address
            self._joined = bool(address)
        else:
            self._joined = False
        # A cluster's nodes may share no files: bots' snapshots are sent through the object store
        # (one machine sees the driver's own, so nothing is sent).
        self._ship = bool(address)
        self._snapshots: dict[str, object] = {}  # snapshot hash -> ObjectRef of its packed copy
        self._by_value: set[str] = set()  # modules of in-process bots pickled by value
        self.quarantined: dict[str, str] = {}  # Ray node id -> why it gets no more work
        self._host_faults: dict[str, int] = {}  # node id -> host faults in a row there
        self._avoid: dict[str, set[str]] = {}  # match id -> nodes where it failed
        self._alive: set[str] = set()  # alive nodes with CPUs, as of _alive_at (monotonic)
        self._alive_at = -math.inf
        self._notices: list[Notice] = []
        size = workers or int(ray.cluster_resources().get("CPU", 1))
        self._actor_cls = ray.remote(num_cpus=1, max_restarts=0, max_task_retries=0)(_MatchWorker)
        self._slots = [_Slot(i) for i in range(max(1, size))]
        for slot in self._slots:
            self._start(slot)
        self._queue: deque[tuple[MatchSpec, bytes]] = deque()
        self._done: deque[Outcome] = deque()
        self._mean_s: float | None = None  # running mean of match durations
        self.nodes: dict[str, str] = {}  # worker name (ip:pid) -> Ray node id, for every actor seen
        self._closed = False

    # -- the Executor interface ---------------------------------------------------------------------
    def capacity(self) -> int:
        """Per actor: the batch it runs, the one it has next, and one more queued here."""
        return 3 * len(self._slots) * self._batch_size()

    def submit(self, spec: MatchSpec) -> None:
        """Queue a spec; it is sent to the first actor that is free."""
        try:
            if self._ship:
                self._prepare_shipping(spec)
            blob = self._pickle(spec)
        except Exception:
            self._done.append(MatchFailure(spec.match_id, bounded(traceback.format_exc()), "error"))
            return
        self._queue.append((spec, blob))
        self._dispatch()

    def in_flight(self) -> int:
        """Queued, running, and finished but not yet returned."""
        running = sum(len(b.pending) for s in self._slots for b in s.batches)
        return len(self._queue) + running + len(self._done)

    def ready(self) -> bool:
        """True if an outcome is already here (polls the actors without waiting)."""
        while not self._done and self._poll(timeout=0):
            pass
        return bool(self._done)

    def next_outcome(self) -> Outcome:
        """Wait for the next match (of any actor) to finish; outcomes of a batch come one by one."""
        if not self.in_flight():
            raise RuntimeError("next_outcome: no match in flight")
        while not self._done:
            if not self._poll(timeout=None) and not self._done:
                raise RuntimeError("RayExecutor: specs in flight but nothing to wait for")
        return self._done.popleft()

    def notices(self) -> list[Notice]:
        """What happened to the pool since the last call (a node quarantined)."""
        out, self._notices = self._notices, []
        return out

    def close(self) -> None:
        """Stop the actors; shut down the Ray instance if this executor started it (safe twice)."""
        if self._closed:
            return
        self._closed = True
        ray = self.ray
        for slot in self._slots:
            if slot.actor is not None:
                try:
                    ray.kill(slot.actor, no_restart=True)
                except Exception:
                    pass
                slot.actor = None
        if self._started:
            _fast_shutdown(ray)
        elif self._joined:
            ray.shutdown()  # only disconnects from the cluster
        self._started = self._joined = False

    # -- internals ----------------------------------------------------------------------------------
    def _poll(self, timeout: float | None) -> bool:
        """Handle one event (an actor started, a match came back or an actor died), if any."""
        self._dispatch()
        waiting = {}
        for slot in self._slots:
            if slot.ready_ref is not None:
                waiting[slot.ready_ref] = (slot, None)
            for batch in slot.batches:
                waiting[batch.gen] = (slot, batch)
        if not waiting:
            self._fail_queue()  # no actor can start: nothing would ever run them
            return False
        ready, _ = self.ray.wait(list(waiting), num_returns=1, timeout=timeout)
        if not ready:
            return False
        slot, batch = waiting[ready[0]]
        if batch is None:
            self._on_ready(slot)
        else:
            self._on_batch(slot, batch)
        return True

    def _start(self, slot: _Slot) -> None:
        cls = self._actor_cls
        if self.quarantined:  # a replacement goes to a node still trusted, the least used one
            node = self._healthy_node()
            if node is None:
                slot.actor = slot.ready_ref = None
                slot.startup_failures = STARTUP_ATTEMPTS
                slot.last_error = "every node is quarantined"
                return
            from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

            cls = cls.options(scheduling_strategy=NodeAffinitySchedulingStrategy(node, soft=False))
        slot.actor = cls.remote()
        slot.ready_ref = slot.actor.info.remote()
        slot.info = slot.core = None
        slot.batches = []

    def _healthy_node(self) -> str | None:
        """The alive node with CPUs, not quarantined, that holds the fewest of our actors."""
        used: dict[str, int] = {}
        for slot in self._slots:
            if slot.info is not None and slot.actor is not None:
                used[slot.info["node"]] = used.get(slot.info["node"], 0) + 1
        nodes = self._cpu_nodes() - set(self.quarantined)
        return min(sorted(nodes), key=lambda n: used.get(n, 0), default=None)

    def _cpu_nodes(self) -> set[str]:
        """The cluster's alive nodes with CPUs (asked of the GCS at most once a second)."""
        now = time.monotonic()
        if now - self._alive_at > 1.0:
            self._alive = {n["NodeID"] for n in self.ray.nodes()
                           if n.get("Alive") and n.get("Resources", {}).get("CPU", 0) > 0}
            self._alive_at = now
        return self._alive

    def _other_nodes(self, node: str) -> set[str]:
        """Trusted nodes other than `node` that can take its matches: those our actors run on, and,
        while an actor of the pool is still starting, every alive node of the cluster with CPUs.

        A node whose actor is ready first must not replay a failed match (or be judged the last
        trusted node) just because the other nodes' actors are still importing Arena: its host
        faults come back in milliseconds and would use up every attempt before they are up.
        """
        banned = {node, *self.quarantined}
        started = {s.info["node"] for s in self._slots if s.info and s.actor is not None}
        if started - banned or not any(s.ready_ref is not None for s in self._slots):
            return started - banned
        return self._cpu_nodes() - banned

    def _prepare_shipping(self, spec: MatchSpec) -> None:
        """Put each bot snapshot the spec needs in the object store (once), and have in-process
        bots' own modules pickled by value: a node has Arena and the runtimes, nothing else."""
        from arena.snapshots import pack, snapshot_of

        for bot in spec.bots:
            if bot.in_process:
                _pickle_by_value(bot.factory, self._by_value)
                continue
            found = snapshot_of(bot)
            if found is not None and found[0] not in self._snapshots:
                self._snapshots[found[0]] = self.ray.put(pack(found[1]))

    def _count(self, slot: _Slot, outcome: Outcome) -> None:
        """Note where a match failed or worked; quarantine a node that keeps failing by host faults
        while another node is still trusted."""
        node = slot.info["node"] if slot.info else ""
        if isinstance(outcome, MatchResult):
            self._host_faults[node] = 0
            self._avoid.pop(outcome.match_id, None)
            return
        self._avoid.setdefault(outcome.match_id, set()).add(node)
        if outcome.kind != "host":
            return
        self._host_faults[node] = self._host_faults.get(node, 0) + 1
        if self._host_faults[node] < QUARANTINE_AFTER or node in self.quarantined:
            return
        if not self._other_nodes(node):
            return  # the last trusted node: its failures go to the driver as they are
        host = outcome.host or (slot.info["ip"] if slot.info else "?")
        why = (f"{self._host_faults[node]} matches in a row failed there for reasons that are "
               f"not the bots' (last: {_first_line(outcome.error)})")
        self.quarantined[node] = why
        self._notices.append(Notice(f"node {host} ({node[:12]}) quarantined: {why}; its matches "
                                    f"go to the other nodes", "quarantined", node, host, why))

    def _retire_quarantined(self, slot: _Slot) -> None:
        """A quarantined node's actor, once idle, is replaced by one on a trusted node."""
        if slot.info and slot.info["node"] in self.quarantined and not slot.busy():
            self._kill(slot)
            self._start(slot)

    def _on_ready(self, slot: _Slot) -> None:
        ref, slot.ready_ref = slot.ready_ref, None
        try:
            slot.info = self.ray.get(ref)
        except self.ray.exceptions.RayError as exc:
            slot.startup_failures += 1
            slot.last_error = bounded(str(exc))
            self._kill(slot)
            if slot.startup_failures < STARTUP_ATTEMPTS:
                self._start(slot)
            return
        slot.startup_failures = 0
        self.nodes[slot.info["worker"]] = slot.info["node"]
        if self.pin:
            # A distinct core per actor of the same node; the actor's calls run in order, so the
            # pin lands before its first batch.
            taken = {s.core for s in self._slots
                     if s is not slot and s.info and s.info["node"] == slot.info["node"]}
            slot.core = next(i for i in range(len(self._slots) + 1) if i not in taken)
            slot.actor.pin.remote(slot.core)

    def _on_batch(self, slot: _Slot, batch: _Batch) -> None:
        ray = self.ray
        try:
            ref = next(batch.gen)
        except StopIteration:
            slot.batches.remove(batch)
            self._requeue(batch)  # nothing should be left, but never lose a spec
            return
        try:
            outcome = ray.get(ref)
        except ray.exceptions.RayTaskError as exc:  # the batch loop itself broke: the actor lives
            spec, _ = batch.pending.popleft()
            self._done.append(MatchFailure(spec.match_id, bounded(str(exc)), "error",
                                           slot.info["worker"] if slot.info else ""))
            slot.batches.remove(batch)
            self._requeue(batch)
            return
        except ray.exceptions.RayError as exc:  # actor, worker process or node lost
            self._on_death(slot, exc, batch)
            return
        spec, _ = batch.pending.popleft()
        if isinstance(outcome, MatchResult):
            self._measure(outcome.duration_ms / 1000)
        self._done.append(outcome)
        if spec.match_id != outcome.match_id:  # cannot happen: the actor runs its batch in order
            raise RuntimeError(f"batch out of order: {outcome.match_id} for {spec.match_id}")
        self._count(slot, outcome)
        self._retire_quarantined(slot)
        self._dispatch()  # before the driver records this outcome

    def _on_death(self, slot: _Slot, exc: BaseException, failed: _Batch | None = None) -> None:
        """The match the actor was running failed with it; those it had not begun are queued again.

        The actor runs its batches in order, so the running match is the first unreturned one of
        the batch whose result failed (`failed`; else of the first batch with any left). It may in
        fact have finished with its result lost in transit: either way it needs playing again,
        which the driver decides. An earlier batch's unread results are dropped and its matches
        queued again: playing a match twice records it once, blaming the wrong one would not.
        """
        worker = slot.info["worker"] if slot.info else ""
        node = slot.info["node"] if slot.info else ""
        first = True
        order = slot.batches if failed is None else [failed, *(b for b in slot.batches if b is not failed)]
        for batch in order:
            if first and batch.pending:
                spec, _ = batch.pending.popleft()
                self._done.append(MatchFailure(spec.match_id, bounded(f"{type(exc).__name__}: {exc}"),
                                               "worker_died", worker, node))
                self._avoid.setdefault(spec.match_id, set()).add(node)
                first = False
            self._requeue(batch)
        self._kill(slot)
        self._start(slot)

    def _requeue(self, batch: _Batch) -> None:
        self._queue.extendleft(reversed(batch.pending))
        batch.pending.clear()

    def _kill(self, slot: _Slot) -> None:
        try:
            self.ray.kill(slot.actor, no_restart=True)
        except Exception:
            pass
        slot.actor = None
        slot.batches = []

    def _fail_queue(self) -> None:
        errors = "; ".join(dict.fromkeys(s.last_error for s in self._slots if s.last_error))
        while self._queue:
            spec, _ = self._queue.popleft()
            self._done.append(MatchFailure(
                spec.match_id, bounded(f"no Ray worker could start: {errors}"), "worker_died"))

    def _measure(self, seconds: float) -> None:
        self._mean_s = seconds if self._mean_s is None else 0.8 * self._mean_s + 0.2 * seconds

    def _batch_size(self) -> int:
        """Matches per task: enough for about BATCH_TARGET_S of work, one until a match is timed."""
        if not self._mean_s:
            return 1
        return max(1, min(BATCH_MAX, round(BATCH_TARGET_S / self._mean_s)))

    def _dispatch(self) -> None:
        """Give every idle actor a batch, then every busy one its next, while enough is queued.

        The next batch waits in the actor's own queue and starts the moment the running one ends:
        otherwise the actor would idle while the driver records the last outcome. Only while more
        specs are queued than there are actors, so the end of a run is not committed early.
        """
        started = [s for s in self._slots if s.info is not None and s.actor is not None
                   and s.info["node"] not in self.quarantined]
        if not self._queue or not started:
            return
        size = self._batch_size()
        live = sum(1 for s in self._slots if s.actor is not None)
        for slot in started:
            if not self._queue:
                return
            if not slot.busy():
                self._send(slot, min(size, max(1, math.ceil(len(self._queue) / live))))
        for slot in started:
            if len(self._queue) <= live:
                return
            if sum(1 for b in slot.batches if b.pending) == 1:
                self._send(slot, min(size, len(self._queue) // live))

    def _send(self, slot: _Slot, count: int) -> None:
        # Whole matches only, never a match split into chunks of deals: the failure budget
        # (max_failures) counts over a match's games in one runner, serially and on Ray alike.
        # A match that failed on this node goes elsewhere while another trusted node is up.
        node = slot.info["node"]
        elsewhere = None
        items = []
        for entry in self._queue:
            if len(items) >= count:
                break
            avoid = self._avoid.get(entry[0].match_id)
            if avoid and node in avoid:
                if elsewhere is None:
                    elsewhere = self._other_nodes(node)
                if elsewhere - avoid:
                    continue
            items.append(entry)
        if not items:
            return
        for entry in items:
            self._queue.remove(entry)
        refs = {}
        for spec, _ in items:
            for bot in spec.bots:
                digest = dict(bot.env).get(SNAPSHOT_ENV) if not bot.in_process else None
                if digest in self._snapshots:
                    refs[digest] = self._snapshots[digest]
        gen = slot.actor.run_batch.options(num_returns="streaming").remote(
            [(spec.match_id, blob) for spec, blob in items], refs)
        slot.batches.append(_Batch(gen, deque(items)))


def _first_line(text: str) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1][:200] if lines else ""


def _pickle_by_value(factory, done: set[str]) -> None:
    """Have cloudpickle send the module (package) of an in-process bot by value when it is not
    installed (a script's or a test's own module): a node cannot import what only the driver has."""
    import sysconfig

    from ray import cloudpickle

    target = getattr(factory, "func", factory)  # functools.partial
    module_name = getattr(target, "__module__", None) or type(target).__module__
    top = module_name.split(".")[0]
    if top in done or top in ("arena", "builtins", "__main__"):
        return
    done.add(top)
    module = sys.modules.get(top)
    where = os.path.realpath(getattr(module, "__file__", None) or "")
    installed = [os.path.realpath(p) for k, p in sysconfig.get_paths().items()
                 if k in ("stdlib", "platstdlib", "purelib", "platlib")]
    if module is None or not where or any(where.startswith(p + os.sep) for p in installed):
        return
    cloudpickle.register_pickle_by_value(module)


def _init_ray(ray, address: str | None, workers: int | None) -> None:
    kwargs = dict(include_dashboard=False, log_to_driver=False, logging_level="ERROR",
                  configure_logging=True)
    if address:
        _check_reachable(address)
        kwargs["address"] = address
        # The cluster's workers do not inherit this process's environment: tell them where this
        # very `arena` package and the driver's modules (in-process bots) are.
        kwargs["runtime_env"] = {"env_vars": {"PYTHONPATH": _worker_path()}}
    else:
        kwargs["num_cpus"] = workers or len(allowed_cpus())
    # A local instance's raylet inherits os.environ, and its workers inherit the raylet's: cheaper
    # than a runtime_env (~1.5 s of set-up), so set PYTHONPATH only while Ray starts.
    saved = os.environ.get("PYTHONPATH")
    if not address:
        os.environ["PYTHONPATH"] = _worker_path()
    try:
        ray.init(**kwargs)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        hint = ""
        if address and os.environ.get("RAY_AUTH_MODE") != "token":
            hint = (" (if the cluster uses token authentication, set RAY_AUTH_MODE=token "
                    "and RAY_AUTH_TOKEN, see the README)")
        raise ConfigError(
            f"cannot start or join Ray at {address or 'local'}: {exc}{hint}"
        ) from None
    finally:
        if not address:
            if saved is None:
                os.environ.pop("PYTHONPATH", None)
            else:
                os.environ["PYTHONPATH"] = saved


def _fast_shutdown(ray) -> None:
    """ray.shutdown, without its one-second wait for the autoscaler monitor of a local instance.

    The monitor ignores SIGTERM, so shutdown waits its full grace period before SIGKILL; a local
    instance has nothing to autoscale, so it is killed outright first. Private API, hence guarded.
    """
    try:
        node = ray._private.worker._global_node
        for info in node.all_processes.get("monitor", []):
            info.process.kill()
            info.process.wait(timeout=1)
    except Exception:
        pass
    ray.shutdown()


def _check_reachable(address: str, timeout: float = 5.0) -> None:
    """Fail fast when nothing listens at a `host:port` address (Ray itself retries for minutes)."""
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit() or "://" in address:
        return  # `auto`, `ray://…` and other forms are left to Ray
    try:
        socket.create_connection((host, int(port)), timeout=timeout).close()
    except OSError as exc:
        raise ConfigError(f"cannot join Ray at {address}: nothing answers there ({exc})") from None


def _worker_path() -> str:
    """PYTHONPATH for Ray workers: this package's root, the cwd, and the driver's own sys.path dirs.

    In-process bots are pickled by reference to their module, so a worker must import the very
    modules the driver did (a test directory, a script's directory), but not another site-packages.
    """
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    prefixes = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    own = [
        p for p in sys.path
        if p and os.path.isdir(p) and "site-packages" not in p
        and not any(os.path.realpath(p).startswith(pre + os.sep) for pre in prefixes)
    ]
    parts = [root, os.getcwd(), *os.environ.get("PYTHONPATH", "").split(os.pathsep), *own]
    return os.pathsep.join(dict.fromkeys(p for p in parts if p))


def choose_executor(kind: str, planned_games: int, cpus: int | None = None,
                    ray_address: str | None = None) -> tuple[str, str]:
    """("serial"|"ray", reason) for `kind` auto|ray|serial; auto weighs Ray's start-up cost, and
    is Ray when a cluster's address is given. Both drivers choose so (arena.session.open_executor)."""
    if ray_address and kind == "auto":
        return "ray", f"--ray-address {ray_address}"
    if kind in ("serial", "ray"):
        return kind, "requested"
    if kind != "auto":
        raise ConfigError(f"unknown executor {kind!r} (choose auto, ray or serial)")
    cpus = cpus or len(allowed_cpus())
    if cpus <= 1:
        return "serial", "auto: 1 CPU"
    # Measured on 2 CPUs: a local Ray costs ~2.7 s more than serial to start and stop (import, init,
    # actors, shutdown) and then plays ~1.8x as fast as pinned serial (~47 Xeri games/s). It breaks
    # even at ~6 s of serial work (~300 games) and wins clearly (~20%) from ~500.
    if planned_games < AUTO_RAY_MIN_GAMES:
        return "serial", f"auto: {planned_games} games planned, below {AUTO_RAY_MIN_GAMES}"
    return "ray", f"auto: {planned_games} games planned on {cpus} CPUs"


def make_executor(kind: str, ray_address: str | None = None, workers: int | None = None,
                  pin: bool = True) -> Executor:
    """An executor by name, `ray` or `serial` (resolve `auto` with choose_executor first)."""
    if kind == "serial":
        return SerialExecutor(pin=pin)
    if kind == "ray":
        return RayExecutor(address=ray_address, workers=workers, pin=pin)
    raise ConfigError(f"unknown executor {kind!r} (choose ray or serial)")
