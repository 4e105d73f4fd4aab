"""Executors run MatchSpecs and yield MatchResults as they finish.

Only the driver (the caller) writes to the database; executors just compute. `SerialExecutor` runs
in the current process; `RayExecutor` runs each match as a Ray task on a local instance started on
demand, or on an existing cluster (`address`).
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator

from arena.errors import ConfigError
from arena.match import MatchResult, MatchSpec, run_match


class Executor(ABC):
    """Runs matches; results come back in completion order."""

    @abstractmethod
    def run(self, specs: Iterable[MatchSpec]) -> Iterator[MatchResult]:
        """Run every spec and yield each result as soon as it is ready."""

    def close(self) -> None:
        """Release the executor's resources (safe twice)."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class SerialExecutor(Executor):
    """One match after another, in this process."""

    def run(self, specs: Iterable[MatchSpec]) -> Iterator[MatchResult]:
        """Run the specs in order."""
        for spec in specs:
            yield run_match(spec)


def _ray_run_match(spec: MatchSpec) -> MatchResult:
    return run_match(spec)


class RayExecutor(Executor):
    """Matches as Ray tasks: a local Ray instance by default, or the cluster at `address`."""

    def __init__(self, address: str | None = None, num_cpus: int | None = None,
                 max_in_flight: int | None = None):
        import ray

        self.ray = ray
        self._started = False
        if not ray.is_initialized():
            kwargs = dict(
                include_dashboard=False, log_to_driver=False, logging_level="ERROR",
                configure_logging=True,
                # Workers must import this very `arena` package and, for in-process bots, the
                # driver's own modules, whatever their working directory.
                runtime_env={"env_vars": {"PYTHONPATH": _worker_path()}},
            )
            if address:
                _check_reachable(address)
                kwargs["address"] = address
            else:
                kwargs["num_cpus"] = num_cpus or os.cpu_count() or 1
            try:
                ray.init(**kwargs)
            except (ConnectionError, RuntimeError, ValueError) as exc:
                hint = ""
                if address and os.environ.get("RAY_AUTH_MODE") != "token":
                    hint = (" (if the cluster uses token authentication, set RAY_AUTH_MODE=token "
                            "and RAY_AUTH_TOKEN, see the README)")
                raise ConfigError(
                    f"cannot start or join Ray at {address or 'local'}: {exc}{hint}"
                ) from None
            self._started = True
        self.max_in_flight = max_in_flight or 4 * max(1, int(ray.available_resources().get("CPU", 1)))
        self._task = ray.remote(num_cpus=1, max_retries=2)(_ray_run_match)

    def run(self, specs: Iterable[MatchSpec]) -> Iterator[MatchResult]:
        """Submit specs with a bounded number in flight; yield results as they complete."""
        pending = []
        specs = iter(specs)
        exhausted = False
        while True:
            while not exhausted and len(pending) < self.max_in_flight:
                spec = next(specs, None)
                if spec is None:
                    exhausted = True
                    break
                pending.append(self._task.remote(spec))
            if not pending:
                return
            done, pending = self.ray.wait(pending, num_returns=1)
            for ref in done:
                yield self.ray.get(ref)

    def close(self) -> None:
        """Shut down the Ray instance if this executor started it."""
        if self._started:
            self.ray.shutdown()
            self._started = False


def _check_reachable(address: str, timeout: float = 5.0) -> None:
    """Fail fast when nothing listens at a `host:port` address (Ray itself retries for minutes)."""
    import socket

    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit() or "://" in address:
        return  # `auto`, `ray://…` and other forms are left to Ray
    try:
        socket.create_connection((host, int(port)), timeout=timeout).close()
    except OSError as exc:
        raise ConfigError(f"cannot join Ray at {address}: nothing answers there ({exc})") from None


def _worker_path() -> str:
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parts = [root, os.getcwd(), *os.environ.get("PYTHONPATH", "").split(os.pathsep)]
    return os.pathsep.join(dict.fromkeys(p for p in parts if p))


def make_executor(kind: str, ray_address: str | None = None, workers: int | None = None) -> Executor:
    """An executor by name: `ray` (default) or `serial`."""
    if kind == "serial":
        return SerialExecutor()
    if kind == "ray":
        return RayExecutor(address=ray_address, num_cpus=workers)
    raise ConfigError(f"unknown executor {kind!r} (choose ray or serial)")
