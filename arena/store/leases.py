"""Leases: which driver runs a tournament, its heartbeat, and requests to stop or cancel it."""

from __future__ import annotations

import os
import socket
import time
from dataclasses import dataclass

from arena.errors import LeaseError, StoreError
from arena.store.database import now

LEASE_STALE_S = 60.0  # a lease whose heartbeat is older than this belongs to a dead driver


@dataclass(frozen=True)
class Lease:
    """Who runs a tournament: a random token, the driver's pid, host and process start."""

    token: str
    pid: int
    host: str
    started: str = ""  # process_start(pid) when the lease was taken ("" where unknown)

    @classmethod
    def mine(cls) -> Lease:
        """A new lease for this process."""
        pid = os.getpid()
        return cls(os.urandom(8).hex(), pid, socket.gethostname(), process_start(pid) or "")


def _read_small(path: str) -> str | None:
    try:
        with open(path, "rb") as fh:
            return fh.read(4096).decode("ascii", "replace").strip()
    except FileNotFoundError:
        return ""
    except OSError:
        return None


def process_start(pid: int) -> str | None:
    """Who a pid is: `<pid namespace>/<boot id>/<start tick>`; "" when no live process has it.

    None when this cannot be told (no /proc, or /proc hides other users' processes). A pid number
    can be reused, by a later process or by one in another PID namespace: two processes are the
    same only when all three parts agree.
    """
    stat_line = _read_small(f"/proc/{pid}/stat")
    if stat_line is None:
        return None
    if not stat_line:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return ""
        except OSError:
            pass
        return None  # alive but not shown to us
    fields = stat_line[stat_line.rindex(")") + 2:].split() if ")" in stat_line else []
    if len(fields) < 20:
        return None
    if fields[0] in ("Z", "X"):
        return ""  # a zombie is dead already: only its parent has not reaped it
    try:
        namespace = os.readlink("/proc/self/ns/pid")
    except OSError:
        return None
    boot = _read_small("/proc/sys/kernel/random/boot_id")
    return f"{namespace}/{boot}/{fields[19]}" if boot else None


def lease_alive(pid: int, host: str, heartbeat_ts: float | None, started: str | None = None) -> bool:
    """Whether a lease's driver still runs: on this host that very process, elsewhere a recent heartbeat.

    `started` (process_start when the lease was taken; None or "" in leases from before it was
    recorded) tells a dead holder from a later process with its pid at once, where the 60 s
    heartbeat rule would keep a crashed driver's tournament locked.
    """
    recent = heartbeat_ts is not None and time.time() - heartbeat_ts < LEASE_STALE_S
    if host == socket.gethostname():
        mine = process_start(os.getpid()) if started else None
        if mine:
            namespace, boot, _ = started.split("/", 2) if started.count("/") >= 2 else ("", "", "")
            my_namespace, my_boot, _ = mine.split("/", 2)
            if boot and boot != my_boot:
                return False  # taken before this machine last booted
            if namespace == my_namespace and (now := process_start(pid)) is not None:
                # A holder that stopped beating (frozen) is given up after 60 s, as before.
                return now == started and recent
            # Another PID namespace (its pid names another process here) or a hidden /proc:
            # only the heartbeat can tell.
            return recent
        if process_start(pid) == "":
            return False  # gone, or a zombie its parent has not reaped yet
        # A pid can be reused: an old heartbeat still marks the holder dead.
    return recent



class LeaseRows:
    """Store methods for leases."""

    def acquire_lease(self, tournament_id: int, lease: Lease, take_stale: bool) -> None:
        """Hold a tournament for this driver; LeaseError names a live holder (or a stale one)."""
        with self.transaction():
            row = self.db.conn.execute(
                "select token, pid, host, heartbeat_at, heartbeat_ts, pid_start from leases "
                "where tournament_id = ?", [tournament_id]).fetchone()
            if row and row[0] != lease.token:
                holder = f"pid {row[1]} on {row[2]} (last heartbeat {row[3]})"
                if lease_alive(row[1], row[2], row[4], row[5]):
                    raise LeaseError(f"tournament {tournament_id} is being run by {holder}")
                if not take_stale:
                    raise LeaseError(
                        f"tournament {tournament_id} has a stale lease of {holder}; "
                        f"take it over with --resume")
            self.db.conn.execute("delete from leases where tournament_id = ?", [tournament_id])
            self._write_lease(tournament_id, lease)

    def _write_lease(self, tournament_id: int, lease: Lease) -> None:
        stamp = now()
        self._insert("leases", [{
            "tournament_id": tournament_id, "token": lease.token, "pid": lease.pid,
            "host": lease.host, "started_at": stamp, "heartbeat_at": stamp,
            "heartbeat_ts": time.time(), "cancel_requested": 0, "pid_start": lease.started,
        }])

    def _heartbeat(self, tournament_id: int) -> None:
        self.db.conn.execute(
            "update leases set heartbeat_at = ?, heartbeat_ts = ? where tournament_id = ?",
            [now(), time.time(), tournament_id])

    def heartbeat(self, tournament_id: int, token: str) -> bool:
        """Refresh this driver's lease; True when a cancel was requested (or the lease was lost)."""
        with self.transaction():
            self.db.conn.execute(
                "update leases set heartbeat_at = ?, heartbeat_ts = ? "
                "where tournament_id = ? and token = ?", [now(), time.time(), tournament_id, token])
            row = self.db.conn.execute(
                "select cancel_requested from leases where tournament_id = ? and token = ?",
                [tournament_id, token]).fetchone()
        return row is None or bool(row[0])

    def release_lease(self, tournament_id: int, token: str) -> None:
        """Drop this driver's lease (a no-op when it holds none)."""
        with self.transaction():
            self.db.conn.execute("delete from leases where tournament_id = ? and token = ?",
                                 [tournament_id, token])

    def lease(self, tournament_id: int) -> dict | None:
        """The lease row of a tournament, with `alive` computed, or None."""
        rows = list(self.db["leases"].rows_where("tournament_id = ?", [tournament_id]))
        if not rows:
            return None
        row = rows[0]
        row["alive"] = lease_alive(row["pid"], row["host"], row["heartbeat_ts"], row.get("pid_start"))
        return row

    def request_stop(self, tournament_id: int) -> bool:
        """Ask the running driver to stop (resumable); False when no live driver holds it."""
        with self.transaction():
            lease = self.lease(tournament_id)
            if not (lease and lease["alive"]):
                return False
            self.db.conn.execute("update leases set cancel_requested = 1 where tournament_id = ?",
                                 [tournament_id])
        return True

    def request_cancel(self, tournament_id: int) -> str:
        """Ask the running driver to stop, or cancel a stopped tournament; returns what happened."""
        t = self.tournament(tournament_id)
        if t["status"] in ("finished", "cancelled"):
            raise StoreError(f"tournament {tournament_id} is already {t['status']}")
        with self.transaction():
            lease = self.lease(tournament_id)
            if lease and lease["alive"]:
                self.db.conn.execute("update leases set cancel_requested = 1 where tournament_id = ?",
                                     [tournament_id])
                return "requested"
            self.db.conn.execute("delete from leases where tournament_id = ?", [tournament_id])
            self.db.conn.execute(
                "update tournaments set status = 'cancelled', finished_at = ? where id = ?",
                [now(), tournament_id])
        return "cancelled"

