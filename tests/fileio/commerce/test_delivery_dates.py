"""Explicit delivery dates of a deliverability check: a comma-separated list or a file of one date a line
(a one-column CSV with a header too), each once and in order, at most 60; a bad value or line is named."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from fileio.commerce.days import (
    DATES_FILE_MAX_BYTES,
    MAX_DAYS,
    date_list,
    delivery_dates,
    is_date_list,
    read_date_file,
)
from fileio.errors import InputError

MONDAY = dt.date(2025, 3, 3)


def test_a_list_is_read_each_date_once_in_order() -> None:
    assert date_list(" 2025-03-05, 2025-03-03,2025-03-05 ,") == [MONDAY, dt.date(2025, 3, 5)]
    assert delivery_dates("2025-03-03") == [MONDAY]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("2025-03-03,2025-02-30", "'2025-02-30' is not a date YYYY-MM-DD"),
        ("2025-3-3", "'2025-3-3' is not a date YYYY-MM-DD"),
        ("20250303", "'20250303' is not a date YYYY-MM-DD"),
        ("2025-03-03,tomorrow", "'tomorrow' is not a date YYYY-MM-DD"),
        (",", "no delivery date given"),
    ],
)
def test_a_bad_value_of_a_list_is_named(spec: str, message: str) -> None:
    assert is_date_list(spec)
    with pytest.raises(ValueError, match=message):
        delivery_dates(spec)


def test_more_dates_than_allowed_are_refused() -> None:
    days = [MONDAY + dt.timedelta(days=n) for n in range(MAX_DAYS + 1)]
    assert len(date_list(",".join(day.isoformat() for day in days[:MAX_DAYS]))) == MAX_DAYS
    with pytest.raises(ValueError, match=f"at most {MAX_DAYS} delivery dates .*, got {MAX_DAYS + 1}"):
        date_list(",".join(day.isoformat() for day in days))


@pytest.mark.parametrize(
    "text",
    [
        "2025-03-05\n2025-03-03\n\n",
        "\ufeffdate\r\n2025-03-03\r\n2025-03-05\r\n",
        'deliveryDate;\n"2025-03-05";\n2025-03-03\n',
    ],
    ids=["lines", "csv-with-bom-and-header", "quoted-with-separator"],
)
def test_a_file_of_one_date_a_line_or_a_one_column_csv(tmp_path: Path, text: str) -> None:
    path = tmp_path / "dates.csv"
    path.write_text(text, encoding="utf-8")
    assert delivery_dates(str(path)) == [MONDAY, dt.date(2025, 3, 5)]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("2025-03-03\n2025-03-04\n4.3.2025\n", "line 3: '4.3.2025' is not a date YYYY-MM-DD"),
        ("date\ntomorrow\n", "line 2: 'tomorrow' is not a date YYYY-MM-DD"),
        ("date;zip\n2025-03-03;8001\n", "line 1 holds more than one column"),
        ("date\n\n", "no delivery date given"),
    ],
)
def test_a_bad_line_is_named_with_the_file(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "dates.txt"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match=message) as refused:
        read_date_file(path)
    assert str(refused.value).startswith(str(path))


def test_a_missing_or_oversized_file_is_refused_before_it_is_read(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file, nor a list of dates"):
        delivery_dates(str(tmp_path / "dates.txt"))
    big = tmp_path / "big.txt"
    big.write_text("2025-03-03\n" * (DATES_FILE_MAX_BYTES // 11 + 1), encoding="utf-8")
    with pytest.raises(InputError, match="at most 65,536 bytes"):
        delivery_dates(str(big))
