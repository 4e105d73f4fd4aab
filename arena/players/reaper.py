"""The reaper: a tiny parent between the runner and a bot, so nothing the bot starts escapes.

Run as `python -I -S reaper.py MAX_TASKS OVERHEAD -- BOT_ARGV...` (stdlib only, no Arena import, so it
starts in a few ms). The runner's child setup has already made it a child subreaper, given it a
death signal (SIGUSR1) and the bot's rlimits. It forks the bot into its own process group and then:
- every process the bot orphans — however it double-forks, whatever session it moves to and
  whatever environment it scrubs — is re-parented to the reaper, so it stays in this tree;
- when the bot exits, every other process of the tree is SIGKILLed and reaped before the reaper
  exits with the bot's own status (its exit code, or the same signal), which the runner reports;
- SIGTERM is passed on to the bot's process group (the runner's graceful stop);
- SIGUSR1, SIGINT or SIGHUP (the runner's hard stop, or the runner died) kill the whole tree;
- with MAX_TASKS > 0 it counts the tree's processes and threads (less OVERHEAD: bwrap's own two)
  every POLL_S seconds and kills the tree when there are more: the process limit holds even for root, whom RLIMIT_NPROC ignores.
  The reason is written to the bot's stderr as `arena: processes limit …`, where the runner reads it.
"""

import os
import signal
import sys

POLL_S = 0.05
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


def kill_tree():
    """SIGKILL and reap everything below the reaper; orphans keep coming here, so loop until none."""
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


def start(argv):
    """Fork and exec the bot in its own process group, with default signal handling; its pid."""
    pid = os.fork()
    if pid == 0:
        try:
            os.setpgid(0, 0)
            for sig in (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGINT):
                signal.signal(sig, signal.SIG_DFL)  # Python ignores these; the bot must not
            signal.pthread_sigmask(signal.SIG_SETMASK, [])
            os.execv(argv[0], argv)
        except OSError as exc:
            os.write(2, f"arena: cannot start {argv[0]}: {exc.strerror}\n".encode())
        os._exit(127)
    return pid


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
    max_tasks, overhead = int(sys.argv[1]), int(sys.argv[2])
    argv = sys.argv[4:]
    signal.pthread_sigmask(signal.SIG_BLOCK, HANDLED)
    bot = start(argv)
    # The reaper holds none of the bot's pipes: the runner sees EOF when the bot closes stdout.
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    status = signal.SIGKILL  # as if killed, unless the bot's own status is seen
    while True:
        info = signal.sigtimedwait(HANDLED, POLL_S if max_tasks else 3600)
        if info is None:
            if max_tasks:
                count = task_count(descendants(os.getpid())) - overhead
                if count > max_tasks:
                    os.write(2, f"\narena: processes limit {max_tasks} exceeded ({count} processes "
                                f"and threads)\n".encode())
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
    kill_tree()
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
    main()
