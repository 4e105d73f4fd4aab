"""Per-bot resource limits as data: the defaults (defined only here) and their overrides.

A tournament config, a bot manifest and a bot entry may each give some limits (`LimitOverrides`);
`resolve_limits` applies them in that order over `DEFAULT_LIMITS`. The Launcher turns a `Limits`
into rlimits of the bot's process; the ProcessPlayer enforces the stdout line length itself.

Notes on what each limit really bounds (Linux):
- memory_mb is RLIMIT_AS, address space, not resident memory: a bot cannot map more, so it cannot
  use more. 2 GiB leaves room for Node (V8 reserves ~1 GiB of address space at start; it fails
  under 256 MiB) and Python (starts in under 64 MiB).
- cpu_s is RLIMIT_CPU for the life of the process (one match): SIGXCPU at the limit.
- processes bounds the processes and threads of the bot's tree, counted by its reaper (reaper.py),
  which kills the tree when over — for root too. For other users RLIMIT_NPROC (per user, so set to
  the user's current count plus this) also makes the kernel refuse the fork at once.
- open_files is RLIMIT_NOFILE; file_size_mb is RLIMIT_FSIZE (largest file the bot may write).
- line_bytes is enforced by the runner on each line the bot writes to stdout.
- tmp_mb sizes the bot's private /tmp (a tmpfs: under bwrap, and in plain mode as root) and its
  /dev/shm under bwrap.
- cpu_cores is a CFS quota on the bot's cgroup (where the machine offers cgroups): 1.0 is one core's
  worth of CPU time per wall second, whatever threads it runs.
Where the runner can create cgroups, each bot also gets one: memory_mb bounds the memory of its whole
tree (processes and the tmpfs pages it writes), processes its pids, and a cpuset of the core(s)
the match runs on, which the bot cannot widen (see protocol/README.md, "What each mode enforces").
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class Limits(BaseModel):
    """Resolved resource limits of one bot process."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    memory_mb: int = Field(default=2048, ge=16, description="Address space (RLIMIT_AS), MiB.")
    cpu_s: int = Field(default=600, ge=1, description="CPU seconds for the process's life (RLIMIT_CPU).")
    processes: int = Field(default=64, ge=1, description="Processes and threads of the bot's tree.")
    open_files: int = Field(default=256, ge=16, description="Open file descriptors (RLIMIT_NOFILE).")
    file_size_mb: int = Field(default=64, ge=0, description="Largest file it may write (RLIMIT_FSIZE), MiB.")
    line_bytes: int = Field(default=1 << 20, ge=1024, description="Longest stdout line, bytes.")
    tmp_mb: int = Field(default=256, ge=1, description="Size of its private /tmp (tmpfs), MiB.")
    cpu_cores: float = Field(default=1.0, gt=0, le=1024, description="CPU quota (cgroup), cores.")


class LimitOverrides(BaseModel):
    """Some limits, given in a tournament config, a manifest or a bot entry; unset keys inherit."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    memory_mb: int | None = Field(default=None, ge=16)
    cpu_s: int | None = Field(default=None, ge=1)
    processes: int | None = Field(default=None, ge=1)
    open_files: int | None = Field(default=None, ge=16)
    file_size_mb: int | None = Field(default=None, ge=0)
    line_bytes: int | None = Field(default=None, ge=1024)
    tmp_mb: int | None = Field(default=None, ge=1)
    cpu_cores: float | None = Field(default=None, gt=0, le=1024)


DEFAULT_LIMITS = Limits()

# How each limit is named in failure evidence (the unit matters to a bot author).
LIMIT_LABELS = {
    "memory_mb": ("memory", "MiB"),
    "cpu_s": ("cpu time", "s"),
    "processes": ("processes", ""),
    "open_files": ("open files", ""),
    "file_size_mb": ("file size", "MiB"),
    "line_bytes": ("stdout line", "bytes"),
    "tmp_mb": ("/tmp", "MiB"),
    "cpu_cores": ("cpu quota", "cores"),
}


def resolve_limits(*layers: LimitOverrides | None, base: Limits = DEFAULT_LIMITS) -> Limits:
    """`base` with each layer's set keys applied in order (tournament → manifest → bot entry)."""
    values = base.model_dump()
    for layer in layers:
        if layer is not None:
            values.update({k: v for k, v in layer.model_dump().items() if v is not None})
    return Limits(**values)


def as_overrides(limits: Limits | None) -> LimitOverrides | None:
    """The keys of resolved limits that differ from the defaults (to layer them again)."""
    if limits is None:
        return None
    base = DEFAULT_LIMITS.model_dump()
    return LimitOverrides(**{k: v for k, v in limits.model_dump().items() if v != base[k]})


def describe(limits: Limits, key: str) -> str:
    """A limit as evidence text, e.g. `memory 2048 MiB`."""
    label, unit = LIMIT_LABELS[key]
    value = getattr(limits, key)
    return f"{label} {value} {unit}".rstrip()
