"""The check worker pool: a bounded number of threads, each running `arena bot check`'s
`check_bot` for one submission at a time (received → checking → clean | failed).

A clean check makes the version "active" in the registry, where a running ladder finds it (the
ladder polls the registry for active versions); a failed one makes it "rejected", which no ladder
picks up, and the submission keeps the reason and the report. A submission left "received" or
"checking" by a stopped server is checked again when the next one starts.
"""

from __future__ import annotations

import json
import logging
import queue
import threading
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

from arena.server.submissions import open_store

log = logging.getLogger("arena.server")
REASON_CHARS = 500  # a reason is one line on the author's page; the report holds the rest


def report_json(report) -> dict:
    """A CheckReport as `arena bot check --json` prints it."""
    data = {k: v for k, v in asdict(report).items() if k != "move_ms"}
    data.update(clean=report.clean, median_ms=report.median_ms, worst_ms=report.worst_ms,
                moves=len(report.move_ms), timeouts=report.timeouts, not_played=report.not_played)
    return data


def failure_reason(report) -> str:
    """One line saying why a check is not clean."""
    if not report.combos:
        return "no game was played"
    p = report.problems[0]
    more = f" (and {len(report.problems) - 1} more problems)" if len(report.problems) > 1 else ""
    detail = f": {p.detail}" if p.detail else ""
    line = f"{p.game} with {p.seats} seats: {p.words}{detail}{more}"
    line = " ".join(line.split())
    return line if len(line) <= REASON_CHARS else line[:REASON_CHARS - 1] + "…"


def run_check(db_path: Path, name: str, version: str, sandbox: str = "auto") -> tuple[bool, dict, str | None]:
    """Check the registered version name@version in the sandbox: (clean, report, reason)."""
    from arena.checker import check_vouched
    from arena.registry import Registry

    with open_store(db_path) as store:
        registry = Registry(store)
        v = registry.lookup(f"{name}@{version}")
        spec = registry.spec(v, sandbox=sandbox)
        expected = registry.manifest_ref(v)
    report = check_vouched(spec, list(v.games), expected=expected, language=v.language or "")
    return report.clean, report_json(report), None if report.clean else failure_reason(report)


Checker = Callable[[Path, str, str], tuple[bool, dict, "str | None"]]


class CheckPool:
    """A bounded pool of check threads over one database."""

    def __init__(self, db_path: Path, workers: int = 2, check: Checker | None = None,
                 sandbox: str = "auto"):
        self.db_path = Path(db_path)
        self.workers = max(1, workers)
        self.sandbox = sandbox
        self.check = check or (lambda db, name, version: run_check(db, name, version, sandbox))
        self.jobs: queue.Queue[int | None] = queue.Queue()
        self.threads: list[threading.Thread] = []
        self.queued: set[int] = set()
        self.lock = threading.Lock()

    def start(self) -> list[int]:
        """Start the threads and queue every submission whose check has not ended; their ids."""
        with open_store(self.db_path) as store:
            pending = store.submissions_to_check()
        for sid in pending:
            self.enqueue(sid)
        for i in range(self.workers):
            thread = threading.Thread(target=self._work, name=f"arena-check-{i}", daemon=True)
            thread.start()
            self.threads.append(thread)
        return pending

    def enqueue(self, submission_id: int) -> None:
        """Queue a submission's check (once, however often it is asked)."""
        with self.lock:
            if submission_id in self.queued:
                return
            self.queued.add(submission_id)
        self.jobs.put(submission_id)

    def stop(self, timeout: float | None = None) -> None:
        """Let the running checks end and stop the threads (queued checks wait for the next start)."""
        while True:  # queued checks stay "received" in the database: the next start redoes them
            try:
                self.jobs.get_nowait()
            except queue.Empty:
                break
        for _ in self.threads:
            self.jobs.put(None)
        for thread in self.threads:
            thread.join(timeout)
        self.threads.clear()

    def _work(self) -> None:
        while True:
            sid = self.jobs.get()
            if sid is None:
                return
            try:
                self.check_one(sid)
            except Exception:  # one check's failure must not end the worker
                log.exception("check of submission %s failed", sid)
            finally:
                with self.lock:
                    self.queued.discard(sid)

    def check_one(self, submission_id: int) -> str:
        """Check one submission now and record the outcome; its new status."""
        with open_store(self.db_path) as store:
            row = store.submission(submission_id)
            if row is None or row["status"] in ("clean", "failed"):
                return row["status"] if row else "missing"
            store.start_check(submission_id)
        try:
            clean, report, reason = self.check(self.db_path, row["bot_name"], row["version"])
        except Exception as exc:  # noqa: BLE001  (the author sees why, in one line)
            clean, report, reason = False, None, f"the check could not run: {exc}"
        with open_store(self.db_path) as store:
            store.end_check(submission_id, clean,
                            None if report is None else json.dumps(report, ensure_ascii=False),
                            reason)
        return "clean" if clean else "failed"
