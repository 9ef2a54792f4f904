"""Every history has an id of its own, made once and kept: the same for every process on one database, never
the same for two databases; failed runs recorded from outside a run say it too."""

from __future__ import annotations

import uuid
from pathlib import Path

from history.db import session_factory
from history.models import HistoryIdentity
from history.recorder import RunRecorder, record_unrecorded_failure
from history.store import history_identity
from tests.history.conftest import fresh_database_url


def _identity(url: str) -> str:
    with session_factory(url).begin() as session:
        return history_identity(session)


def test_a_history_gets_one_id_and_keeps_it(database_url: str) -> None:
    first = _identity(database_url)
    assert str(uuid.UUID(first)) == first
    assert _identity(database_url) == first
    with session_factory(database_url).begin() as session:
        assert [row.history_id for row in session.query(HistoryIdentity).all()] == [first]


def test_two_histories_never_share_an_id(database_url: str, tmp_path: Path) -> None:
    with fresh_database_url("sqlite", tmp_path / "other") as other:
        assert _identity(database_url) != _identity(other)


async def test_a_recorder_and_a_recorded_failure_carry_the_history_id(database_url: str) -> None:
    recorder = await RunRecorder.start(
        database_url, flow="address-batch", idempotency_key=None, parameters={}
    )
    await recorder.finish("COMPLETED")
    failed = await record_unrecorded_failure(
        database_url,
        flow="address-batch",
        flow_run_id=str(uuid.uuid4()),
        parameters={},
        error="input file not found",
    )
    assert failed is not None
    assert recorder.history_id == failed.history_id == _identity(database_url)
    assert failed.run_id == recorder.run_id + 1
