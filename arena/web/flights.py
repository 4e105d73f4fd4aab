"""One build per key at a time, for the web app's caches (pages, replays): the first request that
misses runs the build in the threadpool, and every request that comes while it runs awaits that
same build instead of starting another (fifty readers of a cold page cost one build, not fifty)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Hashable
from typing import Any

from starlette.concurrency import run_in_threadpool


async def build_once(filling: dict[Hashable, asyncio.Future], key: Hashable,
                     compute: Callable[[], Any]) -> Any:
    """Run `compute` as the one build of `key`, published in `filling` while it runs; its value.

    Waiters await `asyncio.shield(filling[key])`; a failed build fails them with its exception.
    """
    future = asyncio.get_running_loop().create_future()
    filling[key] = future
    try:
        value = await run_in_threadpool(compute)
    except BaseException as exc:
        future.set_exception(exc)
        future.exception()  # retrieved: no "never retrieved" warning when nobody waited
        raise
    finally:
        filling.pop(key, None)
    future.set_result(value)
    return value
