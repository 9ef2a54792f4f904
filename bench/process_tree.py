"""CPU time of process trees (a Prefect server, a worker and the flow runs it starts), read with psutil.

A tree's CPU time is, over its live processes, their own user and system time plus what their children
that ended and were reaped used (``children_user``, ``children_system``): a worker's flow run is counted
while it runs and, once the worker has reaped it, in the worker's figure. The difference of two readings is
what the tree used in between, provided every process that ended meanwhile was reaped by one that lives
(:func:`wait_until_reaped`).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterable

import psutil


def tree(pid: int) -> list[psutil.Process]:
    """The process ``pid`` and every live descendant; empty when it has ended."""
    try:
        root = psutil.Process(pid)
        return [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


def cpu_seconds(pid: int) -> float:
    """User and system seconds of the tree of ``pid``, its reaped children's included."""
    total = 0.0
    for process in tree(pid):
        with contextlib.suppress(psutil.NoSuchProcess):
            times = process.cpu_times()
            total += times.user + times.system + times.children_user + times.children_system
    return total


def descendants(pids: Iterable[int]) -> set[int]:
    """The live descendants of the processes ``pids``."""
    return {process.pid for pid in pids for process in tree(pid)[1:]}


def wait_until_reaped(pids: Iterable[int], known: set[int], timeout_s: float = 60.0) -> bool:
    """Wait until the processes ``pids`` have no descendant but the ``known`` ones (those they keep while
    idle): every flow run they started has ended and been reaped. False when ``timeout_s`` passed first."""
    roots = list(pids)
    deadline = time.monotonic() + timeout_s
    while descendants(roots) - known:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True
