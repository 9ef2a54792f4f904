"""Measuring a text file's lines before it is read: counts, lengths and fields agree with reading the whole
text, whatever the chunking; a long line stops the measuring; UTF-16 is measured as its text."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from fileio import linescan
from fileio.limits import TableLimits
from fileio.linescan import line_lengths, scan_lines, scan_text

_BREAK = re.compile(r"\r\n|\r|\n")


def _lines(data: bytes) -> list[str]:
    """The lines of a text as the readers take them (a last line without an ending counts)."""
    text = data.decode("latin-1")
    lines = _BREAK.split(text)
    return lines[:-1] if lines and not lines[-1] else lines


@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 64])
def test_lines_lengths_and_fields_agree_with_the_whole_text(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, chunk: int
) -> None:
    monkeypatch.setattr(linescan, "_CHUNK", chunk)
    rnd = random.Random(chunk)
    path = tmp_path / "lines.txt"
    for _ in range(150):
        data = bytes(rnd.choice(b'ab,\r\n"') for _ in range(rnd.randrange(0, 50)))
        path.write_bytes(data)
        lines = _lines(data)
        for scan in (scan_lines(path, delimiter=","), scan_text(data, encoding="utf-8", delimiter=",")):
            assert scan.complete
            assert scan.lines == len(lines), data
            assert scan.quotes == (b'"' in data)
            if lines:
                assert scan.longest == max(len(line) for line in lines), data
                assert len(lines[scan.longest_line - 1]) == scan.longest
                assert scan.widest == max(line.count(",") for line in lines) + 1, data
                assert lines[scan.widest_line - 1].count(",") + 1 == scan.widest


@pytest.mark.parametrize("chunk", [1, 3, 64])
def test_measuring_stops_at_the_first_line_over_the_length(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, chunk: int
) -> None:
    monkeypatch.setattr(linescan, "_CHUNK", chunk)
    rnd = random.Random(chunk)
    path = tmp_path / "lines.txt"
    for _ in range(150):
        data = bytes(rnd.choice(b"ab,\r\n") for _ in range(rnd.randrange(0, 40)))
        stop = rnd.randrange(0, 6)
        path.write_bytes(data)
        lines = _lines(data)
        scan = scan_lines(path, stop_above=stop)
        over = [number for number, line in enumerate(lines, start=1) if len(line) > stop]
        if over:
            assert not scan.complete and scan.longest_line == over[0] and scan.longest > stop, data
            assert scan.lines == over[0] - 1
        else:
            assert scan.complete and scan.lines == len(lines)


def test_fields_are_counted_on_the_lines_long_enough_to_pass_a_limit(tmp_path: Path) -> None:
    path = tmp_path / "fields.txt"
    path.write_bytes(b"a,b,c\n" + b"," * 9 + b"\nx,y\n")
    assert scan_lines(path, delimiter=",", fields_from=5).widest == 10  # line 2: 9 bytes, 10 fields
    assert scan_lines(path, delimiter=",", fields_from=5).widest_line == 2
    assert scan_lines(path, delimiter=",", fields_from=50).widest == 0  # no line of 50 bytes: none counted


def test_a_limit_on_fields_is_judged_exactly_however_the_lines_are_chunked(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    rnd = random.Random(7)
    path = tmp_path / "fields.txt"
    limits = TableLimits(max_columns=4)
    for _ in range(300):
        monkeypatch.setattr(linescan, "_CHUNK", rnd.choice((1, 2, 5, 64)))
        data = bytes(rnd.choice(b"a\t\t\n") for _ in range(rnd.randrange(1, 30)))
        path.write_bytes(data)
        widest = max((line.count("\t") + 1 for line in _lines(data)), default=0)
        scan = scan_lines(path, delimiter="\t", fields_from=limits.max_columns)
        found = scan.overrun(limits, exact_fields=True)
        assert (found is not None and "columns" in found.problem) == (widest > 4), data


def test_utf16_is_measured_as_its_text_in_utf8(tmp_path: Path) -> None:
    path = tmp_path / "unicode.txt"
    path.write_bytes(("Name\tOrt\r\n" + "Müller\tZürich\r\n" * 3 + "x" * 10).encode("utf-16"))
    scan = scan_lines(path, delimiter="\t")
    assert (scan.lines, scan.longest, scan.longest_line, scan.widest) == (
        5,
        len("Müller\tZürich".encode()),
        2,
        2,
    )
    assert scan_lines(path, encoding="utf-16", delimiter="\t").lines == 5
    assert line_lengths("ab\r\ncdé".encode("utf-16"), encoding=None) == [2, 4]


@pytest.mark.parametrize("codec", ["base64", "hex", "rot13", "zlib"])
def test_a_codec_that_is_no_text_encoding_is_measured_as_bytes(codec: str) -> None:
    data = b"YWJj\nZGVmZ2hp\n"
    assert line_lengths(data, encoding=codec) == [4, 8, 0]  # the reader then refuses the encoding
    assert scan_text(data, encoding=codec).lines == 2


def test_a_line_cut_off_in_a_head_counts_as_far_as_it_goes() -> None:
    assert line_lengths(b"Name,Ort\nxxxxx", encoding=None) == [8, 5]
    assert line_lengths(b"Name,Ort\n", encoding="cp1252") == [8, 0]


def test_the_overrun_names_the_line_the_limit_and_its_setting(tmp_path: Path) -> None:
    path = tmp_path / "long.txt"
    path.write_bytes(b"a\n" + b"x" * 50 + b"\n")
    found = scan_lines(path, stop_above=10).overrun(TableLimits(max_line_bytes=10), exact_fields=False)
    assert found is not None and found.setting == "POSTFLOWS_TABLE_MAX_LINE_BYTES" and found.limit == 10
    assert found.problem.startswith("line 2 is longer than the limit of 10 bytes per line")
    rows = scan_lines(path).overrun(TableLimits(max_rows=0), exact_fields=False)
    assert rows is not None and "1 lines after the header, more than the limit of 0 rows" in rows.problem
