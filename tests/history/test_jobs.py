"""The typed facts of a remote job read what earlier versions stored, and write only what they set."""

from __future__ import annotations

from datetime import UTC, datetime

from history.jobs import BatchJobData, JobData, Parking, job_data_changes

STORED = {
    "fingerprint": "ab" * 32,
    "input_token": "in-1",
    "output_token": "out-1",
    "extra_outputs": {"moves": "out-2"},
    "parked": {
        "waiting_since": "2026-01-02T03:04:05+00:00",
        "count": 2,
        "resume_at": "2026-01-02T04:04:05+00:00",
    },
    "order_kind": "standard",
}


def test_stored_facts_read_typed_and_keep_the_keys_they_do_not_name() -> None:
    facts = BatchJobData.read(STORED)
    assert facts.file_tokens() == {"in-1", "out-1", "out-2"}
    assert facts.parked == Parking(
        waiting_since=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
        count=2,
        resume_at=datetime(2026, 1, 2, 4, 4, 5, tzinfo=UTC),
    )
    assert facts.model_dump(mode="json", exclude_unset=True) == STORED


def test_only_the_fields_set_are_written_and_none_clears_one() -> None:
    assert BatchJobData(download="/x/result.csv").changes() == {"download": "/x/result.csv"}
    assert JobData(parked=None).changes() == {"parked": None}
    assert job_data_changes({"row": 3}) == {"row": 3}
    assert job_data_changes(None) is None


def test_a_parking_is_written_as_it_always_was() -> None:
    when = datetime(2026, 1, 2, 3, 4, 5, 123456, tzinfo=UTC)
    written = JobData(parked=Parking(waiting_since=when, count=1, resume_at=when)).changes()
    assert written == {
        "parked": {"waiting_since": when.isoformat(), "count": 1, "resume_at": when.isoformat()}
    }


def test_facts_written_before_the_models_read_empty() -> None:
    assert BatchJobData.read(None).file_tokens() == set()
    assert JobData.read({}).parked is None
