"""A download kept as received is written without this process's secrets as it streams: a plain file chunk
by chunk (a secret cut by a chunk boundary included), a ZIP rewritten with its members scrubbed only when a
member holds one, and left as it came when it cannot be read within the limits."""

from __future__ import annotations

import io
import zipfile
from collections.abc import AsyncIterator
from pathlib import Path

from core.redaction import register_secret
from fileio.archives import scrub_archive
from fileio.files import write_stream

SECRET = "hunter2-not-a-street"


async def _chunks(data: bytes, size: int) -> AsyncIterator[bytes]:
    for start in range(0, len(data), size):
        yield data[start : start + size]


def _zip(**members: bytes) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    return buffer.getvalue()


async def test_a_plain_download_is_scrubbed_as_it_streams(tmp_path: Path) -> None:
    register_secret(SECRET)
    data = b"1;Lindenstrasse;12\n" * 5000 + f"2;{SECRET};14\n".encode() + b"3;end"
    path = tmp_path / "result.bin"
    assert await write_stream(path, _chunks(data, 7)) == len(data)
    assert path.read_bytes() == data.replace(SECRET.encode(), b"[redacted]")


async def test_a_zip_download_is_rewritten_only_when_a_member_holds_a_secret(tmp_path: Path) -> None:
    register_secret(SECRET)
    clean, leaking = _zip(result=b"1;Lindenstrasse\n"), _zip(result=f"1;{SECRET}\n".encode(), moves=b"x")
    for name, data in (("clean.bin", clean), ("leaking.bin", leaking)):
        await write_stream(tmp_path / name, _chunks(data, 5))
        assert (tmp_path / name).read_bytes() == data  # a ZIP is written as it came
    assert not scrub_archive(tmp_path / "clean.bin", max_bytes=1 << 20, max_ratio=100)
    assert (tmp_path / "clean.bin").read_bytes() == clean
    assert scrub_archive(tmp_path / "leaking.bin", max_bytes=1 << 20, max_ratio=100)
    with zipfile.ZipFile(tmp_path / "leaking.bin") as archive:
        assert archive.read("result") == b"1;[redacted]\n" and archive.read("moves") == b"x"


def test_a_zip_over_the_limits_is_left_as_it_came(tmp_path: Path) -> None:
    register_secret(SECRET)
    data = _zip(result=f"1;{SECRET}\n".encode() * 100)
    path = tmp_path / "result.bin"
    path.write_bytes(data)
    assert not scrub_archive(path, max_bytes=100, max_ratio=100)
    assert path.read_bytes() == data and not list(tmp_path.glob(".*"))
