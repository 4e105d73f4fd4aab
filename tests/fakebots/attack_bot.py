#!/usr/bin/env python3
"""A bot that attacks its host on purpose, for the isolation tests (tests/system/test_isolation.py).

Usage: attack_bot.py MODE [ARG]. It plays the first legal action; at its first act request it
does what MODE says and reports on stderr as `hostile: KEY=VALUE` lines, then plays on (unless the
attack ends it):
  whoami     uid, gid, groups and effective capabilities
  sysctl     opens /proc/sys/kernel/core_pattern and /proc/sys/vm/drop_caches for writing
  userns     unshare(CLONE_NEWUSER), by the C library (ctypes) and by a fresh `unshare -U`
  forkbomb   every process forks without end (run it only inside its own PID namespace)
  killall    kill(-1, SIGKILL): every process it may signal
  escape     kills its own parent (the reaper), calls setsid and leaves a sleeper behind
  children   starts 10 children that each hold ARG MiB, written (resident), and plays on
  shm        writes ARG MiB into /dev/shm, then into $TMPDIR, reporting how much got in
  affinity   widens its CPU affinity to every core and reports what it got
  burn       starts 4 threads that spin forever (a busy neighbour), and plays on
  selfwrite  writes into its own program file and folder
"""

import ctypes
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time

mode = sys.argv[1]
arg = sys.argv[2] if len(sys.argv) > 2 else ""
held = []


def report(key, value):
    sys.stderr.write(f"hostile: {key}={value}\n")
    sys.stderr.flush()


def try_write(path):
    try:
        with open(path, "w") as fh:
            fh.write("core" if "core_pattern" in path else "3")
        return "written"
    except OSError as exc:
        return f"refused ({exc.strerror})"


def fill(folder, mib):
    done = 0
    try:
        with open(os.path.join(folder, f"fill-{os.getpid()}"), "wb") as fh:
            block = b"x" * (1 << 20)
            for _ in range(mib):
                fh.write(block)
                fh.flush()
                done += 1
    except OSError as exc:
        return f"{done} MiB then {exc.strerror}"
    return f"{done} MiB"


def attack():
    if mode == "whoami":
        with open("/proc/self/status") as fh:
            caps = [ln.split()[1] for ln in fh if ln.startswith("CapEff:")][0]
        report("uid", os.getuid())
        report("gid", os.getgid())
        report("groups", ",".join(map(str, os.getgroups())) or "-")
        report("caps", caps)
    elif mode == "sysctl":
        report("core_pattern", try_write("/proc/sys/kernel/core_pattern"))
        report("drop_caches", try_write("/proc/sys/vm/drop_caches"))
    elif mode == "userns":
        libc = ctypes.CDLL(None, use_errno=True)
        ok = libc.unshare(0x10000000) == 0
        report("unshare", "ok" if ok else f"refused ({os.strerror(ctypes.get_errno())})")
        try:
            run = subprocess.run(["unshare", "-U", "true"], capture_output=True, timeout=5)
            report("unshare_cmd", "ok" if run.returncode == 0 else "refused")
        except (OSError, subprocess.TimeoutExpired) as exc:
            report("unshare_cmd", f"refused ({exc})")
    elif mode == "forkbomb":
        report("forkbomb", "start")
        while True:
            try:
                os.fork()
            except OSError:
                pass
    elif mode == "killall":
        report("killall", "sent")
        os.kill(-1, signal.SIGKILL)
    elif mode == "escape":
        try:
            os.kill(os.getppid(), signal.SIGKILL)
            report("parent", "killed")
        except OSError as exc:
            report("parent", f"refused ({exc.strerror})")
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(600)",
                                          "hostile-escapee"])
            os._exit(0)
    elif mode == "children":
        filled_r, filled_w = os.pipe()
        for _ in range(10):
            if os.fork() == 0:
                try:
                    buf = bytearray(int(arg) << 20)
                    for i in range(0, len(buf), 4096):
                        buf[i] = 1
                except MemoryError:
                    os._exit(3)
                os.write(filled_w, b"1")
                signal.pause()
                os._exit(0)
        report("children", "10 started")
        # Play on only once they are all resident (or 3 s, under the 5 s move, have passed: a
        # child the limit killed never says so): on a loaded machine a fixed 1 s was too short,
        # and the game ended before the tree reached its memory limit.
        filled, deadline = 0, time.monotonic() + 3
        while filled < 10 and time.monotonic() < deadline:
            ready, _, _ = select.select([filled_r], [], [], max(0.0, deadline - time.monotonic()))
            if ready:
                filled += len(os.read(filled_r, 10))
        report("children", f"{filled} filled")
    elif mode == "shm":
        report("shm", fill("/dev/shm", int(arg)))
        report("tmp", fill(os.environ.get("TMPDIR", "/tmp"), int(arg)))
        time.sleep(1)  # a bot runs on: long enough for a quota measured every 0.2 s
    elif mode == "affinity":
        try:
            os.sched_setaffinity(0, range(os.cpu_count() or 1))
        except OSError as exc:
            report("setaffinity", f"refused ({exc.strerror})")
        report("affinity", ",".join(map(str, sorted(os.sched_getaffinity(0)))))
    elif mode == "burn":
        for _ in range(4):
            threading.Thread(target=lambda: [None for _ in iter(int, 1)], daemon=True).start()
        report("burn", "4 threads")
    elif mode == "selfwrite":
        report("program", try_write(os.path.abspath(__file__)))
        report("folder", try_write(os.path.join(os.getcwd(), "planted.txt")))


def main():
    acts = 0
    for line in sys.stdin:
        msg = json.loads(line)
        kind = msg.get("type")
        if kind == "hello":
            print(json.dumps({"type": "ready", "bot": "hostile"}), flush=True)
        elif kind == "act":
            acts += 1
            if acts == 1:
                attack()
            print(json.dumps({"type": "action", "request_id": msg["request_id"],
                              "action": msg["legal_actions"][0]}), flush=True)
        elif kind == "bye":
            return


if __name__ == "__main__":
    main()
