"""TEMPORARY stub: replaced by the real module from branch wt-c."""
from dataclasses import dataclass
import functools


@dataclass(frozen=True)
class CgroupSupport:
    version: str
    controllers: tuple
    why: str


@functools.lru_cache(maxsize=1)
def support():
    return CgroupSupport("none", (), "stub")


class BotCgroup:
    @classmethod
    def create(cls, tag, *, memory_bytes, pids, cpu_cores, cpus):
        return None


def sweep(older_than_s=0):
    return 0
