"""Who this process is, and whether a process recorded on this host still lives.

A process is named by host, pid and start time (clock ticks since boot, with the boot id), so a pid reused
after a crash or a reboot is never taken for the process that recorded it.
"""

from __future__ import annotations

import os
import socket
from functools import cache
from pathlib import Path

from history import Claimant, LeaseHolder


@cache
def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text(encoding="ascii").strip()[:8]
    except OSError:
        return ""


def _stat_fields(pid: int) -> list[str] | None:
    """Fields of ``/proc/<pid>/stat`` after the command name (which may hold spaces), or None."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    return raw.rpartition(")")[2].split()


def process_started(pid: int) -> str | None:
    """A token for when ``pid`` started (boot id and start ticks), None where /proc cannot tell."""
    fields = _stat_fields(pid)
    if fields is None or len(fields) < 20:
        return None
    return f"{_boot_id()}:{fields[19]}"


def host_name() -> str:
    return socket.gethostname()


def claimant(run_id: int) -> Claimant:
    """This process, claiming a lease for ``run_id``."""
    pid = os.getpid()
    return Claimant(run_id=run_id, host=host_name(), pid=pid, process_started=process_started(pid))


def holder_is_alive(holder: LeaseHolder) -> bool:
    """False only when the holder certainly is gone: recorded on this host, and its process ended."""
    if holder.host != host_name():
        return True  # another machine: only the lease's expiry tells
    fields = _stat_fields(holder.pid)
    if fields is None:
        if Path("/proc/self/stat").exists():
            return False  # /proc works here and has no such process
        try:
            os.kill(holder.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    if fields and fields[0] in ("Z", "X"):
        return False  # killed, waiting only to be reaped
    recorded = holder.process_started
    return recorded is None or recorded == process_started(holder.pid)
