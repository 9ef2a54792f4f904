"""Explicit delivery dates of a deliverability check: a comma-separated list or a file of one date a line
(a one-column CSV with a header too), each once and in order, at most 60; a bad value or line is named."""

from __future__ import annotations

import datetime as dt
import os
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
from tests.peak_memory import run_measured

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
        ("2025-03-03\n2025-03-04\n4.3.2025\n", "line 3, column 1: expected a date YYYY-MM-DD"),
        ("date\n  tomorrow\n", "line 2, column 3: expected a date YYYY-MM-DD"),
        ("date;zip\n2025-03-03;8001\n", "line 1, column 6: expected one date a line, found a second column"),
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


def test_a_file_of_secrets_is_refused_by_line_and_column_without_a_word_of_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")  # the file is neither in the working directory nor a data dir
    secrets = tmp_path / "app.env"
    secrets.write_text("DB_PASSWORD=hunter2-very-secret\nAPI_KEY=sk-live-123\n", encoding="utf-8")
    with pytest.raises(InputError) as refused:
        delivery_dates(str(secrets))
    message = str(refused.value)
    assert message == f"{secrets}: line 1, column 1: expected a date YYYY-MM-DD"
    for word in ("DB_PASSWORD", "hunter2", "API_KEY", "sk-live"):
        assert word not in message


def test_a_file_in_the_working_directory_is_quoted_as_a_short_excerpt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "dates.txt").write_text("2025-03-03\n3.3.2025" + "x" * 200 + "\n", encoding="utf-8")
    with pytest.raises(InputError) as refused:
        delivery_dates("dates.txt")
    message = str(refused.value)
    assert "line 2, column 1: expected a date YYYY-MM-DD — line 2 reads `3.3.2025xx" in message
    assert "x" * 100 not in message  # at most the excerpt's 80 characters


def test_a_device_is_read_no_further_than_the_limit() -> None:
    measured = run_measured(
        "from fileio.commerce.days import delivery_dates\n"
        "try:\n    delivery_dates('/dev/zero')\nexcept Exception as error:\n    print(error)\n"
    )
    assert measured.code == 0, measured.stderr
    assert (
        measured.stdout.strip() == "/dev/zero: a file of delivery dates holds at most 65,536 bytes; not read"
    )
    assert measured.peak_mib < 300


def test_a_pipe_without_a_writer_reads_as_empty(tmp_path: Path) -> None:
    fifo = tmp_path / "dates.fifo"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="no delivery date given"):
        delivery_dates(str(fifo))
