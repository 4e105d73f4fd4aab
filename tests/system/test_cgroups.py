"""Per-bot cgroups (arena/players/cgroups.py): real limits on this machine, and the v2 logic on a fake.

The real tests start hostile children (a tmpfs filler, a fork bomb, a busy loop) that join the
cgroup in preexec_fn, before exec, so every limit holds before their first instruction; the fork
bomb also runs in its own PID namespace. Each real test is skipped, with support().why, where
cgroups (or the controller it needs) are not usable. The fake tests stand a small simulated cgroup2
kernel (a folder tree, plus the rules of cgroup.subtree_control) in for /sys/fs/cgroup.
"""

from __future__ import annotations

import errno
import os
import secrets
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena.players import cgroups
from arena.players.cgroups import BotCgroup
from tests.support.paths import ROOT

UNSHARE = shutil.which("unshare")
NO_SUCH_PID = "999999999"  # above any pid_max: a fake member that can never be a real process


def _reset() -> None:
    cgroups._layout.cache_clear()
    cgroups.support.cache_clear()


def need(*controllers: str) -> None:
    """Skip unless this machine's cgroups offer these controllers."""
    got = cgroups.support()
    if got.version == "none":
        pytest.skip(got.why)
    missing = [c for c in controllers if c not in got.controllers]
    if missing:
        pytest.skip(f"{got.why}; no {', '.join(missing)}")


@pytest.fixture
def new_cgroup():
    """Makes real bot cgroups; every one is removed (and checked gone) after the test."""
    made = []

    def make(memory_bytes=256 << 20, pids=64, cpu_cores=None, cpus=None) -> BotCgroup:
        cg = BotCgroup.create(secrets.token_hex(8), memory_bytes=memory_bytes, pids=pids,
                              cpu_cores=cpu_cores, cpus=cpus)
        assert cg is not None
        made.append(cg)
        return cg

    yield make
    for cg in made:
        cg.remove()
        assert not any(os.path.exists(p) for p in cg.paths)


def spawn(cg: BotCgroup, code: str, pidns: bool = False) -> subprocess.Popen:
    """A Python child that joins `cg` before exec; with pidns, in its own PID namespace."""
    argv = [sys.executable, "-I", "-S", "-c", code]
    if pidns and UNSHARE and os.geteuid() == 0:
        # --kill-child: the namespace's init dies with unshare, and all of it with its init
        argv = [UNSHARE, "--pid", "--fork", "--mount-proc", "--kill-child", *argv]
    return subprocess.Popen(argv, preexec_fn=cg.join_in_child, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def read_line(proc: subprocess.Popen, timeout: float) -> str:
    """One line of the child's stdout, or fail after `timeout` seconds."""
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    assert ready, f"no output from the child in {timeout} s"
    return proc.stdout.readline().strip()


# -- real cgroups on this machine ------------------------------------------------------------------

def test_support_names_version_and_controllers():
    got = cgroups.support()
    assert got.version in ("v1", "v2", "none")
    assert set(got.controllers) <= set(cgroups.WANTED)
    assert got.why.startswith("none: " if got.version == "none" else f"cgroup {got.version}: ")
    assert cgroups.support() is got  # probed once per process


def test_join_puts_the_child_in_every_hierarchy(new_cgroup):
    need()
    cg = new_cgroup()
    proc = subprocess.run(["cat", "/proc/self/cgroup"], preexec_fn=cg.join_in_child,
                          capture_output=True, text=True, check=True)
    lines = [line for line in proc.stdout.splitlines() if line.endswith("/" + cg.tag)]
    assert len(lines) == len(cg.paths)
    assert all(p.endswith("/cgroup.procs") for p in cg.procs_files())
    assert cg.members() == []  # `cat` has exited: nothing stays behind


def test_memory_limit_counts_tmpfs_pages(tmp_path, request, new_cgroup):
    need("memory")
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    mnt = tmp_path / "tmpfs"
    mnt.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512m", "tmpfs", str(mnt)], check=True)
    request.addfinalizer(lambda: subprocess.run(["umount", "-l", str(mnt)]))
    limit = 64 << 20
    cg = new_cgroup(memory_bytes=limit, pids=8)
    code = f"""
import errno, sys
chunk = b"x" * (1 << 20)
try:
    with open({str(mnt / 'fill')!r}, "wb", buffering=0) as fh:
        for _ in range(200):
            fh.write(chunk)
except OSError as exc:
    print(errno.errorcode.get(exc.errno, exc.errno), flush=True)
    sys.exit(3)
print("wrote all", flush=True)
"""
    proc = spawn(cg, code)
    out, _ = proc.communicate(timeout=120)
    stats = cg.stats()
    size = (mnt / "fill").stat().st_size
    print(f"\ntmpfs writer: exit {proc.returncode} {out.strip()!r}, file {size >> 20} MiB, "
          f"memory_peak {stats['memory_peak'] / 2**20:.1f} MiB of {limit >> 20} MiB, "
          f"limit hits {stats['memory_limit_hits']}, oom kills {stats['oom_kills']}")
    assert out.strip() != "wrote all"
    assert proc.returncode == -signal.SIGKILL or out.strip() in ("ENOSPC", "ENOMEM")
    assert size < limit  # the pages of the file itself were charged to the bot
    assert stats["memory_limit_hits"] > 0
    assert stats["memory_peak"] <= limit
    cg.remove()
    assert not any(os.path.exists(p) for p in cg.paths)
    cg.remove()  # twice is fine


# The PID namespace is the safety net (its init's death takes all of it); without it kill() alone
# must chase every process — the bomb is capped by the pids limit before its first fork either way.
@pytest.mark.parametrize("freezer,pidns", [(True, True), (True, False), (False, False)],
                         ids=["pidns", "freezer", "no-freezer"])
def test_fork_bomb_stops_at_the_pids_limit_and_kill_empties_it(new_cgroup, freezer, pidns):
    need("pids")
    cg = new_cgroup(memory_bytes=1 << 30, pids=32, cpu_cores=1.0)  # one core: spare the host
    if not freezer:
        if cgroups.support().version != "v1":
            pytest.skip("the freezer matters for v1 only (v2 writes cgroup.kill)")
        cg._by_controller.pop("freezer", None)  # as on a machine without the v1 freezer
    bomb = """
import os, time
root, told = os.getpid(), False
while True:
    try:
        os.fork()
    except BlockingIOError:  # EAGAIN: the pids limit
        if os.getpid() == root and not told:
            print("capped", flush=True)
            told = True
        time.sleep(0.001)
"""
    proc = spawn(cg, bomb, pidns=pidns)
    try:
        assert read_line(proc, 30) == "capped"
        time.sleep(0.3)  # let it keep pressing against the limit
        members = cg.members()
        stats = cg.stats()
        start = time.monotonic()
        cg.kill()
        took = time.monotonic() - start
        left = cg.members()
        print(f"\nfork bomb (freezer {freezer}, pidns {pidns}): {len(members)} processes, "
              f"pids_peak {stats.get('pids_peak')} of 32, limit hits {stats['pids_limit_hits']}, "
              f"kill() {took * 1000:.0f} ms")
        assert len(members) <= 32
        assert stats.get("pids_peak", 32) <= 32
        assert stats["pids_limit_hits"] > 0
        assert left == []
        assert took < 2.0
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    cg.remove()
    assert not any(os.path.exists(p) for p in cg.paths)


def test_cpuset_of_one_core_holds_against_setaffinity(new_cgroup):
    need("cpuset")
    core = max(os.sched_getaffinity(0))
    cg = new_cgroup(cpus=(core,))
    code = """
import os
before = sorted(os.sched_getaffinity(0))
os.sched_setaffinity(0, range(os.cpu_count()))
print(before, sorted(os.sched_getaffinity(0)))
"""
    proc = spawn(cg, code)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    print(f"\ncpuset ({core},): affinity before, after setaffinity(all): {out.strip()}")
    assert out.split() == [f"[{core}]", f"[{core}]"]


def test_cpu_quota_of_half_a_core_throttles(new_cgroup):
    need("cpu")
    cg = new_cgroup(cpu_cores=0.5)
    # Spin until it has used 0.6 s of CPU (on a busy machine a second of wall time may bring
    # less than the quota, and nothing to throttle): at half a core that takes 1.2 s or more.
    code = """
import os, time
start = time.monotonic()
while sum(os.times()[:2]) < 0.6 and time.monotonic() - start < 20:
    pass
print(sum(os.times()[:2]), time.monotonic() - start)
"""
    proc = spawn(cg, code)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    used, wall = map(float, out.split())
    throttled = cg.stats()["cpu_throttled"]
    print(f"\ncpu quota 0.5: {used:.2f} s CPU in {wall:.2f} s of wall time, throttled {throttled} "
          "periods")
    quota_file = cg._file("cpu", "cpu.cfs_quota_us" if cg.version == "v1" else "cpu.max")
    assert open(quota_file).read().split()[0] == str(cgroups.CFS_PERIOD_US // 2)
    # On a busy machine the bot may get less than its half core and never meet the quota: then
    # nothing is throttled, and it ran at most at the quota's rate anyway.
    assert throttled > 0 or used / wall <= 0.55
    assert used / wall < 0.8


def test_create_with_a_bad_cpuset_raises_and_leaves_nothing():
    need("cpuset")
    tag = secrets.token_hex(8)
    with pytest.raises(OSError, match="cpuset.cpus"):
        BotCgroup.create(tag, memory_bytes=64 << 20, pids=8, cpu_cores=None,
                         cpus=(os.cpu_count() + 7,))
    bases = [h.base for h in cgroups._layout().hierarchies]
    assert not any(os.path.exists(os.path.join(b, tag)) for b in bases)


DRIVER = """
import subprocess, sys, time
from arena.players.cgroups import BotCgroup
cg = BotCgroup.create(sys.argv[1], memory_bytes=64 << 20, pids=8, cpu_cores=None, cpus=None)
sleeper = subprocess.Popen(["sleep", "120"], preexec_fn=cg.join_in_child, start_new_session=True)
print(sleeper.pid, flush=True)
time.sleep(120)
"""


def test_sweep_removes_what_a_killed_runner_left_and_spares_live_ones(new_cgroup):
    need()
    live = new_cgroup()
    tag = secrets.token_hex(8)
    driver = subprocess.Popen([sys.executable, "-c", DRIVER, tag], stdout=subprocess.PIPE,
                              text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    sleeper = None
    try:
        sleeper = int(read_line(driver, 30))
        folders = [os.path.join(h.base, tag) for h in cgroups._layout().hierarchies]
        assert all(os.path.isdir(f) for f in folders)
        cgroups.sweep()
        assert all(os.path.isdir(f) for f in folders)  # its runner lives: untouched
        driver.kill()  # SIGKILL: no cleanup runs; the bot lives on in its cgroup
        driver.wait()
        assert os.path.exists(f"/proc/{sleeper}")
        assert cgroups.sweep() >= 1
        assert not any(os.path.exists(f) for f in folders)
        assert all(os.path.isdir(p) for p in live.paths)  # ours is still held by this process
        deadline = time.monotonic() + 5
        while _alive(sleeper) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not _alive(sleeper)
    finally:
        if driver.poll() is None:
            driver.kill()
            driver.wait()
        if sleeper and _alive(sleeper):
            os.kill(sleeper, signal.SIGKILL)



SWEEP = "from arena.players import cgroups; print(cgroups.sweep())"


def test_another_runners_sweep_leaves_a_probe_in_progress_alone(monkeypatch):
    # Every run sweeps leftovers as it starts: a runner probing at that moment must still find
    # its cgroups (a CI run once lost them, and with them every memory limit, to a neighbour).
    need()
    join_test = cgroups._join_test
    swept = []

    def sweeping_join_test(folders):
        # another runner starting now, mid-probe: it sweeps what no live runner holds
        run = subprocess.run([sys.executable, "-c", SWEEP], capture_output=True, text=True,
                             env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=60)
        swept.append(run.stdout.strip())
        return join_test(folders)

    real = cgroups.support()
    monkeypatch.setattr(cgroups, "_join_test", sweeping_join_test)
    _reset()
    try:
        assert cgroups.support() == real
        assert len(swept) == 1 and swept[0].isdigit()  # it swept (a dead runner's leftovers may go)
    finally:
        monkeypatch.undo()
        _reset()


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


# -- cgroup v2 logic on a fake cgroupfs ----------------------------------------------------------

class FakeKernel(cgroups._Fs):
    """A folder tree that acts like cgroup2 where it matters: new cgroups get the files of the
    controllers their parent enables, and cgroup.subtree_control follows the kernel's rules."""

    def __init__(self, root: Path):
        self.root = str(root)
        self.writes: list[tuple[str, str]] = []

    def file(self, rel: str) -> Path:
        return Path(self.root, rel)

    def mkdir(self, path: str) -> None:
        os.mkdir(path)
        offered = Path(os.path.dirname(path), "cgroup.subtree_control").read_text().split()
        files = {"cgroup.procs": "", "cgroup.controllers": " ".join(offered),
                 "cgroup.subtree_control": "", "cgroup.events": "populated 0\nfrozen 0\n",
                 "cgroup.kill": "", "cgroup.freeze": "0\n", "cpu.stat": "usage_usec 0\n"}
        if "memory" in offered:
            files.update({"memory.max": "max\n", "memory.swap.max": "max\n", "memory.peak": "0\n",
                          "memory.oom.group": "0\n", "memory.events":
                          "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\n"})
        if "pids" in offered:
            files.update({"pids.max": "max\n", "pids.peak": "0\n", "pids.events": "max 0\n"})
        if "cpu" in offered:
            files.update({"cpu.max": "max 100000\n", "cpu.stat":
                          "usage_usec 0\nnr_periods 0\nnr_throttled 0\nthrottled_usec 0\n"})
        if "cpuset" in offered:
            parent = os.path.dirname(path)
            files.update({"cpuset.cpus": "", "cpuset.mems": "",
                          "cpuset.cpus.effective": Path(parent, "cpuset.cpus.effective").read_text(),
                          "cpuset.mems.effective": Path(parent, "cpuset.mems.effective").read_text()})
        for name, text in files.items():
            Path(path, name).write_text(text)

    def write(self, path: str, text: str) -> None:
        self.writes.append((os.path.relpath(path, self.root), text))
        folder, name = os.path.split(path)
        if not os.path.isfile(path):
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", path)
        if name == "cgroup.subtree_control":
            enabled = set(Path(path).read_text().split())
            for token in text.split():
                controller = token[1:]
                if controller not in Path(folder, "cgroup.controllers").read_text().split():
                    raise OSError(errno.EINVAL, "Invalid argument", path)
                if folder != self.root and Path(folder, "cgroup.procs").read_text().strip():
                    raise OSError(errno.EBUSY, "Device or resource busy", path)  # no internal procs
                (enabled.add if token[0] == "+" else enabled.discard)(controller)
            Path(path).write_text(" ".join(sorted(enabled)) + "\n")
        elif name == "cgroup.kill":
            Path(folder, "cgroup.procs").write_text("")
        else:
            Path(path).write_text(text)

    def rmdir(self, path: str) -> None:
        if not os.path.isdir(path):
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", path)
        # "0" is what a joining process wrote (the probe's child): it has exited since
        if [p for p in Path(path, "cgroup.procs").read_text().split() if p != "0"]:
            raise OSError(errno.EBUSY, "Device or resource busy", path)
        shutil.rmtree(path)


@pytest.fixture
def fake_v2(tmp_path, monkeypatch):
    """Makes a fake cgroup2 machine with the runner in cgroup `own` and points cgroups.py at it."""

    def make(own: str = "/", busy: bool = False, pre_enabled: str = "",
             offered: str = "cpuset cpu io memory hugetlb pids rdma", readonly: bool = False):
        root = tmp_path / "cg"
        root.mkdir()
        kernel = FakeKernel(root)
        for name, text in {"cgroup.controllers": offered, "cgroup.subtree_control": "",
                           "cgroup.procs": "1\n", "cpuset.cpus.effective": "0-3\n",
                           "cpuset.mems.effective": "0\n"}.items():
            (root / name).write_text(text)
        folder = root
        for part in [p for p in own.split("/") if p]:
            # the path down to the runner: a service manager enabled everything on the way
            kernel.write(str(folder / "cgroup.subtree_control"),
                         " ".join("+" + c for c in (folder / "cgroup.controllers").read_text().split()))
            folder = folder / part
            kernel.mkdir(str(folder))
        if pre_enabled:
            kernel.write(str(folder / "cgroup.subtree_control"), pre_enabled)
        if busy and own != "/":
            (folder / "cgroup.procs").write_text(NO_SUCH_PID + "\n")
        kernel.writes.clear()
        mountinfo = tmp_path / "mountinfo"
        mountinfo.write_text(f"41 31 0:38 / {root} {'ro' if readonly else 'rw'},relatime shared:9"
                             f" - cgroup2 cgroup2 rw,nsdelegate\n")
        proc_cgroup = tmp_path / "cgroup"
        proc_cgroup.write_text(f"0::{own}\n")
        monkeypatch.setattr(cgroups, "_fs", kernel)
        monkeypatch.setattr(cgroups, "MOUNTINFO", str(mountinfo))
        monkeypatch.setattr(cgroups, "PROC_CGROUP", str(proc_cgroup))
        _reset()
        return kernel, folder

    yield make
    _reset()  # the next real test probes the real machine again


def test_v2_runner_at_the_root_enables_all_and_writes_each_limit(fake_v2):
    kernel, own = fake_v2("/")
    got = cgroups.support()
    assert got == cgroups.CgroupSupport("v2", ("memory", "pids", "cpu", "cpuset"),
                                        "cgroup v2: memory, pids, cpu, cpuset")
    assert set((own / "cgroup.subtree_control").read_text().split()) >= set(cgroups.WANTED)
    assert set((own / "arena" / "cgroup.subtree_control").read_text().split()) == set(cgroups.WANTED)
    assert [p.name for p in (own / "arena").iterdir() if p.is_dir()] == []  # probe removed
    kernel.writes.clear()
    tag = "0123456789abcdef"
    cg = BotCgroup.create(tag, memory_bytes=64 << 20, pids=32, cpu_cores=0.5, cpus=(1, 3))
    bot = f"arena/{tag}"
    assert cg.paths == (str(own / "arena" / tag),)
    assert dict(kernel.writes) == {
        f"{bot}/memory.max": str(64 << 20), f"{bot}/memory.swap.max": "0",
        f"{bot}/memory.oom.group": "1", f"{bot}/pids.max": "32",
        f"{bot}/cpu.max": "50000 100000", f"{bot}/cpuset.cpus": "1,3", f"{bot}/cpuset.mems": "0"}
    assert cg.procs_files() == (str(own / "arena" / tag / "cgroup.procs"),)
    cg.join_in_child()  # only writes "0" into the fake file here
    assert (own / bot / "cgroup.procs").read_text() == "0"
    cg.remove()
    cg.remove()
    assert not (own / bot).exists()


def test_v2_defaults_copy_the_parent_cpus_and_set_no_quota(fake_v2):
    kernel, own = fake_v2("/")
    cgroups.support()
    kernel.writes.clear()
    cg = BotCgroup.create("00000000aaaaaaaa", memory_bytes=1 << 30, pids=64, cpu_cores=None,
                          cpus=None)
    written = dict(kernel.writes)
    assert written["arena/00000000aaaaaaaa/cpuset.cpus"] == "0-3"
    assert not any(path.endswith("cpu.max") for path in written)
    cg.remove()


def test_v2_nested_runner_without_processes_enables_controllers_itself(fake_v2):
    kernel, own = fake_v2("/system.slice/arena.service")
    got = cgroups.support()
    assert got.version == "v2" and got.controllers == cgroups.WANTED
    assert ("system.slice/arena.service/cgroup.subtree_control", "+memory") in kernel.writes


def test_v2_populated_runner_cgroup_is_not_usable(fake_v2):
    kernel, own = fake_v2("/user.slice/session-1.scope", busy=True)
    got = cgroups.support()
    assert got.version == "none"
    assert "holds processes" in got.why
    assert not (own / "arena").exists()  # the useless `arena` folder was taken back
    assert BotCgroup.create("0123456789abcdef", memory_bytes=1 << 26, pids=8, cpu_cores=None,
                            cpus=None) is None
    assert cgroups.sweep() == 0


def test_v2_populated_runner_with_controllers_already_enabled_uses_an_arena_child(fake_v2):
    # enabled before the runner arrived (the fake does not forbid processes joining later)
    kernel, own = fake_v2("/user.slice/job", busy=True, pre_enabled="+memory +pids")
    got = cgroups.support()
    assert got.version == "v2" and got.controllers == ("memory", "pids")
    assert (own / "arena" / "cgroup.subtree_control").read_text().split() == ["memory", "pids"]
    cg = BotCgroup.create("0123456789abcdef", memory_bytes=1 << 26, pids=8, cpu_cores=1.0,
                          cpus=(0,))
    folder = own / "arena" / "0123456789abcdef"
    assert (folder / "memory.max").read_text() == str(1 << 26)
    assert not (folder / "cpu.max").exists()  # no cpu controller: the quota cannot be set
    cg.remove()


def test_v2_without_the_controllers_or_writable_is_none(fake_v2):
    fake_v2("/", offered="hugetlb io")
    assert cgroups.support().version == "none"
    assert "offers none of" in cgroups.support().why


def test_v2_read_only_mount_is_none(fake_v2, tmp_path):
    fake_v2("/", readonly=True)
    got = cgroups.support()
    assert got.version == "none" and got.why == f"none: {tmp_path / 'cg'} is read-only"


def test_v2_stats_read_peaks_and_events(fake_v2):
    kernel, own = fake_v2("/")
    cg = BotCgroup.create("0123456789abcdef", memory_bytes=1 << 26, pids=8, cpu_cores=0.5,
                          cpus=None)
    folder = Path(cg.paths[0])
    (folder / "memory.peak").write_text("67108864\n")
    (folder / "memory.events").write_text("low 0\nhigh 0\nmax 17\noom 2\noom_kill 1\n")
    (folder / "pids.peak").write_text("8\n")
    (folder / "pids.events").write_text("max 5\n")
    (folder / "cpu.stat").write_text("usage_usec 5\nnr_periods 10\nnr_throttled 4\n")
    assert cg.stats() == {"memory_peak": 1 << 26, "memory_limit_hits": 17, "oom_kills": 1,
                          "pids_peak": 8, "pids_limit_hits": 5, "cpu_throttled": 4}
    (folder / "memory.peak").unlink()  # older kernels have none: the key is left out
    assert "memory_peak" not in cg.stats()
    cg.remove()


def test_v2_kill_writes_cgroup_kill(fake_v2):
    kernel, own = fake_v2("/")
    cg = BotCgroup.create("0123456789abcdef", memory_bytes=1 << 26, pids=8, cpu_cores=None,
                          cpus=None)
    (Path(cg.paths[0]) / "cgroup.procs").write_text(NO_SUCH_PID + "\n")
    assert cg.members() == [int(NO_SUCH_PID)]
    cg.kill()
    assert (f"arena/{cg.tag}/cgroup.kill", "1") in kernel.writes
    assert cg.members() == []
    cg.remove()


def test_v2_sweep_takes_only_dead_runners_tag_folders(fake_v2):
    kernel, own = fake_v2("/")
    live = BotCgroup.create("1111111111111111", memory_bytes=1 << 26, pids=8, cpu_cores=None,
                            cpus=None)
    kernel.mkdir(str(own / "arena" / "2222222222222222"))  # left by a runner that was SIGKILLed
    kernel.mkdir(str(own / "arena" / "not-a-tag"))
    assert cgroups.sweep(older_than_s=3600) == 0  # too young
    assert cgroups.sweep() == 1
    names = sorted(p.name for p in (own / "arena").iterdir() if p.is_dir())
    assert names == ["1111111111111111", "not-a-tag"]
    live.remove()


@pytest.mark.parametrize("tag", ["", "../../etc", "0123456789ABCDEF", "abc", "0123456789abcdeg",
                                 "0123456789abcdef/x"])
def test_tags_are_validated_before_any_path_is_made(tag):
    with pytest.raises(ValueError):
        BotCgroup.create(tag, memory_bytes=1 << 26, pids=8, cpu_cores=None, cpus=None)


def test_mountinfo_and_proc_cgroup_parsing():
    text = ("31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw\n"
            "35 31 0:32 /docker/abc /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"
            "32 31 0:29 / /sys/fs/cgroup/cpu\\040x ro,relatime - cgroup cgroup rw,cpu,cpuacct\n"
            "41 31 0:38 / /sys/fs/cgroup/unified rw shared:1 master:2 - cgroup2 cgroup2 rw\n")
    mounts = cgroups.parse_mountinfo(text)
    assert [(m.fstype, m.point, m.readonly) for m in mounts] == [
        ("cgroup", "/sys/fs/cgroup/memory", False), ("cgroup", "/sys/fs/cgroup/cpu x", True),
        ("cgroup2", "/sys/fs/cgroup/unified", False)]
    assert {"cpu", "cpuacct"} <= mounts[1].options
    v1, v2 = cgroups.parse_proc_cgroup("4:memory:/docker/abc/sub\n1:cpu,cpuacct:/\n0::/x\n")
    assert v1 == {frozenset({"memory"}): "/docker/abc/sub", frozenset({"cpu", "cpuacct"}): "/"}
    assert v2 == "/x"
    assert cgroups._folder_of(mounts[0], "/docker/abc/sub") == "/sys/fs/cgroup/memory/sub"
    assert cgroups._folder_of(mounts[0], "/docker/abc") == "/sys/fs/cgroup/memory"
    assert cgroups._folder_of(mounts[0], "/elsewhere") is None
    assert cgroups._folder_of(mounts[2], "/") == "/sys/fs/cgroup/unified"


def test_a_folder_swept_between_its_mkdir_and_its_lock_is_made_again(tmp_path, monkeypatch):
    # Another runner's sweep may take a bot's cgroup in the instant after mkdir, before the new
    # owner opens and locks it (a CI run lost a bot's start to it): make it again, then hold it.
    folder = str(tmp_path / "0123456789abcdef")
    made = []

    class SweptOnce(cgroups._Fs):
        def mkdir(self, path: str) -> None:
            os.mkdir(path)
            made.append(path)
            if len(made) == 1:
                os.rmdir(path)  # the neighbour's sweep, at the worst moment

    monkeypatch.setattr(cgroups, "_fs", SweptOnce())
    fd = cgroups._make_locked(folder)
    try:
        assert made == [folder, folder] and os.path.samestat(os.fstat(fd), os.stat(folder))
    finally:
        os.close(fd)
