"""`ray start` clusters on this machine for tests: free ports, a head node with token auth,
waiting for a log line, stopping a node, and the processes a test's temp dir left."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

RAY = shutil.which("ray", path=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")



def free_ports(n: int) -> list[int]:
    """n distinct ports nobody listens on right now."""
    socks = []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports



def wait_for_line(log: Path, text: str, proc: subprocess.Popen, timeout: float = 60) -> None:
    """Wait until `text` shows in a `ray start` log; fail with the log if it exits or times out."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if text in log.read_text(errors="replace"):
            return
        if proc.poll() is not None:
            break
        time.sleep(0.2)
    pytest.fail(f"`ray start` did not get to {text!r}:\n{log.read_text(errors='replace')[-3000:]}")



def stop(proc: subprocess.Popen, timeout: float = 20) -> None:
    """SIGTERM the `ray start --block` leader (it shuts its node down), then SIGKILL its group."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            pass
    try:  # e.g. the autoscaler monitor, which ignores SIGTERM
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait(5)



def leftovers(marker: str) -> list[int]:
    """Pids of processes whose command line mentions this test's private temp dir."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    pids.append(int(entry.name))
            except OSError:
                pass
    return pids



def start_head(base: Path, env: dict, head_port: int, dash: int, agent: int,
               cwd: Path | None = None) -> tuple[subprocess.Popen, str, str]:
    """Generate the auth token in env's HOME and start a one-CPU head node under `base`:
    (its `ray start --block` leader, its address, the token)."""
    subprocess.run([RAY, "get-auth-token", "--generate"], env=env, check=True,
                   capture_output=True, timeout=60)
    token = (Path(env["HOME"]) / ".ray" / "auth_token").read_text().strip()
    head_log = base / "head.log"
    proc = subprocess.Popen(
        [RAY, "start", "--head", "--port", str(head_port), "--num-cpus=1", "--block",
         "--disable-usage-stats", "--temp-dir", str(base / "h"), "--include-dashboard=false",
         "--dashboard-port", str(dash), "--dashboard-agent-listen-port", str(agent)],
        env=env, cwd=cwd, stdout=head_log.open("w"), stderr=subprocess.STDOUT,
        start_new_session=True)
    wait_for_line(head_log, "Ray runtime started", proc)
    return proc, f"127.0.0.1:{head_port}", token
