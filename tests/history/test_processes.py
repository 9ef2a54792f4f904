"""A lease's holder is gone only when it certainly is: recorded on this host and its process ended, became a
zombie, or its pid now names a process started at another time."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime

from history import LeaseHolder
from history.processes import claimant, holder_is_alive, host_name, process_started


def _holder(pid: int, started: str | None, host: str | None = None) -> LeaseHolder:
    now = datetime.now(UTC)
    return LeaseHolder(
        key="k",
        run_id=1,
        host=host or host_name(),
        pid=pid,
        process_started=started,
        acquired_at=now,
        expires_at=now,
    )


def test_this_process_claims_with_its_start_time_and_is_alive() -> None:
    me = claimant(7)
    assert me.pid == os.getpid() and me.host == host_name()
    assert me.process_started is not None and float(me.process_started) > 0
    assert holder_is_alive(_holder(me.pid, me.process_started))
    assert holder_is_alive(_holder(me.pid, None))  # no start recorded: the pid alone tells


def test_a_pid_that_names_a_process_started_at_another_time_is_gone() -> None:
    started = float(process_started(os.getpid()) or 0)
    assert not holder_is_alive(_holder(os.getpid(), f"{started - 3600:.2f}"))


def test_an_ended_process_and_a_zombie_are_gone() -> None:
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True)
    assert not holder_is_alive(_holder(int(ended.stdout), None))
    zombie = subprocess.Popen([sys.executable, "-c", "pass"])
    started = process_started(zombie.pid)
    while os.waitid(os.P_PID, zombie.pid, os.WEXITED | os.WNOWAIT | os.WNOHANG) is None:
        pass  # ended, not reaped: a zombie
    try:
        assert not holder_is_alive(_holder(zombie.pid, started))
    finally:
        zombie.wait()


def test_another_host_or_a_token_that_is_not_a_time_cannot_tell() -> None:
    assert holder_is_alive(_holder(2**22 + 1, None, host="another-host"))
    assert holder_is_alive(_holder(os.getpid(), "3f2a1b4c:123456"))  # recorded by an older version
