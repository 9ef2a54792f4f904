"""A workbook's package measured before any reader opens it: a reader of .xlsx takes the shared strings, the
workbook part and the sheet it reads whole, whatever their size, so a file of a few hundred kilobytes can hold
a gigabyte of one string or of blanks. Here every part is inflated as a stream and counted, keeping nothing:
the number of parts (from the archive's end record, before its directory is read), each part's inflated size,
its ratio to its compressed size and the archive's, the count of shared strings and of sheets. The first
limit passed refuses the workbook, naming its setting.

A workbook is measured once per file as it is on disk (path, size, modification time) and limits.
"""

from __future__ import annotations

import re
import struct
import threading
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from fileio.limits import (
    WORKBOOK_MAX_PART_BYTES_SETTING,
    WORKBOOK_MAX_PARTS_SETTING,
    WORKBOOK_MAX_RATIO_SETTING,
    WORKBOOK_MAX_SHARED_STRINGS_SETTING,
    WORKBOOK_MAX_SHEETS_SETTING,
    Overrun,
    TableLimits,
)

_CHUNK = 1 << 20
# Below this many inflated bytes the ratio is not judged: small parts (styles, themes) compress far better
# than any sheet, and can do no harm.
_RATIO_GRACE_BYTES = 1 << 20
_TAG_ROOM = 256  # bytes after a chunk's last "<" that hold any start tag's name, prefix included
_ZIP_ENCRYPTED = 0x01 | 0x40  # general purpose flags: encrypted, strongly encrypted
# An element's start tag with any namespace prefix; `[\s/>]` after the name keeps <sheets> from counting as
# a <sheet>.
_STRING_ITEM = re.compile(rb"<(?:[A-Za-z_][\w.\-]*:)?si[\s/>]")
_SHEET = re.compile(rb"<(?:[A-Za-z_][\w.\-]*:)?sheet[\s/>]")
_END_RECORD = b"PK\x05\x06"
_ZIP64_LOCATOR = b"PK\x06\x07"
_ZIP64_END_RECORD = b"PK\x06\x06"
_END_SEARCH = (1 << 16) + 22  # the end record and the longest archive comment


class WorkbookRefused(ValueError):
    """A workbook over a limit of its parts (``overrun``), or whose package cannot be read."""

    def __init__(self, problem: str, overrun: Overrun | None = None) -> None:
        super().__init__(problem)
        self.overrun = overrun


def check_workbook_parts(path: Path, limits: TableLimits) -> None:
    """Measure the package of the workbook at ``path`` against ``limits`` (see the module docstring); a
    member marked encrypted is refused too, as the readers would read its bytes as they are.

    Raises:
        WorkbookRefused: over a limit (naming its setting), encrypted, or not a readable ZIP archive.
    """
    info = path.stat()
    key = (str(path.resolve()), info.st_size, info.st_mtime_ns, limits)
    with _MEASURED_LOCK:
        if key in _MEASURED:
            return
    _measure(path, info.st_size, limits)
    with _MEASURED_LOCK:
        if len(_MEASURED) >= _MEASURED_KEPT:
            _MEASURED.clear()
        _MEASURED.add(key)


_MEASURED: set[tuple[str, int, int, TableLimits]] = set()
_MEASURED_KEPT = 256
_MEASURED_LOCK = threading.Lock()


def _measure(path: Path, size: int, limits: TableLimits) -> None:
    try:
        parts = _declared_parts(path)
        if parts is not None and parts > limits.max_parts:
            _refuse(
                f"the workbook has {parts:,} parts, more than the limit of {limits.max_parts:,}",
                WORKBOOK_MAX_PARTS_SETTING,
                limits.max_parts,
            )
        with zipfile.ZipFile(path) as archive:
            members = [member for member in archive.infolist() if not member.is_dir()]
            if len(members) > limits.max_parts:  # an end record that understates them
                _refuse(
                    f"the workbook has {len(members):,} parts, more than the limit of {limits.max_parts:,}",
                    WORKBOOK_MAX_PARTS_SETTING,
                    limits.max_parts,
                )
            for member in members:
                if member.flag_bits & _ZIP_ENCRYPTED:
                    raise WorkbookRefused(f"the member {member.filename[:100]} is encrypted")
            _Inflation(archive, size, limits).measure(members)
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, RuntimeError, NotImplementedError) as exc:
        raise WorkbookRefused(f"the package cannot be read: {exc}") from exc


def _refuse(problem: str, setting: str, limit: int) -> None:
    text = f"{problem} ({setting}); nothing was read"
    raise WorkbookRefused(text, Overrun(text, setting, limit))


@dataclass
class _Inflation:
    """The parts of one archive inflated and counted against the limits."""

    archive: zipfile.ZipFile
    size: int
    limits: TableLimits
    total: int = 0

    def measure(self, members: list[zipfile.ZipInfo]) -> None:
        for member in members:  # what the directory admits to, before anything is inflated
            self._check_part(member, member.file_size)
        self._check_total(sum(member.file_size for member in members))
        strings = sheets = 0
        for member in members:
            counted = _counted_element(member.filename)
            for chunk in self._inflate(member):
                if counted is _STRING_ITEM:
                    strings += len(_STRING_ITEM.findall(chunk))
                    self._check_count(strings, "shared strings", WORKBOOK_MAX_SHARED_STRINGS_SETTING)
                elif counted is _SHEET:
                    sheets += len(_SHEET.findall(chunk))
                    self._check_count(sheets, "sheets", WORKBOOK_MAX_SHEETS_SETTING)

    def _inflate(self, member: zipfile.ZipInfo) -> Iterator[bytes]:
        """The member's bytes in chunks that end after a whole tag, each counted before it is handed on."""
        inflated = 0
        held = b""
        with self.archive.open(member) as stream:
            while block := stream.read(_CHUNK):
                inflated += len(block)
                self.total += len(block)
                self._check_part(member, inflated)
                self._check_total(self.total)
                block = held + block
                cut = block.rfind(b"<")
                if cut < 0 or len(block) - cut > _TAG_ROOM:  # no start tag is cut off at its end
                    held = b""
                    yield block
                else:
                    held = block[cut:]
                    yield block[:cut]
        if held:
            yield held

    def _check_part(self, member: zipfile.ZipInfo, inflated: int) -> None:
        name = member.filename[:100]
        if inflated > self.limits.max_part_bytes:
            _refuse(
                f"the workbook's part {name!r} holds more than the limit of {self.limits.max_part_bytes:,} "
                "bytes",
                WORKBOOK_MAX_PART_BYTES_SETTING,
                self.limits.max_part_bytes,
            )
        self._check_ratio(
            inflated, member.compress_size, f"the workbook's part {name!r}", "its compressed size"
        )

    def _check_total(self, total: int) -> None:
        self._check_ratio(total, self.size, "the workbook", "its size")

    def _check_ratio(self, inflated: int, packed: int, what: str, size: str) -> None:
        ratio = self.limits.max_workbook_ratio
        if inflated > _RATIO_GRACE_BYTES and inflated > max(packed, 1) * ratio:
            _refuse(
                f"{what} unpacks to more than {ratio:g} times {size} of {packed:,} bytes (limit {ratio:g}:1)",
                WORKBOOK_MAX_RATIO_SETTING,
                int(ratio),
            )

    def _check_count(self, found: int, what: str, setting: str) -> None:
        limit = self.limits.value_of(setting)
        assert limit is not None
        if found > limit:
            _refuse(f"the workbook has more than {limit:,} {what}", setting, limit)


def _counted_element(name: str) -> re.Pattern[bytes] | None:
    """What is counted in the part ``name``: shared strings in a shared-strings part, sheets in a workbook
    part (by name, as every writer names them; a package naming them otherwise is bounded by its part
    sizes and ratio still)."""
    base = name.replace("\\", "/").rsplit("/", 1)[-1].lower()
    if base == "sharedstrings.xml":
        return _STRING_ITEM
    if base == "workbook.xml":
        return _SHEET
    return None


def _declared_parts(path: Path) -> int | None:
    """The number of entries the archive's end record declares (ZIP64's when there is one), read from the
    file's tail before the directory is read; None when no end record is found (the ZIP reader then says
    why)."""
    with path.open("rb") as handle:
        handle.seek(0, 2)
        size = handle.tell()
        start = max(size - _END_SEARCH, 0)
        handle.seek(start)
        tail = handle.read()
        at = tail.rfind(_END_RECORD)
        if at < 0 or at + 22 > len(tail):
            return None
        entries: int = struct.unpack_from("<H", tail, at + 10)[0]
        locator = at - 20
        if entries != 0xFFFF or locator < 0 or tail[locator : locator + 4] != _ZIP64_LOCATOR:
            return entries
        offset: int = struct.unpack_from("<Q", tail, locator + 8)[0]
        if not 0 <= offset <= size - 56:
            return entries
        handle.seek(offset)
        record = handle.read(56)
        if record[:4] != _ZIP64_END_RECORD:
            return entries
        zip64_entries: int = struct.unpack_from("<Q", record, 32)[0]
        return zip64_entries
