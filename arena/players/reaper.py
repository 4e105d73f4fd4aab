"""The reaper: a tiny parent between the runner and a bot, so nothing the bot starts escapes.

Run as `python -I -S reaper.py MAX_TASKS OVERHEAD [uid=U] [tmpfs=PATH:MIB] [reveal=DIR:PATH]... --
BOT_ARGV...` (stdlib only, no Arena import, so it starts in a few ms). The runner's child setup
has already made it a child subreaper, given it a death signal (SIGUSR1) and the bot's rlimits.
It forks the bot into its own process group and then:
- every process the bot orphans — however it double-forks, whatever session it moves to and
  whatever environment it scrubs — is re-parented to the reaper, so it stays in this tree;
- when the bot exits, every other process of the tree is SIGKILLed and reaped before the reaper
  exits with the bot's own status (its exit code, or the same signal), which the runner reports;
- SIGTERM is passed on to the bot's process group (the runner's graceful stop);
- SIGUSR1, SIGINT or SIGHUP (the runner's hard stop, or the runner died) kill the whole tree;
- with MAX_TASKS > 0 it counts the tree's processes and threads (less OVERHEAD: bwrap's own two)
  every POLL_S seconds and kills the tree when there are more: the process limit holds even for
  root, whom RLIMIT_NPROC ignores.
  The reason is written to the bot's stderr as `arena: processes limit …`, where the runner reads it.
- `quota=PATH:MIB` (a temp folder on the host's disk, where no tmpfs can be mounted): every
  QUOTA_EVERY polls the folder is measured and the tree killed when over, with `arena: /tmp limit`;
- `oom=PATH`: the bot's memory cgroup's events file; when the kernel has killed a process of the
  tree at the cgroup's limit, the whole tree is killed, with `arena: memory limit exceeded`;
- `uid=U`: the bot runs as uid and gid U with no supplementary groups (the runner is root; the reaper
  stays root to kill the tree); `tmpfs=PATH:MIB`: in a mount namespace of the bot's own, a tmpfs of
  MIB MiB owned by the bot over PATH (its private temp folder, so its disk use is bounded);
  `reveal=DIR:PATH`: DIR, which the bot's uid may not enter, covered by a tmpfs that shows only
  PATH (see `reveal`); `claim=FD`: the runner's lock on the bot's uid (arena/players/users.py),
  kept open until the tree is gone so that the uid is not claimed again while it may be killed.
Every bot also starts with no_new_privs and a seccomp filter that refuses new user namespaces
(`become`). Inside bwrap the reaper is outside the sandbox, so bwrap runs
`python -I -S reaper.py --become U -- BOT_ARGV...` as its command, which does the same in there.
"""

import os
import signal
import struct
import sys

POLL_S = 0.05
QUOTA_EVERY = 4  # polls between two measures of a quota'd temp folder (a walk costs more)
HANDLED = {signal.SIGCHLD, signal.SIGTERM, signal.SIGUSR1, signal.SIGINT, signal.SIGHUP}
HARD_STOP = {signal.SIGUSR1, signal.SIGINT, signal.SIGHUP}


def children(pid):
    """The direct children of a process (all its threads' children)."""
    found = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as fh:
                found.extend(int(p) for p in fh.read().split())
        except OSError:
            pass
    return found


def descendants(root):
    """Every process below `root`."""
    found, stack = [], children(root)
    while stack:
        pid = stack.pop()
        found.append(pid)
        stack.extend(children(pid))
    return found


def task_count(pids):
    """Processes and threads among `pids` (what a process limit counts)."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", "rb") as fh:
                data = fh.read()
            total += int(data[data.rindex(b")") + 2:].split()[17])
        except (OSError, ValueError, IndexError):
            pass
    return total


def oom_kills(path):
    """The `oom_kill` count of a memory cgroup's events file (0 if unreadable)."""
    try:
        with open(path, "rb") as fh:
            for line in fh:
                if line.startswith(b"oom_kill "):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def folder_bytes(folder):
    """Bytes a folder's files take on disk (allocated blocks, so a sparse file counts as written)."""
    total, stack = 0, [folder]
    while stack:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for entry in entries:
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            total += info.st_blocks * 512
            if entry.is_dir(follow_symlinks=False):
                stack.append(entry.path)
    return total


def kill_as(uid):
    """SIGKILL every process of `uid` at once: kill(-1) sent as that uid reaches all of them in one
    pass of the kernel's process list, so a fork bomb cannot outrun it as it outruns a loop.
    False when no helper could be forked to send it (a full pids cgroup)."""
    try:
        pid = os.fork()
    except OSError:
        return False  # the caller's own loop (kill_tree's, kill_uid's) does it
    if pid == 0:
        try:
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
            os.kill(-1, signal.SIGKILL)
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    return True


def kill_tree(sole_uid=None):
    """SIGKILL and reap everything below the reaper; orphans keep coming here, so loop until none.

    With `sole_uid` (a uid only this bot runs as) every process of that uid is killed first."""
    if sole_uid is not None:
        kill_as(sole_uid)
    me = os.getpid()
    while True:
        for pid in descendants(me):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return
        except InterruptedError:
            pass


# -- become: the bot's own identity, no new privileges, no user namespaces ------------------------
PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
CLONE_NEWUSER = 0x10000000
CLONE_NEWNS = 0x00020000
MS_NOSUID, MS_NODEV, MS_BIND, MS_REC, MS_PRIVATE = 0x2, 0x4, 0x1000, 0x4000, 0x40000
# (audit arch, clone, unshare, clone3) per machine.
ARCHES = {"x86_64": (0xC000003E, 56, 272, 435), "aarch64": (0xC00000B7, 220, 97, 435)}


def _libc():
    import ctypes  # only in the child that needs it: the reaper itself starts without

    libc = ctypes.CDLL(None, use_errno=True)
    return ctypes, libc


def no_userns_filter(machine):
    """A classic-BPF seccomp program refusing new user namespaces (EPERM) and clone3 (ENOSYS, so
    the C library falls back to clone, whose flags a filter can read); None for an unknown CPU."""
    if machine not in ARCHES:
        return None
    arch, clone, unshare, clone3 = ARCHES[machine]
    ld, jeq, jge, jset, ret = 0x20, 0x15, 0x35, 0x45, 0x06
    allow, eperm, enosys = 0x7FFF0000, 0x00050000 | 1, 0x00050000 | 38
    program = [  # jumps are relative: the target is the next instruction + the offset
        (ld, 0, 0, 4),                  # 0: the ABI
        (jeq, 1, 0, arch),              # 1: native → 3, else → 2
        (ret, 0, 0, eperm),             # 2: another ABI (i386 entry): refused
        (ld, 0, 0, 0),                  # 3: the syscall number
        (jge, 7, 0, 0x40000000),        # 4: x32 numbers → 12
        (jeq, 5, 0, clone3),            # 5: clone3 → 11
        (jeq, 1, 0, unshare),           # 6: unshare → 8
        (jeq, 0, 2, clone),             # 7: clone → 8, anything else → 10
        (ld, 0, 0, 16),                 # 8: the low word of the flags (args[0])
        (jset, 2, 0, CLONE_NEWUSER),    # 9: a new user namespace → 12, else → 10
        (ret, 0, 0, allow),             # 10
        (ret, 0, 0, enosys),            # 11
        (ret, 0, 0, eperm),             # 12
    ]
    return b"".join(struct.pack("HBBI", *insn) for insn in program)


def _mount(libc, ctypes, source, target, fstype, flags, options):
    if libc.mount(source, target.encode(), fstype, flags, options) != 0:
        raise OSError(ctypes.get_errno(), f"mount on {target}")


def reveal(libc, ctypes, pairs):
    """Over each folder the bot's uid may not enter, a tmpfs showing only what the bot needs of it.

    `pairs` are (folder, path inside it), outermost first: each path is opened before its folder
    is covered, then bound back at its place, so a Python under a 0700 /root runs while the rest
    of /root stays out of sight.
    """
    by_folder = {}
    for folder, inner in pairs:
        by_folder.setdefault(folder, []).append(inner)
    for folder, inners in by_folder.items():
        handles = [(inner, os.open(inner, os.O_PATH | os.O_CLOEXEC)) for inner in inners]
        _mount(libc, ctypes, b"tmpfs", folder, b"tmpfs", MS_NOSUID | MS_NODEV, b"size=64k,mode=0755")
        for inner, fd in handles:
            if os.path.isdir(f"/proc/self/fd/{fd}"):
                os.makedirs(inner, exist_ok=True)
            else:
                os.close(os.open(inner, os.O_CREAT | os.O_WRONLY, 0o644))
            _mount(libc, ctypes, f"/proc/self/fd/{fd}".encode(), inner, None, MS_BIND | MS_REC, None)
            os.close(fd)


def become(uid, tmpfs=None, pairs=()):
    """In the child about to exec the bot: its tmpfs, what it must reach, its uid, no_new_privs
    and the seccomp filter.

    Raises OSError when a step the bot's isolation depends on fails (the bot must not start).
    """
    ctypes, libc = _libc()
    if tmpfs is not None or pairs:
        if libc.unshare(CLONE_NEWNS) != 0:
            raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWNS)")
        # Private first, so nothing mounted here is propagated back to the host's mount table.
        _mount(libc, ctypes, b"none", "/", None, MS_REC | MS_PRIVATE, None)
        reveal(libc, ctypes, pairs)
    if tmpfs is not None:
        path, mib = tmpfs
        options = f"size={mib}m,mode=0700,uid={uid},gid={uid}".encode()
        _mount(libc, ctypes, b"tmpfs", path, b"tmpfs", MS_NOSUID | MS_NODEV, options)
    if uid is not None:
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)  # drops every capability with root's uids
        if os.getuid() != uid or os.geteuid() != uid:
            raise OSError(1, f"still uid {os.geteuid()} after setresuid({uid})")
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
    program = no_userns_filter(os.uname().machine)
    if program is not None:
        code = ctypes.create_string_buffer(program)

        class Prog(ctypes.Structure):
            _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

        prog = Prog(len(program) // 8, ctypes.addressof(code))
        if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "seccomp filter")


def start(argv, uid=None, tmpfs=None, pairs=(), confine=True):
    """Fork and exec the bot in its own process group, with default signal handling, as `uid`
    (`confine`: with no_new_privs and the seccomp filter; not for bwrap, which may need a user
    namespace of its own and confines the bot itself); its pid."""
    pid = os.fork()
    if pid == 0:
        try:
            os.setpgid(0, 0)
            for sig in (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGINT):
                signal.signal(sig, signal.SIG_DFL)  # Python ignores these; the bot must not
            signal.pthread_sigmask(signal.SIG_SETMASK, [])
            if confine:
                become(uid, tmpfs, pairs)
            os.execv(argv[0], argv)
        except OSError as exc:
            os.write(2, f"arena: cannot start {argv[0]}: {exc.strerror or exc}\n".encode())
        os._exit(127)
    return pid


def parse(args):
    """(max_tasks, overhead, sole uid, uid, tmpfs, reveal pairs, confine, quota, oom file, claim
    descriptor, bot argv) from the command line."""
    split = args.index("--")
    options, argv = args[:split], args[split + 1:]
    max_tasks, overhead = int(options[0]), int(options[1])
    uid = tmpfs = None
    pairs = []
    confine = True
    sole = False
    quota = oom_file = claim = None
    for option in options[2:]:
        key, _, value = option.partition("=")
        if key == "uid":
            uid = int(value)
        elif key == "tmpfs":
            path, _, mib = value.rpartition(":")
            tmpfs = (path, int(mib))
        elif key == "confine":
            confine = value != "0"
        elif key == "quota":
            path, _, mib = value.rpartition(":")
            quota = (path, int(mib))
        elif key == "oom":
            oom_file = value
        elif key == "sole":
            sole = value == "1"
        elif key == "claim":
            claim = int(value)
        elif key == "reveal":
            folder, _, inner = value.partition(":")
            pairs.append((folder, inner))
    return (max_tasks, overhead, uid if sole else None, uid, tmpfs, pairs, confine, quota,
            oom_file, claim, argv)


def become_and_exec(args):
    """`--become U|- -- ARGV`: inside bwrap, take the bot's identity and exec it."""
    split = args.index("--")
    uid = None if args[0] == "-" else int(args[0])
    argv = args[split + 1:]
    try:
        become(uid)
        os.execv(argv[0], argv)
    except OSError as exc:
        os.write(2, f"arena: cannot start {argv[0]}: {exc.strerror or exc}\n".encode())
    os._exit(127)


def finish(status):
    """Exit as the bot did: the same exit code, or killed by the same signal."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        signal.signal(sig, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [sig])
        os.kill(os.getpid(), sig)
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


def main():
    """Start the bot, watch its tree, clean up after it."""
    max_tasks, overhead, sole_uid, uid, tmpfs, pairs, confine, quota, oom_file, claim, argv = \
        parse(sys.argv[1:])
    if claim is not None:
        # Held until the reaper exits (its lock keeps the bot's uid taken); never the bot's,
        # which could otherwise unlock it and share its uid with the next bot claimed.
        try:
            os.set_inheritable(claim, False)
        except OSError:
            pass
    signal.pthread_sigmask(signal.SIG_BLOCK, HANDLED)
    bot = start(argv, uid, tmpfs, pairs, confine)
    # The reaper holds none of the bot's pipes: the runner sees EOF when the bot closes stdout.
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    status = signal.SIGKILL  # as if killed, unless the bot's own status is seen
    polls = 0
    while True:
        info = signal.sigtimedwait(HANDLED, POLL_S if max_tasks or quota or oom_file else 3600)
        if info is None:
            polls += 1
            if max_tasks:
                count = task_count(descendants(os.getpid())) - overhead
                if count > max_tasks:
                    os.write(2, f"\narena: processes limit {max_tasks} exceeded ({count} processes "
                                f"and threads)\n".encode())
                    break
            if oom_file and oom_kills(oom_file) > 0:
                # v1 has no oom.group: the kernel killed one process of the tree (the largest);
                # the bot is over its memory limit as a whole, so the whole tree stops here.
                os.write(2, b"\narena: memory limit exceeded (the kernel killed a process of the "
                            b"bot at its cgroup's memory limit)\n")
                break
            if quota and polls % QUOTA_EVERY == 0:
                folder, mib = quota
                used = folder_bytes(folder)
                if used > mib << 20:
                    os.write(2, f"\narena: /tmp limit {mib} MiB exceeded ({used >> 20} MiB in its "
                                f"temp folder)\n".encode())
                    break
            continue
        if info.si_signo == signal.SIGTERM:
            try:
                os.killpg(bot, signal.SIGTERM)
            except OSError:
                pass
        elif info.si_signo in HARD_STOP:
            break
        else:
            done = _reap(bot)
            if done is not None:
                status = done
                break
    kill_tree(sole_uid)
    if isinstance(status, signal.Signals):
        os.kill(os.getpid(), signal.SIGKILL)
    finish(status)


def _reap(bot):
    """Reap exited children; the bot's wait status if it is among them."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return None
        if pid == 0:
            return None
        if pid == bot:
            return status


if __name__ == "__main__":
    if sys.argv[1:2] == ["--become"]:
        become_and_exec(sys.argv[2:])
    else:
        main()
