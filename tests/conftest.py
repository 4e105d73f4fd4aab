"""Shared fixtures and the test tiers; helpers live in tests/support (`from tests.support.… import`).

Tiers, by folder: tests/unit (pure modules), tests/integration (the driver and the store with
in-process bots), tests/system (subprocess bots, the sandbox, Ray, browsers, wheels). Each test
gets its folder's marker, so `-m "not system"` is the fast lane.

Under pytest-xdist every worker gets a bot uid range of its own (ARENA_BOT_UIDS), outside the
default pool (which any other Arena run on the machine takes from 61000 up), so the check that no
process of a bot uid is left sees only its own worker's bots; tests that start Ray run in
one xdist group ("ray"), never two at a time, and the hostile-bot isolation tests with the kit
checks in another ("hostile"): `--dist loadgroup` (pyproject.toml) sends a group to one worker, and
a lock per group holds whatever runs elsewhere. A test
marked `exclusive` (a timing or resource-limit measure that load from other workers would upset)
runs while no other test of the run does: every test holds a shared lock, an exclusive one the lock
itself (with a turnstile, so that waiting for it holds off new tests rather than starving).
The `exclusive` tests run last, together: each one no longer stops the whole run while the
slowest test elsewhere finishes. (Putting the system tier first was slower: it gathers the Ray
tests, whose group lock then holds several workers idle at once.)
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import tempfile
from pathlib import Path

import pytest

from arena.players import users
from arena.store import Store

TIERS = ("unit", "integration", "system")
HERE = Path(__file__).resolve().parent
# Tests that start Ray (a local instance or a cluster of `ray start` nodes) are in the xdist group
# "ray": every test of these files, and elsewhere a test with "ray" in its name or a fixture's.
RAY_FILES = {"test_executors.py", "test_formats.py", "test_ray_cluster.py", "test_cluster_nodes.py"}
RAY_WORD = re.compile(r"(^|[^a-z])ray")
# The hostile-bot isolation tests (fork bombs, /dev/shm and /tmp filled, then checked empty) and
# the kit and bot checks that failed beside them (a random opponent's start: exit 127) run one at a time.
HOSTILE_FILES = {"test_isolation.py", "test_kits.py", "test_bot_check.py"}
XDIST_UIDS = (62000, 62799)  # next to the default pool (61000-61999), shared by the workers
UIDS_PER_WORKER = 100  # for up to 8 workers; 62800-62999 are the hostile tests' (tests/support/hostile.py)


def _worker_uids() -> None:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")  # "gw0", "gw1", …
    if not worker.startswith("gw") or os.environ.get(users.UIDS_VAR):
        return
    first = XDIST_UIDS[0] + int(worker[2:]) % 8 * UIDS_PER_WORKER
    last = min(first + UIDS_PER_WORKER - 1, XDIST_UIDS[1])
    os.environ[users.UIDS_VAR] = f"{first}-{last}"


_worker_uids()


def pytest_itemcollected(item):
    """Each test's tier marker (its folder) and xdist group, as it is collected: before any
    pytest_collection_modifyitems (xdist's reads the groups there, `-m` selects there)."""
    try:
        parts = Path(item.path).resolve().relative_to(HERE).parts
    except ValueError:
        return
    if parts and parts[0] in TIERS:
        item.add_marker(getattr(pytest.mark, parts[0]))
    if item.path.name in RAY_FILES or any(
            RAY_WORD.search(name.lower()) for name in (item.name, *item.fixturenames)):
        item.add_marker(pytest.mark.xdist_group("ray"))
    elif item.path.name in HOSTILE_FILES:
        item.add_marker(pytest.mark.xdist_group("hostile"))


def pytest_collection_modifyitems(config, items):
    """Run the exclusive tests last (a stable sort: otherwise the order of collection); under
    `--dist loadgroup`, give each grouped test the `@group` id suffix xdist schedules by."""
    items.sort(key=lambda item: item.get_closest_marker("exclusive") is not None)
    _group_ids(config, items)


def _group_ids(config, items) -> None:
    # pytest 9 keeps a node's id in `_id` (a NodeId); xdist 3.8 still writes the `@group` suffix to
    # `_nodeid`, which nothing reads any more, so loadgroup grouped nothing and a group's tests
    # waited on its lock file on several workers at once. Where xdist's suffix took, leave it.
    if not getattr(config.option, "loadgroup", False):
        return
    try:
        from _pytest.nodeid import NodeId
    except ImportError:  # pytest 8: xdist's own suffix works
        return
    for item in items:
        mark = item.get_closest_marker("xdist_group")
        if mark is None or "@" in item.nodeid.rpartition("]")[2]:
            continue
        item._id = NodeId.parse(f"{item.nodeid}@{mark.args[0]}")


@pytest.fixture(autouse=True)
def _run_locks(request):
    """Under xdist: a shared lock for each test, the lock alone for an `exclusive` one; and the
    lock of its group ("ray", "hostile"), so that no two tests of a group run at once whichever
    workers the scheduler gives them to."""
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    if not run:
        yield
        return
    base = Path(tempfile.gettempdir()) / f"arena-tests-{run}"
    exclusive = request.node.get_closest_marker("exclusive") is not None
    group = request.node.get_closest_marker("xdist_group")
    with contextlib.ExitStack() as held:
        if group is not None:
            grouped = held.enter_context(open(f"{base}.{group.args[0]}", "a+"))
            fcntl.flock(grouped, fcntl.LOCK_EX)
            held.callback(fcntl.flock, grouped, fcntl.LOCK_UN)
        turnstile = held.enter_context(open(f"{base}.turnstile", "a+"))
        lock = held.enter_context(open(f"{base}.lock", "a+"))
        fcntl.flock(turnstile, fcntl.LOCK_EX)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        finally:
            if not exclusive:
                fcntl.flock(turnstile, fcntl.LOCK_UN)
        held.callback(fcntl.flock, lock, fcntl.LOCK_UN)
        if exclusive:
            held.callback(fcntl.flock, turnstile, fcntl.LOCK_UN)
        yield


@pytest.fixture
def store() -> Store:
    """A fresh in-memory Arena database."""
    return Store(":memory:")
