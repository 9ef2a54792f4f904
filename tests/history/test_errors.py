"""The run history's errors: the CLI ends on them as on any error of ours, and they survive pickling (a
Prefect state may carry them)."""

from __future__ import annotations

import pickle
from datetime import UTC, datetime
from typing import NoReturn

import pytest
import typer

from history.errors import HistoryError, KeyBusy, LeaseLost
from history.leases import LeaseHolder

HOLDER = LeaseHolder(
    key="key-1",
    run_id=7,
    host="worker-1",
    pid=4242,
    process_started=None,
    acquired_at=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
    expires_at=datetime(2026, 1, 2, 3, 5, 5, tzinfo=UTC),
)


def test_a_busy_key_pickles_with_its_holder() -> None:
    busy = pickle.loads(pickle.dumps(KeyBusy("key-1", HOLDER, 600.0)))
    assert isinstance(busy, HistoryError) and busy.holder == HOLDER and busy.key == "key-1"
    assert str(busy).startswith(
        "key key-1 is held by run 7 (process 4242 on worker-1, since 2026-01-02 03:04:05"
    )


@pytest.mark.parametrize("error", [KeyBusy("key-1", HOLDER, 600.0), LeaseLost("run 7 no longer holds key-1")])
def test_the_cli_fails_on_them_as_on_any_error_of_ours(
    error: HistoryError, monkeypatch: pytest.MonkeyPatch
) -> None:
    from postflows import cli_common

    failures: list[tuple[str, BaseException, int, bool]] = []

    def fail(label: str, failed: BaseException, code: int, *, name: bool = False) -> NoReturn:
        failures.append((label, failed, code, name))
        raise typer.Exit(code)

    monkeypatch.setattr(cli_common, "fail", fail)

    async def work() -> None:
        raise error

    with pytest.raises(typer.Exit):
        cli_common.run_work(work, progress=False)
    assert failures == [("failed", error, 1, False)]  # one line, no class name: the reason says it all
