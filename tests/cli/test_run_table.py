"""The plain text table ``postflows history`` lists runs in: columns as wide as their values, numbers to the
right, long values cut with an ellipsis, one line per run whatever a value holds."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from postflows.run_table import MAX_WIDTH, duration, runs_text, text_table


@dataclass(frozen=True)
class _Run:
    id: int
    flow: str
    state: str
    started_at: datetime
    duration: timedelta | None
    idempotency_key: str | None
    flow_run_id: str | None


START = datetime(2026, 3, 1, 8, 0, 5, 123456, tzinfo=UTC)


def test_columns_are_as_wide_as_their_widest_value() -> None:
    text = text_table(
        ("id", "name", "n"), [("1", "a", "10"), ("12", "abcdef", "7")], right_aligned=frozenset({"id"})
    )
    assert text.splitlines() == [
        "id  name    n",
        "--  ------  --",
        " 1  a       10",
        "12  abcdef  7",
    ]


def test_a_table_without_rows_is_its_header() -> None:
    assert text_table(("id", "flow"), []) == "id  flow\n--  ----"


def test_a_long_value_is_cut_with_an_ellipsis() -> None:
    text = text_table(("key", "x"), [("k" * 60, "y"), ("short", "z")], max_width=10)
    assert text.splitlines() == [
        "key         x",
        "----------  -",
        "kkkkkkkkk…  y",
        "short       z",
    ]


def test_a_value_at_the_limit_is_kept_whole() -> None:
    value = "v" * MAX_WIDTH
    assert text_table(("value",), [(value,)]).splitlines()[2] == value


def test_a_line_break_in_a_value_stays_on_its_line() -> None:
    text = text_table(("flow", "state"), [("two\nlines\tand a tab", "OK")])
    assert text.splitlines()[2] == "two lines and a tab  OK"


def test_the_runs_columns_and_values() -> None:
    runs = [
        _Run(12, "address-batch", "COMPLETED", START, timedelta(seconds=90), "key-12", "3f1c"),
        _Run(9, "cleanup", "RUNNING", START - timedelta(hours=1), None, None, None),
    ]
    assert runs_text(runs).splitlines() == [
        "id  flow           state      started (UTC)        duration  key     flow run",
        "--  -------------  ---------  -------------------  --------  ------  --------",
        "12  address-batch  COMPLETED  2026-03-01 08:00:05     1m30s  key-12  3f1c",
        " 9  cleanup        RUNNING    2026-03-01 07:00:05         -  -       -",
    ]


def test_a_flow_run_id_and_a_derived_key_are_shown_whole() -> None:
    key = "delivery-reference-sync:" + "0123456789abcdef01234567"
    flow_run = "0b6f3c1e-5d2a-4f7e-9a41-2c8d7e6f5a90"
    line = runs_text([_Run(1, "delivery-reference-sync", "FAILED", START, None, key, flow_run)]).splitlines()[
        2
    ]
    assert line.split()[-2:] == [key, flow_run]


def test_durations() -> None:
    assert [duration(None), duration(4.25), duration(timedelta(seconds=90)), duration(7500.0)] == [
        "-",
        "4.2s",
        "1m30s",
        "2h05m00s",
    ]
