"""One cgroup per bot: memory (tmpfs pages included), process count, CPU quota and cores, and a kill
of everything in it.

rlimits bound one process at a time and miss what a bot can hold outside its address space (tmpfs
and /dev/shm pages, a tree of many processes); a cgroup bounds the bot's whole tree, and the kernel
counts every page charged to it, so a bot cannot get around the limit by forking or by writing files.

Layout: under the runner's own cgroup in each hierarchy (read from /proc/self/cgroup and
/proc/self/mountinfo, so a runner that sits in a nested or delegated cgroup keeps its bots below
itself), a folder `arena`, and in it one folder per bot named by the bot's tag.
- cgroup v2 (one unified mount with memory, pids, cpu, cpuset in cgroup.controllers): the
  controllers are enabled in the runner's cgroup.subtree_control and in `arena`'s; the bot folders
  are leaves. v2 forbids a non-root cgroup with processes from enabling controllers for children,
  so a runner in a populated non-root cgroup gets v2 only if they were enabled there already.
- cgroup v1: one folder per hierarchy (memory, pids, cpu, cpuset, and freezer for the kill).
`support()` probes once per process by really creating, configuring, joining and removing a cgroup.

Ownership: the runner holds a shared flock on each of a bot's folders for the cgroup's life (the
kernel drops it when the runner dies, however), so `sweep` removes only the cgroups of dead runners
and never those of a live runner beside it (another tournament, another Ray worker on the host).
Every folder, not one: two runners in different cgroups of one hierarchy share the other
hierarchies' folders, and each sees only the folders under its own cgroup.

A limit whose controller is not usable here is not applied (support().controllers says which are).
"""

from __future__ import annotations

import errno
import fcntl
import functools
import os
import re
import secrets
import signal
import subprocess
import sys
import time
from dataclasses import dataclass

from arena.players.held import make_held

WANTED = ("memory", "pids", "cpu", "cpuset")
V1_HIERARCHIES = (*WANTED, "freezer")  # freezer only serves kill(): it stops a fork bomb in place
PROC_CGROUP = "/proc/self/cgroup"  # module-level so unit tests can point them at a fake cgroupfs
MOUNTINFO = "/proc/self/mountinfo"
FOLDER = "arena"
TAG = re.compile(r"[0-9a-f]{8,64}")
CFS_PERIOD_US = 100_000
KILL_TIMEOUT_S = 2.0
FREEZE_TIMEOUT_S = 0.25  # a task in uninterruptible sleep delays freezing; kill what we see then
PROBE_LIMITS = dict(memory_bytes=1 << 30, pids=64, cpu_cores=1.0, cpus=None)

# Writes "0" (the writer itself) into each cgroup.procs given; prints the indexes that failed.
_JOIN_PROBE = """
import os, sys
bad = []
for i, path in enumerate(sys.argv[1:]):
    try:
        fd = os.open(path, os.O_WRONLY)
        try:
            os.write(fd, b"0")
        finally:
            os.close(fd)
    except OSError:
        bad.append(str(i))
print(" ".join(bad))
"""


@dataclass(frozen=True)
class CgroupSupport:
    """What cgroups this machine offers the runner."""

    version: str  # "v2", "v1" or "none"
    controllers: tuple[str, ...]  # of memory, pids, cpu, cpuset that are usable
    why: str  # one short phrase for the run's first line


class _Fs:
    """The cgroupfs calls that change state, in one place so a unit test can stand in a fake kernel."""

    def write(self, path: str, text: str) -> None:
        """Write `text` to an existing cgroup file (never create one)."""
        fd = os.open(path, os.O_WRONLY)
        try:
            os.write(fd, text.encode())
        finally:
            os.close(fd)

    def mkdir(self, path: str) -> None:
        """Create a cgroup."""
        os.mkdir(path)

    def rmdir(self, path: str) -> None:
        """Remove an empty cgroup."""
        os.rmdir(path)


_fs = _Fs()


@dataclass(frozen=True)
class _Hierarchy:
    version: str
    controllers: tuple[str, ...]  # the ones bot cgroups configure here
    base: str  # the `arena` folder; bot cgroups are base/<tag>


@dataclass(frozen=True)
class _Layout:
    support: CgroupSupport
    hierarchies: tuple[_Hierarchy, ...]


@dataclass(frozen=True)
class _Mount:
    fstype: str
    root: str
    point: str
    readonly: bool
    options: frozenset[str]


def _read(path: str) -> str:
    with open(path) as fh:
        return fh.read()


def _words(path: str) -> set[str]:
    try:
        return set(_read(path).split())
    except OSError:
        return set()


def _keyed(path: str) -> dict[str, int]:
    """`key value` lines (memory.events, pids.events, cpu.stat, memory.oom_control) as ints."""
    found = {}
    for line in _read(path).splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].lstrip("-").isdigit():
            found[parts[0]] = int(parts[1])
    return found


def _unescape(field: str) -> str:
    # mountinfo writes space, tab, newline and backslash in paths as octal escapes
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def parse_mountinfo(text: str) -> list[_Mount]:
    """The cgroup and cgroup2 mounts in /proc/self/mountinfo text."""
    mounts = []
    for line in text.splitlines():
        left, sep, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if not sep or len(fields) < 6 or len(tail) < 3 or tail[0] not in ("cgroup", "cgroup2"):
            continue
        mounts.append(_Mount(tail[0], _unescape(fields[3]), _unescape(fields[4]),
                             "ro" in fields[5].split(","), frozenset(tail[2].split(","))))
    return mounts


def parse_proc_cgroup(text: str) -> tuple[dict[frozenset[str], str], str | None]:
    """({v1 controller set: path}, v2 path or None) of /proc/self/cgroup text."""
    v1, v2 = {}, None
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        hid, names, path = parts
        if hid == "0" and names == "":
            v2 = path
        elif names:
            v1[frozenset(names.split(","))] = path
    return v1, v2


def _folder_of(mount: _Mount, path: str) -> str | None:
    """Where the cgroup `path` of a hierarchy is under this mount of it (None: not visible there)."""
    root = mount.root.rstrip("/")
    if path.endswith(" (deleted)"):
        return None
    if root and path != root and not path.startswith(root + "/"):
        return None
    rel = path[len(root):].strip("/")
    return os.path.join(mount.point, rel) if rel else mount.point


def _why_not(exc: OSError, path: str) -> str:
    if exc.errno == errno.EROFS:
        return f"{path} is read-only"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return f"no permission to create cgroups in {path}"
    return f"cannot create cgroups in {path}: {exc.strerror or exc}"


def _ensure_dir(path: str) -> bool:
    """Create a cgroup if missing; True if this call created it."""
    try:
        _fs.mkdir(path)
        return True
    except FileExistsError:
        return False


def _set(folder: str, name: str, value: str, optional: bool = False) -> bool:
    """Write one cgroup file; an optional file may be missing or refuse (False), others raise."""
    try:
        _fs.write(os.path.join(folder, name), value)
        return True
    except OSError as exc:
        if optional:
            return False
        raise OSError(exc.errno, f"cannot set {name} = {value} in {folder}: "
                                 f"{exc.strerror or exc}") from None


def _configure(version: str, controller: str, folder: str, base: str, memory_bytes: int,
               pids: int, cpu_cores: float | None, cpus: tuple[int, ...] | None) -> None:
    """Set one controller's limits on a new bot cgroup `folder` (its parent is `base`)."""
    if controller == "memory":
        if version == "v1":
            _set(folder, "memory.limit_in_bytes", str(memory_bytes))
            # memsw bounds memory+swap: equal to the limit, swapping out cannot extend it (the
            # limit must be set first: memsw may never be below it). Absent without swap accounting.
            _set(folder, "memory.memsw.limit_in_bytes", str(memory_bytes), optional=True)
            _set(folder, "memory.swappiness", "0", optional=True)
        else:
            _set(folder, "memory.max", str(memory_bytes))
            _set(folder, "memory.swap.max", "0", optional=True)
            # one OOM kill takes the whole bot, not a random helper process of it
            _set(folder, "memory.oom.group", "1", optional=True)
    elif controller == "pids":
        _set(folder, "pids.max", str(pids))
    elif controller == "cpu":
        if cpu_cores is not None:
            quota = max(1000, round(cpu_cores * CFS_PERIOD_US))
            if version == "v1":
                _set(folder, "cpu.cfs_period_us", str(CFS_PERIOD_US))
                _set(folder, "cpu.cfs_quota_us", str(quota))
            else:
                _set(folder, "cpu.max", f"{quota} {CFS_PERIOD_US}")
    elif controller == "cpuset":
        suffix = "" if version == "v1" else ".effective"
        wanted = ",".join(str(int(c)) for c in cpus) if cpus else \
            _read(os.path.join(base, "cpuset.cpus" + suffix)).strip()
        # v1 refuses tasks into a cpuset while cpus or mems is empty: both before any join
        _set(folder, "cpuset.cpus", wanted)
        _set(folder, "cpuset.mems", _read(os.path.join(base, "cpuset.mems" + suffix)).strip())
    elif controller == "freezer":
        _read(os.path.join(folder, "freezer.state"))


def _prepare_v1_base(own: str, controllers: tuple[str, ...]) -> str:
    """The `arena` folder under the runner's cgroup of one v1 hierarchy, created and set up."""
    base = os.path.join(own, FOLDER)
    _ensure_dir(base)
    if "cpuset" in controllers:
        # a new v1 cpuset starts with no cpus and no mems: copy the runner's, or nothing could join
        for name in ("cpuset.cpus", "cpuset.mems"):
            if not _read(os.path.join(base, name)).strip():
                _set(base, name, _read(os.path.join(own, name)).strip())
    if "memory" in controllers:
        _set(base, "memory.use_hierarchy", "1", optional=True)  # old kernels: limits nest
    return base


def _prepare_v2_base(own: str) -> tuple[str | None, tuple[str, ...], str]:
    """(`arena` folder, controllers it hands its children, why not) under the runner's v2 cgroup."""
    offered = _words(os.path.join(own, "cgroup.controllers"))
    if not offered & set(WANTED):
        return None, (), f"cgroup v2 at {own} offers none of {', '.join(WANTED)}"
    enabled = _words(os.path.join(own, "cgroup.subtree_control"))
    for name in WANTED:
        if name in offered and name not in enabled:
            # refused (EBUSY) when the runner's cgroup holds processes and is not the root
            _set(own, "cgroup.subtree_control", "+" + name, optional=True)
    base = os.path.join(own, FOLDER)
    try:
        created = _ensure_dir(base)
    except OSError as exc:
        return None, (), _why_not(exc, own)
    offered = _words(os.path.join(base, "cgroup.controllers"))
    for name in WANTED:
        if name in offered and name not in _words(os.path.join(base, "cgroup.subtree_control")):
            _set(base, "cgroup.subtree_control", "+" + name, optional=True)  # `arena` has no processes
    usable = tuple(n for n in WANTED if n in _words(os.path.join(base, "cgroup.subtree_control")))
    if not usable:
        if created:
            try:
                _fs.rmdir(base)
            except OSError:
                pass
        return None, (), (f"cgroup v2: cannot enable controllers below {own} "
                          "(it holds processes and is not the root)")
    return base, usable, ""


def _join_test(folders: list[str]) -> set[int]:
    """Indexes of the folders a fresh child process could not join."""
    procs = [os.path.join(f, "cgroup.procs") for f in folders]
    run = subprocess.run([sys.executable, "-I", "-S", "-c", _JOIN_PROBE, *procs],
                         capture_output=True, text=True, timeout=30, env={})
    if run.returncode != 0:
        return set(range(len(folders)))
    return {int(i) for i in run.stdout.split()}


def _probe(hierarchies: list[_Hierarchy]) -> tuple[list[_Hierarchy], list[str]]:
    """The hierarchies (with the controllers) where a real bot cgroup can be made and joined."""
    tag = secrets.token_hex(8)  # named like a bot's, so a runner killed mid-probe is swept too
    made, locks, good, problems = [], [], [], []
    try:
        for h in hierarchies:
            folder = os.path.join(h.base, tag)
            try:
                # locked like a bot's: another runner's sweep must not take it mid-probe
                locks.append(_make_locked(folder))
            except OSError as exc:
                problems.append(_why_not(exc, h.base))
                continue
            made.append(folder)
            ok = []
            for name in h.controllers:
                try:
                    _configure(h.version, name, folder, h.base, **PROBE_LIMITS)
                    ok.append(name)
                except OSError as exc:
                    problems.append(f"{name}: {exc.strerror or exc}")
            if ok:
                good.append((h, folder, tuple(ok)))
        failed = _join_test([folder for _, folder, _ in good]) if good else set()
        for i in sorted(failed):
            problems.append(f"cannot join {good[i][1]}")
        return [_Hierarchy(h.version, ok, h.base)
                for i, (h, _, ok) in enumerate(good) if i not in failed], problems
    finally:
        for folder in made:
            _rmdir_patiently(folder, time.monotonic() + 1.0)
        for fd in locks:
            os.close(fd)


def _rmdir_patiently(folder: str, deadline: float) -> OSError | None:
    """rmdir, retrying while the last processes finish exiting (EBUSY); None when gone."""
    while True:
        try:
            _fs.rmdir(folder)
            return None
        except FileNotFoundError:
            return None
        except OSError as exc:
            if exc.errno != errno.EBUSY or time.monotonic() > deadline:
                return exc
            time.sleep(0.005)


def _score(hierarchies: list[_Hierarchy]) -> tuple[int, int]:
    names = {n for h in hierarchies for n in h.controllers if n in WANTED}
    return len(names & {"memory", "pids"}), len(names)


def _find_layout() -> _Layout:
    mounts = parse_mountinfo(_read(MOUNTINFO))
    own_v1, own_v2 = parse_proc_cgroup(_read(PROC_CGROUP))
    if not mounts:
        return _Layout(CgroupSupport("none", (), "none: no cgroup filesystem mounted"), ())
    problems: list[str] = []

    v2: list[_Hierarchy] = []
    if own_v2 is not None:
        for mount in (m for m in mounts if m.fstype == "cgroup2"):
            own = _folder_of(mount, own_v2)
            if own is None or not os.path.isdir(own):
                continue
            if mount.readonly:
                problems.append(f"{mount.point} is read-only")
                break
            base, usable, why = _prepare_v2_base(own)
            if base is None:
                problems.append(why)
            else:
                v2, more = _probe([_Hierarchy("v2", usable, base)])
                problems += more
            break

    v1: list[_Hierarchy] = []
    if _score(v2)[0] < 2:  # a v2 without memory or pids: see whether v1 does better
        candidates = []
        for names, path in own_v1.items():
            ours = tuple(n for n in V1_HIERARCHIES if n in names)
            if not ours:
                continue
            for mount in (m for m in mounts if m.fstype == "cgroup" and names <= m.options):
                own = _folder_of(mount, path)
                if own is None or not os.path.isdir(own):
                    continue
                if mount.readonly:
                    problems.append(f"{mount.point} is read-only")
                    break
                try:
                    candidates.append(_Hierarchy("v1", ours, _prepare_v1_base(own, ours)))
                except OSError as exc:
                    problems.append(_why_not(exc, own))
                break
        if candidates:
            v1, more = _probe(candidates)
            problems += more

    chosen, version = (v2, "v2") if _score(v2) >= _score(v1) and v2 else (v1, "v1")
    names = tuple(n for n in WANTED if any(n in h.controllers for h in chosen))
    if not names:
        why = problems[0] if problems else "no usable memory, pids, cpu or cpuset controller"
        return _Layout(CgroupSupport("none", (), f"none: {why}"), ())
    why = f"cgroup {version}: {', '.join(names)}"
    if version == "v1" and not any("freezer" in h.controllers for h in chosen):
        why += " (no freezer)"
    return _Layout(CgroupSupport(version, names, why), tuple(chosen))


@functools.lru_cache(maxsize=1)
def _layout() -> _Layout:
    try:
        return _find_layout()
    except Exception as exc:  # a probe must never stop a run: it runs without cgroups then
        return _Layout(CgroupSupport("none", (), f"none: cgroup probe failed: {exc}"), ())


@functools.lru_cache(maxsize=1)
def support() -> CgroupSupport:
    """What this machine offers the runner, probed once per process with a real cgroup."""
    return _layout().support


def _check_tag(tag: str) -> str:
    if not isinstance(tag, str) or not TAG.fullmatch(tag):
        raise ValueError(f"not a bot tag (lowercase hex, 8 to 64 digits): {tag!r}")
    return tag


def _get_int(out: dict[str, int], key: str, path: str | None) -> None:
    """Add the first number in a file to out[key]; leave the key alone if the file is missing."""
    if path is None:
        return
    try:
        value = int(_read(path).split()[0])
    except (OSError, ValueError, IndexError):
        return
    out[key] = out.get(key, 0) + value


def _add_keyed(out: dict[str, int], key: str, path: str | None, field: str) -> None:
    """Add one field of a `key value` file to out[key]; leave the key alone if it is missing."""
    if path is None:
        return
    try:
        value = _keyed(path).get(field)
    except OSError:
        return
    if value is not None:
        out[key] = out.get(key, 0) + value


class BotCgroup:
    """The cgroup (one folder per hierarchy) of one bot process tree."""

    def __init__(self, tag: str, layout: _Layout):
        self.tag = _check_tag(tag)
        self.version = layout.support.version
        self.paths: tuple[str, ...] = tuple(os.path.join(h.base, tag) for h in layout.hierarchies)
        self._by_controller = {n: p for h, p in zip(layout.hierarchies, self.paths)
                               for n in h.controllers}
        # bytes, built now: join_in_child runs between fork and exec, where allocating is unsafe
        self._procs = tuple(os.fsencode(os.path.join(p, "cgroup.procs")) for p in self.paths)
        self._locks: list[int] = []

    def __repr__(self) -> str:
        return f"BotCgroup({self.tag!r}, {self.version}, {len(self.paths)} folders)"

    @classmethod
    def create(cls, tag: str, *, memory_bytes: int, pids: int, cpu_cores: float | None,
               cpus: tuple[int, ...] | None) -> BotCgroup | None:
        """A new cgroup for one bot with these limits, or None where cgroups are not usable."""
        _check_tag(tag)
        layout = _layout()
        if layout.support.version == "none":
            return None
        cg = cls(tag, layout)
        try:
            for h, folder in zip(layout.hierarchies, cg.paths):
                cg._locks.append(_make_locked(folder))
                for name in h.controllers:
                    _configure(h.version, name, folder, h.base, memory_bytes, pids, cpu_cores, cpus)
        except BaseException:
            try:
                cg.remove()
            except OSError:
                pass
            raise
        return cg

    def procs_files(self) -> tuple[str, ...]:
        """The cgroup.procs files a child writes "0" into to join, before exec."""
        return tuple(os.fsdecode(p) for p in self._procs)

    def join_in_child(self) -> None:
        """Join every hierarchy; for a forked child before exec (preexec_fn): only os calls."""
        for path in self._procs:
            fd = os.open(path, os.O_WRONLY)
            try:
                os.write(fd, b"0")
            finally:
                os.close(fd)

    def _file(self, controller: str, name: str) -> str | None:
        folder = self._by_controller.get(controller)
        return os.path.join(folder, name) if folder else None

    def oom_file(self) -> str | None:
        """The file whose `oom_kill N` line counts the kernel's kills at the memory limit (v1
        memory.oom_control, v2 memory.events), for a watcher; None without a memory controller."""
        return self._file("memory", "memory.oom_control" if self.version == "v1"
                          else "memory.events")

    def stats(self) -> dict[str, int]:
        """Peaks and limit events so far; a key is left out when the kernel has no such file."""
        out: dict[str, int] = {}

        if self.version == "v1":
            _get_int(out, "memory_peak", self._file("memory", "memory.max_usage_in_bytes"))
            # with memsw = limit a charge fails on whichever counter is hit first: each failure
            # raises one of the two failcnts, so their sum counts the hits
            _get_int(out, "memory_limit_hits", self._file("memory", "memory.failcnt"))
            _get_int(out, "memory_limit_hits", self._file("memory", "memory.memsw.failcnt"))
            _add_keyed(out, "oom_kills", self._file("memory", "memory.oom_control"), "oom_kill")
            # Some kernels (6.18 here) leave v1 failcnt at 0 even across an OOM kill; an OOM kill,
            # or a peak at the limit, is a hit all the same.
            limit = {}
            _get_int(limit, "bytes", self._file("memory", "memory.limit_in_bytes"))
            floor = max(out.get("oom_kills", 0),
                        int("bytes" in limit and out.get("memory_peak", 0) >= limit["bytes"]))
            if "memory_limit_hits" in out or floor:
                out["memory_limit_hits"] = max(out.get("memory_limit_hits", 0), floor)
        else:
            _get_int(out, "memory_peak", self._file("memory", "memory.peak"))
            _add_keyed(out, "memory_limit_hits", self._file("memory", "memory.events"), "max")
            _add_keyed(out, "oom_kills", self._file("memory", "memory.events"), "oom_kill")
        _get_int(out, "pids_peak", self._file("pids", "pids.peak"))
        _add_keyed(out, "pids_limit_hits", self._file("pids", "pids.events"), "max")
        _add_keyed(out, "cpu_throttled", self._file("cpu", "cpu.stat"), "nr_throttled")
        return out

    def members(self) -> list[int]:
        """The pids in the cgroup now, over every hierarchy."""
        found = set()
        for path in self._procs:
            try:
                with open(path, "rb") as fh:
                    found.update(int(p) for p in fh.read().split())
            except (OSError, ValueError):
                pass
        found.discard(0)  # never a process; kill(0) would hit the runner's own group
        return sorted(found)

    def _freeze(self, frozen: bool, deadline: float) -> bool:
        """Freeze or thaw the cgroup; True if it is (or may be, on timeout) frozen."""
        if self.version == "v2":
            folder = self.paths[0] if self.paths else None
            if folder is None or not _set(folder, "cgroup.freeze", "1" if frozen else "0", True):
                return False
            check, want = os.path.join(folder, "cgroup.events"), "frozen 1"
        else:
            folder = self._by_controller.get("freezer")
            if folder is None or not _set(folder, "freezer.state",
                                          "FROZEN" if frozen else "THAWED", True):
                return False
            check, want = os.path.join(folder, "freezer.state"), "FROZEN"
        if frozen:
            until = min(deadline, time.monotonic() + FREEZE_TIMEOUT_S)
            while time.monotonic() < until:
                try:
                    if want in _read(check):
                        break
                except OSError:
                    break
                time.sleep(0.001)
        return True

    def _wait_empty(self, until: float) -> bool:
        while self.members():
            if time.monotonic() >= until:
                return False
            time.sleep(0.002)
        return True

    def kill(self) -> None:
        """SIGKILL every process in the cgroup until it is empty (or ~2 s have passed)."""
        deadline = time.monotonic() + KILL_TIMEOUT_S
        if not self.members():
            return
        cpu = self._by_controller.get("cpu")
        if cpu:
            # a killed task must still run to exit: under a spent CPU quota it waits a period
            _set(cpu, "cpu.cfs_quota_us" if self.version == "v1" else "cpu.max",
                 "-1" if self.version == "v1" else "max", optional=True)
        if self.version == "v2" and self.paths and _set(self.paths[0], "cgroup.kill", "1", True):
            if self._wait_empty(deadline):
                return
        me = os.getpid()
        while True:
            # frozen, nothing in the cgroup can fork or exit, so the list is complete and no pid
            # in it can be reused by another process before our signal reaches it
            frozen = self._freeze(True, deadline)
            try:
                pids = self.members()
                for pid in pids:
                    if pid != me:
                        try:
                            os.kill(pid, signal.SIGKILL)
                        except (ProcessLookupError, PermissionError):
                            pass
            finally:
                if frozen:
                    self._freeze(False, deadline)  # a frozen task dies of SIGKILL only once thawed
            if not pids or self._wait_empty(min(deadline, time.monotonic() + 0.05)):
                return
            if time.monotonic() >= deadline:
                return

    def remove(self) -> None:
        """kill() then remove every folder; safe to call twice."""
        self.kill()
        deadline = time.monotonic() + 1.0
        problems = [e for e in (_rmdir_patiently(p, deadline) for p in reversed(self.paths)) if e]
        while self._locks:
            os.close(self._locks.pop())
        if problems:
            raise OSError(problems[0].errno, f"cannot remove cgroup {self.tag}: {problems[0]}")


def _make_locked(folder: str) -> int:
    """Create `folder` and hold a shared flock on it: the mark of a live owner that sweep respects."""

    def make() -> str:
        _fs.mkdir(folder)
        return folder

    return make_held(make, f"cgroup {folder}")[1]


def sweep(older_than_s: float = 0) -> int:
    """Remove the leftover bot cgroups of dead runners (killing what is still in them); how many."""
    layout = _layout()
    tags = set()
    for h in layout.hierarchies:
        try:
            tags.update(n for n in os.listdir(h.base) if TAG.fullmatch(n))
        except OSError:
            pass
    now, removed = time.time(), 0
    for tag in sorted(tags):
        cg = BotCgroup(tag, layout)
        locks = []
        try:
            folders = [p for p in cg.paths if os.path.isdir(p)]
            if older_than_s and any(now - os.stat(p).st_mtime < older_than_s for p in folders):
                continue
            alive = False
            for folder in folders:
                fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
                locks.append(fd)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    alive = True  # its runner still holds the lock
                    break
            if alive or not folders:
                continue
            cg.remove()
            removed += 1
        except OSError:
            continue  # vanished meanwhile, or stuck: the next sweep tries again
        finally:
            for fd in locks:
                os.close(fd)
    return removed
