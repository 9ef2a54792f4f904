"""Who this process is, and whether a process recorded on this host still lives.

A process is named by host, pid and start time (psutil's ``create_time``: seconds since the epoch, to the
clock tick), so a pid reused after a crash or a reboot is never taken for the process that recorded it.
"""

from __future__ import annotations

import os
import socket

import psutil

from history import Claimant, LeaseHolder

# psutil derives a start time from the boot time the kernel reports, which may move by a second when the
# clock is set; a pid is reused no sooner than the pids wrap around, so starts this close are one process.
SAME_START_S = 1.5


def process_started(pid: int) -> str | None:
    """A token for when ``pid`` started (seconds since the epoch), None where it cannot be told."""
    try:
        return f"{psutil.Process(pid).create_time():.2f}"
    except psutil.Error:
        return None


def host_name() -> str:
    return socket.gethostname()


def claimant(run_id: int) -> Claimant:
    """This process, claiming a lease for ``run_id``."""
    pid = os.getpid()
    return Claimant(run_id=run_id, host=host_name(), pid=pid, process_started=process_started(pid))


def holder_is_alive(holder: LeaseHolder) -> bool:
    """False only when the holder certainly is gone: recorded on this host, and its process ended (or a
    process started at another time has its pid)."""
    if holder.host != host_name():
        return True  # another machine: only the lease's expiry tells
    try:
        process = psutil.Process(holder.pid)
        if process.status() in (psutil.STATUS_ZOMBIE, psutil.STATUS_DEAD):
            return False  # killed, waiting only to be reaped
        started = process.create_time()
    except psutil.NoSuchProcess:
        return False
    except psutil.Error:
        return True  # not ours to inspect: only the lease's expiry tells
    return _same_start(holder.process_started, started)


def _same_start(recorded: str | None, started: float) -> bool:
    """Whether the recorded start token names a process started at ``started``; a token that is not a
    time (none, or recorded by an older version) cannot tell otherwise, so it counts as the same."""
    try:
        return recorded is None or abs(float(recorded) - started) < SAME_START_S
    except ValueError:
        return True
