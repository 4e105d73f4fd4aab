#!/usr/bin/env python3
"""A scripted bot that misbehaves on purpose, for the failure-handling tests.

Usage: misbehaving_bot.py MODE [N [MARK [PROBE]]]. Plays the first legal action until its N-th act request
(default 1), then does what MODE says:
  ok            never misbehaves
  crash         exits with code 3
  no_ready      never answers hello
  garbage       prints a line that is not JSON
  illegal       answers with an action that is not legal
  sleep         never answers (sleeps)
  stale_then_ok answers with an old request_id first, then correctly
  wrong_type    sends a `ready` instead of an action
  spawn         starts a child that sleeps forever, then plays normally (tests cleanup)
  stderr        writes a lot to stderr at each move, then plays normally
  alloc         allocates memory without bound (reports MiB held to stderr as it goes)
  fork20        starts 20 children that sleep forever (pids to stderr), then plays normally
  setsid_fork   a child calls setsid() and double-forks a sleeper, then plays normally
  setsid_crash  a child calls setsid(), scrubs its environment and double-forks a sleeper; the
                bot then crashes (exit 3) at its N-th act, leaving the sleeper orphaned
  fork_many     at its N-th act starts 100 sleeping children, then plays normally
  close_stdout  closes its stdout and keeps running (sleeps)
  bigline       sends one 100 MB line
  spin          burns CPU without answering
  probe         at hello (at its first act for peers:), tries what ARENA_PROBE says, reports
                "probe: ok …" (it got through) or "probe: failed …" on stderr, then plays normally:
                tcp:PORT, read:PATH, write:PATH, env,
                caps          it holds a capability (CapEff of /proc/self/status is not 0)
                remount:PATH  remounts the read-only bind PATH writable and writes a file in it
                peers:W1,W2   a process whose command line holds a word is visible in /proc; what
                              of it the bot can read (environ, cmdline, fd/0 = its stdin, signal 0)
                fds           a file descriptor other than 0, 1, 2 is open (another bot's pipe)
                abstract:NAME connects to the abstract unix socket NAME (a host or peer listener)
                sysv:KEY      finds the SysV shared memory segment or message queue of KEY
                tmpfresh:NAME a file arena-left-* from an earlier process is in $TMPDIR; it then
                              leaves arena-left-NAME there for a later one to find
                mounts        a writable mount of a host file system other than the private /tmp
Children started by fork20 / setsid_fork / setsid_crash / fork_many carry ARENA_MARK (argv) so tests can find them by name.
"""

import ctypes
import json
import os
import socket
import subprocess
import sys
import time

mode = sys.argv[1]
when = int(sys.argv[2]) if len(sys.argv) > 2 else 1
acts = 0
# Optional argv: a mark for the children's command lines, and what to probe (else from env).
mark = sys.argv[3] if len(sys.argv) > 3 else os.environ.get("ARENA_MARK", "arena-test-mark")
probe_what = sys.argv[4] if len(sys.argv) > 4 else os.environ.get("ARENA_PROBE", "env")
SLEEPER = "import time; time.sleep(600)"


def log(text):
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def probe(what):
    kind, _, arg = what.partition(":")
    try:
        if kind == "tcp":
            socket.create_connection(("127.0.0.1", int(arg)), timeout=2).close()
        elif kind == "read":
            with open(arg, "rb") as fh:
                fh.read(16)
        elif kind == "write":
            with open(arg, "w") as fh:
                fh.write("escaped")
        elif kind == "caps":
            with open("/proc/self/status") as fh:
                eff = [ln.split()[1] for ln in fh if ln.startswith("CapEff:")][0]
            if int(eff, 16) == 0:
                raise RuntimeError("no capabilities")
            log(f"probe: caps {eff}")
        elif kind == "remount":
            libc = ctypes.CDLL(None, use_errno=True)
            ms_remount, ms_bind = 32, 4096
            if libc.mount(None, arg.encode(), None, ms_remount | ms_bind, None) != 0:
                raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
            with open(os.path.join(arg, "remounted-by-bot.txt"), "w") as fh:
                fh.write("escaped")
        elif kind == "peers":
            words = [w.encode() for w in arg.split(",")]
            seen = []
            for name in os.listdir("/proc"):
                if not name.isdigit() or int(name) == os.getpid():
                    continue
                try:
                    with open(f"/proc/{name}/cmdline", "rb") as fh:
                        cmdline = fh.read()
                except OSError:
                    continue
                if b"peers:" + arg.encode() in cmdline:
                    continue  # its own bwrap (pid 1 of its namespace) carries the words as args
                if any(w in cmdline for w in words):
                    got = []
                    for entry in ("environ", "fd/0"):
                        try:
                            with open(f"/proc/{name}/{entry}", "rb") as fh:
                                if entry == "environ":
                                    fh.read(16)
                            got.append(entry)
                        except OSError:
                            pass
                    try:
                        os.kill(int(name), 0)
                        got.append("signal")
                    except OSError:
                        pass
                    seen.append(f"{name} {cmdline[:200]!r} {got}")
            if not seen:
                raise RuntimeError(f"none of {arg} among {len(os.listdir('/proc'))} /proc entries")
            log(f"probe: peers {seen}")
        elif kind == "fds":
            extra = sorted(int(f) for f in os.listdir("/proc/self/fd") if int(f) > 2)
            extra = [f for f in extra if os.path.exists(f"/proc/self/fd/{f}")]  # not listdir's own
            if not extra:
                raise RuntimeError("only 0, 1, 2")
            log(f"probe: fds {[(f, os.readlink(f'/proc/self/fd/{f}')) for f in extra]}")
        elif kind == "abstract":
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.settimeout(2)
                sock.connect("\0" + arg)
        elif kind == "sysv":
            libc = ctypes.CDLL(None, use_errno=True)
            shm, msg = libc.shmget(int(arg), 0, 0), libc.msgget(int(arg), 0)
            if shm < 0 and msg < 0:
                raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
            log(f"probe: sysv shm {shm} msg {msg}")
        elif kind == "tmpfresh":
            tmp = os.environ["TMPDIR"]
            left = [f for f in os.listdir(tmp) if f.startswith("arena-left-")]
            with open(os.path.join(tmp, f"arena-left-{arg}"), "w") as fh:
                fh.write("left behind")
            if not left:
                raise RuntimeError(f"{tmp} is fresh")
            log(f"probe: tmpfresh found {left}")
        elif kind == "mounts":
            virtual = {"tmpfs", "proc", "devtmpfs", "devpts", "sysfs", "mqueue", "cgroup2"}
            writable = []
            with open("/proc/self/mountinfo") as fh:
                for line in fh:
                    left, _, right = line.partition(" - ")
                    point, options = left.split()[4], left.split()[5].split(",")
                    if "rw" in options and right.split()[0] not in virtual and point != "/tmp":
                        writable.append(point)
            if not writable:
                raise RuntimeError("no writable host mount")
            log(f"probe: mounts {writable[:5]}")
        elif kind == "env":
            secret = [k for k in os.environ if "TOKEN" in k or "SECRET" in k]
            if secret:
                raise RuntimeError(f"secrets visible: {secret}")
            log(f"probe: env {sorted(os.environ)}")
        log(f"probe: ok {what}")
    except Exception as exc:
        log(f"probe: failed {what}: {exc!r}")


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        if mode == "no_ready":
            time.sleep(60)
        if mode == "spawn":
            child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
            with open(os.environ["ARENA_TEST_PIDFILE"], "a") as fh:
                fh.write(f"{child.pid}\n")
        if mode == "fork20":
            kids = [subprocess.Popen([sys.executable, "-c", SLEEPER, mark]) for _ in range(20)]
            log("children: " + " ".join(str(k.pid) for k in kids))
        if mode == "setsid_fork":
            if os.fork() == 0:
                os.setsid()
                if os.fork() == 0:
                    os.execv(sys.executable, [sys.executable, "-c", SLEEPER, mark])
                os._exit(0)
            os.wait()
            log("double-forked")
        if mode == "setsid_crash":
            if os.fork() == 0:
                os.setsid()
                if os.fork() == 0:
                    os.execve(sys.executable, [sys.executable, "-c", SLEEPER, mark], {})
                os._exit(0)
            os.wait()
            log("double-forked, environment scrubbed")
        if mode == "probe" and not probe_what.startswith("peers:"):
            probe(probe_what)
        send({"type": "ready", "name": "misbehaving", "version": mode})
    elif msg["type"] == "act":
        acts += 1
        action = msg["legal_actions"][0]
        if mode == "probe" and acts == 1 and probe_what.startswith("peers:"):
            probe(probe_what)  # at the first act every bot of the match is running
        if mode == "stderr":
            sys.stderr.write("x" * 50_000 + "\n")
        if acts >= when:
            if mode in ("crash", "setsid_crash"):
                sys.exit(3)
            if mode == "fork_many":
                kids = [subprocess.Popen([sys.executable, "-c", SLEEPER, mark]) for _ in range(100)]
                log(f"started {len(kids)} children")
            if mode == "garbage":
                sys.stdout.write("this is not json\n")
                sys.stdout.flush()
                continue
            if mode == "illegal":
                action = {"type": "no_such_move"}
            if mode == "sleep":
                time.sleep(60)
            if mode == "alloc":
                held = []
                while True:
                    held.append(bytearray(16 << 20))
                    log(f"held {16 * len(held)} MiB")
            if mode == "close_stdout":
                sys.stdout.close()
                os.close(1)
                time.sleep(60)
            if mode == "spin":
                while True:
                    pass
            if mode == "bigline":
                sys.stdout.write('{"type": "action", "pad": "' + "A" * 100_000_000 + '"}\n')
                sys.stdout.flush()
                time.sleep(60)
            if mode == "stale_then_ok":
                send({"type": "action", "request_id": msg["request_id"] - 1, "action": action})
            if mode == "wrong_type":
                send({"type": "ready"})
                continue
        send({"type": "action", "request_id": msg["request_id"], "action": action})
    elif msg["type"] == "bye":
        break
