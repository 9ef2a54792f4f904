"""The result file's status fields decoded (§2.3-§2.5) without per-row Python loops: QSTAT with its
designation and meaning, ShortReport a column per position, CorrectionType and TotalScore as numbers; and
the rows counted per QSTAT.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from connectors.address_service.codes import (
    QSTAT,
    SHORT_REPORT_CHARS,
    SHORT_REPORT_LENGTH,
    normalize_qstat,
    qstat_info,
    short_report_char,
    short_report_column,
)
from fileio.lazy import lazy_module

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    import pyarrow as pa
    import pyarrow.compute as pc
else:
    np = lazy_module("numpy")
    pd = lazy_module("pandas")
    pa = lazy_module("pyarrow")
    pc = lazy_module("pyarrow.compute")

QSTAT_DESIGNATION = "QSTAT_Designation"
QSTAT_MEANING = "QSTAT_Meaning"
SUMMARY_COLUMNS = ["QSTAT", "Designation", "Meaning", "Count", "Share %"]
LARGEST_RECORD_ID = 2**53  # every whole number below it is exact as a float (and fits Int64)
_LIKELY_REPORT_BYTES = "".join(["\x00 ", *SHORT_REPORT_CHARS]).encode("ascii")
_REPORT_SAMPLE_ROWS = 1 << 12  # whose characters are numbered before all the reports are read
_UNNUMBERED = b"\xff"


def decode_results(frame: pd.DataFrame) -> pd.DataFrame:
    """Add the decoded status columns to a result frame (vectorised: work is per distinct value, not per row).

    Adds ``QSTAT_Designation`` and ``QSTAT_Meaning`` after QSTAT (unknown codes read "Unknown QSTAT"), turns
    ``CorrectionType`` into nullable ``Int64`` and ``TotalScore`` into float (``"100.00"`` → 100.0), and
    appends ``SR01_Company`` … ``SR24_AddressStatus``: each ShortReport character's label with the character,
    such as ``"compliance (1)"``, ``"changed (3)"``, ``"no statement (-)"``, ``"special (H)"``; a missing
    position is ``""``.
    The decoded text columns are categorical.
    """
    decoded = frame.copy(deep=False)  # copy-on-write: the caller's frame is never modified
    if "QSTAT" in decoded:
        qstat = decoded["QSTAT"].fillna("")
        position = decoded.columns.get_loc("QSTAT")
        assert isinstance(position, int)
        designation, meaning = _decode_distinct(qstat, _designation, _meaning)
        decoded.insert(position + 1, QSTAT_DESIGNATION, designation)
        decoded.insert(position + 2, QSTAT_MEANING, meaning)
    if "CorrectionType" in decoded:
        numbers = _numbers_distinct(decoded["CorrectionType"])
        whole = (numbers == numbers.round()) & (numbers.abs() < LARGEST_RECORD_ID)
        decoded["CorrectionType"] = numbers.where(whole).astype("Int64")
    if "TotalScore" in decoded:
        decoded["TotalScore"] = _numbers_distinct(decoded["TotalScore"])
    if "ShortReport" in decoded:
        for name, column in decode_short_report(decoded["ShortReport"]).items():
            decoded[name] = column
    return decoded


def decode_short_report(short_report: pd.Series) -> pd.DataFrame:
    """One categorical column per ShortReport position, labelled ``"<label> (<char>)"``: the label first, so
    that no label starts a CSV cell with ``-``."""
    coded = _whole_report_codes(short_report)
    codes, present = coded if coded is not None else _report_codes(_short_report_chars(short_report))
    labels = pd.Index([_short_report_label(chr(code)) for code in present], dtype=object)
    columns = {
        short_report_column(position + 1): pd.Categorical.from_codes(
            codes[position], categories=labels, validate=False
        )
        for position in range(SHORT_REPORT_LENGTH)
    }
    return pd.DataFrame(columns, index=short_report.index, copy=False)


def _report_codes(chars: np.ndarray) -> tuple[np.ndarray, list[int]]:
    """The category number of each character (24 × rows) and the code points numbered, in order.

    A lookup from code point to category number: the alphabet is tiny, the rows are many. A blank is read
    as 0 ("not delivered"), as is a position past the report's end.
    """
    size = 0x100 if chars.dtype == np.uint8 else 0x10000
    seen = np.zeros(size, dtype=bool)
    if chars.dtype == np.uint8:
        seen[_bytes_present(chars.tobytes(), _LIKELY_REPORT_BYTES)] = True
    else:
        seen[chars] = True
    if seen[ord(" ")]:
        seen[ord(" ")], seen[0] = False, True
    present = np.flatnonzero(seen)
    lookup = np.zeros(size, dtype=np.int8 if len(present) < 2**7 else np.int16)
    lookup[present] = np.arange(len(present))
    lookup[ord(" ")] = lookup[0]
    if chars.dtype == np.uint8:  # one byte per character and per code: a byte translation
        codes = np.frombuffer(chars.tobytes().translate(lookup.tobytes()), dtype=np.int8).reshape(chars.shape)
    else:
        codes = lookup[chars]
    return codes, present.tolist()


def _whole_report_codes(short_report: pd.Series) -> tuple[np.ndarray, list[int]] | None:
    """:func:`_report_codes` of reports that are all 24 ASCII characters long, as delivered files have
    them: read from Arrow's buffers a chunk at a time. The characters numbered are those of the first
    reports; only when others occur are all the bytes searched for them. None for other reports."""
    chunks = _whole_ascii_reports(short_report)
    if chunks is None:
        return None
    present = set(chunks[0][:_REPORT_SAMPLE_ROWS].tobytes())
    codes = _numbered(chunks, present)
    if int(codes.min()) < 0:  # a character the first reports lack
        data = b"".join(chunk.tobytes() for chunk in chunks)
        present.update(_bytes_present(data, bytes(sorted(present))))
        codes = _numbered(chunks, present)
    return codes, sorted({0 if value == ord(" ") else value for value in present})


def _numbered(chunks: list[np.ndarray], present: set[int]) -> np.ndarray:
    """The category number of each character of the reports (rows × 24 bytes per chunk), laid out a row
    per position (24 × rows), a chunk at a time; -1 for a byte not ``present``."""
    numbers = np.frombuffer(_byte_numbers(present), dtype=np.int8)
    codes = np.empty((SHORT_REPORT_LENGTH, sum(len(chunk) for chunk in chunks)), dtype=np.int8)
    row = 0
    for chunk in chunks:  # a chunk's bytes stay in the caches while its 24 positions are read
        np.take(numbers, chunk.T, out=codes[:, row : row + len(chunk)], mode="clip")
        row += len(chunk)
    return codes


def _byte_numbers(present: set[int]) -> bytes:
    """A byte translation from each of the ASCII bytes ``present`` to its category number, its rank in
    code point order with a blank read as 0; 0xFF (-1 as a signed byte) from any other byte."""
    blank = ord(" ")
    ranked = sorted({0 if value == blank else value for value in present})
    numbers = bytearray(_UNNUMBERED * 0x100)
    for number, value in enumerate(ranked):
        numbers[value] = number
    if blank in present:
        numbers[blank] = numbers[0]
    return bytes(numbers)


def _bytes_present(data: bytes, likely: bytes) -> list[int]:
    """The distinct byte values in ``data``: each ``likely`` one looked for (a memchr), the others read from
    what is left once the likely ones are deleted, one value at a time."""
    present = [value for value in likely if bytes((value,)) in data]
    rest = data.translate(None, likely)
    while rest:
        present.append(rest[0])
        rest = rest.translate(None, rest[:1])
    return present


def _short_report_chars(short_report: pd.Series) -> np.ndarray:
    """The reports' first 24 characters as a 24 × rows array of code points, a row per position (uint8 when
    all are ASCII, else uint16), 0 past a short report's end. Code points beyond U+FFFF (never valid report
    characters) fold onto U+FFFF, which reads "unknown"."""
    rows, length = len(short_report), SHORT_REPORT_LENGTH
    if isinstance(short_report.dtype, pd.StringDtype) and short_report.dtype.storage == "pyarrow" and rows:
        # Arrow strings: when all are ASCII, the padded reports are one buffer of rows × 24 bytes.
        values = pa.array(short_report.array)
        values = (values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values).fill_null("")
        padded = pc.utf8_rpad(pc.utf8_slice_codeunits(values, 0, length), width=length, padding="\x00")
        if pc.all(pc.string_is_ascii(padded)).as_py():
            offset_type = np.int64 if pa.types.is_large_string(padded.type) else np.int32
            offsets = np.frombuffer(padded.buffers()[1], dtype=offset_type)[padded.offset :]
            data = np.frombuffer(padded.buffers()[2], dtype=np.uint8)[offsets[0] : offsets[0] + rows * length]
            chars = np.ascontiguousarray(data.reshape(rows, length).T)
            del values, padded
            pa.default_memory_pool().release_unused()
            return chars
    values = short_report.fillna("").to_numpy(dtype=f"U{length}")
    # A U24 array is 24 UCS-4 code points per row; padding becomes 0 ("not delivered").
    points = values.view(np.uint32).reshape(rows, length).T
    return np.ascontiguousarray(np.minimum(points, 0xFFFF), dtype=np.uint16)


def _whole_ascii_reports(short_report: pd.Series) -> list[np.ndarray] | None:
    """The bytes of reports held by Arrow that are all 24 ASCII characters long, rows × 24 per chunk of
    the column (views of Arrow's buffers); None for other reports."""
    length, dtype = SHORT_REPORT_LENGTH, short_report.dtype
    if not (isinstance(dtype, pd.StringDtype) and dtype.storage == "pyarrow" and len(short_report)):
        return None
    values = pa.array(short_report.array)
    chunks = []
    for chunk in values.chunks if isinstance(values, pa.ChunkedArray) else [values]:
        if not len(chunk):
            continue
        offset_type = np.int64 if pa.types.is_large_string(chunk.type) else np.int32
        offsets = np.frombuffer(chunk.buffers()[1], dtype=offset_type)[
            chunk.offset : chunk.offset + len(chunk) + 1
        ]
        if chunk.null_count or int(offsets[-1] - offsets[0]) != len(chunk) * length:
            return None
        if not (np.diff(offsets) == length).all():
            return None
        data = np.frombuffer(chunk.buffers()[2], dtype=np.uint8)[int(offsets[0]) : int(offsets[-1])]
        if int(data.max()) >= 0x80:
            return None
        chunks.append(data.reshape(-1, length))
    return chunks


def _short_report_label(char: str) -> str:
    label = short_report_char(char).label
    return f"{label} ({char})" if label else ""


def _designation(code: str) -> str:
    info = qstat_info(code)
    if info is not None:
        return info.designation
    return "Unknown QSTAT" if code.strip() else ""


def _meaning(code: str) -> str:
    info = qstat_info(code)
    if info is not None:
        return info.meaning
    return f"QSTAT {code.strip()!r} is not in the status table" if code.strip() else ""


def _decode_distinct(values: pd.Series, *decoders: Callable[[str], str]) -> list[pd.Series]:
    """A categorical column per decoder, each distinct value decoded once."""
    codes, uniques = pd.factorize(values)
    decoded = []
    for decode in decoders:
        label_codes, labels = pd.factorize(
            np.array([decode(str(unique)) for unique in uniques], dtype=object)
        )
        mapped = label_codes[codes] if len(codes) else codes
        categories = pd.Index(labels, dtype=object)
        decoded.append(
            pd.Series(pd.Categorical.from_codes(mapped, categories=categories), index=values.index)
        )
    return decoded


def _numbers_distinct(values: pd.Series) -> pd.Series:
    """Text to float (``"100.00"``, ``"99,5"``; empty or junk → NaN, and so is a number too large for a
    float, such as ``"1e400"``), parsing each distinct value once."""
    codes, uniques = pd.factorize(values.fillna(""))
    text = pd.Series(uniques, dtype=object).astype(str).str.strip().str.replace(",", ".", regex=False)
    numbers = pd.to_numeric(text.where(text != ""), errors="coerce").to_numpy(dtype="float64")
    numbers = np.where(np.isfinite(numbers), numbers, np.nan)
    parsed = np.append(numbers, np.nan)[codes]  # code -1 (none here after fillna) would pick the NaN
    return pd.Series(parsed, index=values.index, dtype="float64")


def qstat_summary(decoded: pd.DataFrame) -> pd.DataFrame:
    """Rows per QSTAT with designation, meaning, count and share in percent; spec order, unknown codes next,
    rows without a status last."""
    raw = decoded["QSTAT"].fillna("") if "QSTAT" in decoded else pd.Series([], dtype=str)
    counts = raw.value_counts(sort=False)
    by_code: dict[str, int] = {}
    for value, count in counts.items():
        code = normalize_qstat(value)
        by_code[code] = by_code.get(code, 0) + int(count)
    order = {code: position for position, code in enumerate(QSTAT)}
    codes = sorted(by_code, key=lambda c: (c == "", c not in order, order.get(c, 0), c.zfill(4)))
    total = sum(by_code.values())
    rows = [
        {
            "QSTAT": code,
            "Designation": _designation(code) if code else "(no status)",
            "Meaning": _meaning(code) if code else "no QSTAT delivered for these rows",
            "Count": by_code[code],
            "Share %": round(100.0 * by_code[code] / total, 2) if total else 0.0,
        }
        for code in codes
    ]
    return pd.DataFrame(rows, columns=SUMMARY_COLUMNS).astype({"Count": "int64", "Share %": "float64"})


def duplicate_counts(decoded: pd.DataFrame) -> dict[str, int]:
    """The duplicates of the results, counted from the field that carries them: ``Double_DSTAT`` (the
    duplicate status of §2.3), or the QSTAT where a service puts K or F there (§2.4). ``originals`` (K),
    ``duplicates`` (F) and ``groups`` (distinct ``Double_DoubleGroupNo`` of those rows, where given)."""

    def column(name: str) -> pd.Series:
        if name not in decoded:
            return pd.Series("", index=decoded.index, dtype=object)
        values = decoded[name].astype(object)
        return values.where(values.notna(), "").astype(str).str.strip().str.upper()

    status = column("Double_DSTAT").where(lambda s: s.isin(("K", "F")), column("QSTAT"))
    double = status.isin(("K", "F"))
    groups = column("Double_DoubleGroupNo")[double]
    return {
        "originals": int((status == "K").sum()),
        "duplicates": int((status == "F").sum()),
        "groups": int(groups[groups != ""].nunique()),
    }
