"""A real two-node Ray cluster on this machine, started as the README documents, runs matches on both.

Everything lives in a temporary HOME and Ray temp dir, so a real ~/.ray (and its auth token) is
untouched; ports are free ones. Teardown stops only the processes this test started — never
`ray stop`, which would kill every Ray on the machine.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from tests.support.paths import ROOT
from tests.support.ray import RAY, free_ports, leftovers, start_head, stop, wait_for_line

pytestmark = pytest.mark.skipif(RAY is None, reason="the `ray` command line is not installed")

DRIVER = textwrap.dedent("""
    import json, sys
    from arena.cards import derive_seed
    from arena.executors import make_executor
    from arena.match import GamePlan, MatchSpec
    from arena.players.base import random_bot
    from arena.protocol import TimeControl

    def spec(i):
        plans = tuple(GamePlan(f"m{i}-s{r}", r, 0, r, derive_seed("cluster", i), seating)
                      for r, seating in enumerate([(0, 1), (1, 0)]))
        return MatchSpec(f"m{i}", "xeri", {"rounds": 1}, (random_bot("a", i), random_bot("b", 99)),
                         plans, TimeControl(startup_ms=20_000, move_ms=5_000))

    with make_executor("ray", ray_address=sys.argv[1]) as ex:
        outcomes = list(ex.run(spec(i) for i in range(8)))
        print(json.dumps({
            "outcomes": [[o.match_id, type(o).__name__, o.worker] for o in outcomes],
            "nodes": ex.nodes,
        }))
""")


@pytest.fixture
def cluster():
    """Head and worker node (one CPU each) with token authentication; yields the head address."""
    base = Path(tempfile.mkdtemp(prefix="arena-ray-", dir="/tmp"))  # short: socket paths are bounded
    home = base / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    env["HOME"] = str(home)
    head_port, dash, agent_a, agent_b = free_ports(4)
    procs: list[subprocess.Popen] = []
    try:
        # The token that head, workers and driver share (Ray 2.60: `ray start --head` uses an
        # existing ~/.ray/auth_token, but does not create one).
        head, address, token = start_head(base, env, head_port, dash, agent_a)
        procs.append(head)
        common = ["--num-cpus=1", "--block", "--disable-usage-stats"]
        worker_log = base / "worker.log"
        procs.append(subprocess.Popen(
            [RAY, "start", "--address", address, *common, "--temp-dir", str(base / "w"),
             "--dashboard-agent-listen-port", str(agent_b)],
            env={**env, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": token},
            stdout=worker_log.open("w"), stderr=subprocess.STDOUT, start_new_session=True))
        wait_for_line(worker_log, "Ray runtime started", procs[1])
        yield address, env
    finally:
        for proc in reversed(procs):  # the worker node first, while the head can still drain it
            stop(proc)
        for pid in leftovers(str(base)):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        shutil.rmtree(base, ignore_errors=True)


def test_matches_run_on_both_nodes_of_a_token_authenticated_cluster(cluster):
    address, env = cluster
    # A driver without RAY_AUTH_MODE=token is refused (Ray takes ~20 s to give up: run it alongside).
    refused = subprocess.Popen([sys.executable, "-c", DRIVER, address], cwd=ROOT, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # Separate driver processes: this one may already hold a local Ray from other tests.
        out = subprocess.run([sys.executable, "-c", DRIVER, address], cwd=ROOT, capture_output=True,
                             text=True, timeout=120, env={**env, "RAY_AUTH_MODE": "token"})
        _, refusal = refused.communicate(timeout=120)
    finally:
        if refused.poll() is None:
            refused.kill()
            refused.wait()
    assert refused.returncode != 0 and "RAY_AUTH_MODE=token" in refusal  # the ConfigError's hint
    assert out.returncode == 0, out.stderr[-3000:]
    report = json.loads(out.stdout.strip().splitlines()[-1])
    outcomes, nodes = report["outcomes"], report["nodes"]
    assert sorted(o[0] for o in outcomes) == [f"m{i}" for i in range(8)]
    assert {o[1] for o in outcomes} == {"MatchResult"}
    assert len(set(nodes.values())) == 2  # one actor per node (one CPU each)
    assert {nodes[o[2]] for o in outcomes} == set(nodes.values())  # and both played
