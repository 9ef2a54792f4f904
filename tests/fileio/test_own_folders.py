"""A folder of a flow's own inside ``--out`` (``download/``) is a real directory: a symbolic link standing
there is replaced, its target untouched; every reader reads at most its limit from any path."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fileio.files import ReadTooLarge, own_folder, read_bounded


def test_a_symlinked_own_folder_is_replaced_and_its_target_left_untouched(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.mkdir()
    (target / "kept.txt").write_text("mine", encoding="utf-8")
    out = tmp_path / "out"
    out.mkdir()
    (out / "download").symlink_to(target, target_is_directory=True)

    folder = own_folder(out / "download")
    (folder / "result.bin").write_bytes(b"result")

    assert not folder.is_symlink() and folder.is_dir()
    assert sorted(path.name for path in target.iterdir()) == ["kept.txt"]
    assert (target / "kept.txt").read_text(encoding="utf-8") == "mine"


def test_an_existing_own_folder_is_kept_with_what_it_holds(tmp_path: Path) -> None:
    (tmp_path / "download").mkdir()
    (tmp_path / "download" / "result.bin").write_bytes(b"1")
    assert own_folder(tmp_path / "download") == tmp_path / "download"
    assert (tmp_path / "download" / "result.bin").read_bytes() == b"1"


def test_a_bounded_read_stops_after_its_limit_on_a_file_and_a_device(tmp_path: Path) -> None:
    path = tmp_path / "ten.bin"
    path.write_bytes(b"0123456789")
    assert read_bounded(path, 10) == b"0123456789"
    with pytest.raises(ReadTooLarge, match="more than the limit of 9 bytes; not read"):
        read_bounded(path, 9)
    with pytest.raises(ReadTooLarge):
        read_bounded(Path("/dev/zero"), 1 << 20)


def test_a_bounded_read_of_a_pipe_stops_after_its_limit(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # lets the writer open without waiting
    writer = os.open(fifo, os.O_WRONLY)
    try:
        os.write(writer, b"x" * 100)
        with pytest.raises(ReadTooLarge):
            read_bounded(fifo, 50)
    finally:
        os.close(writer)
        os.close(reader)
