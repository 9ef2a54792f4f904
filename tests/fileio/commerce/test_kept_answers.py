"""An answer kept as received is on disk once: the output directory's file is the kept file (one inode), or,
where no link can be made, the output directory's file with a record of it in the data dir; either way a
resumed run reads it back only as it was kept, and never more than an answer may be long."""

from __future__ import annotations

import errno
import hashlib
import json
import os
from pathlib import Path

import pytest

from connectors.commerce import ReceivedAnswer
from fileio.commerce.kept_answers import KeptAnswers

KEY = "address-label:0a1b"
ANSWER = ReceivedAnswer(b'{"item": {"label": "JVBERi0="}}', "application/json")


def test_the_output_file_is_the_kept_file(tmp_path: Path) -> None:
    kept = KeptAnswers(tmp_path / "data" / "answers")
    record, answer = kept.keep(KEY, ANSWER)
    target = kept.place(KEY, answer, tmp_path / "out" / "label-1.json")
    assert os.path.samefile(target, kept.path(KEY))
    assert target.stat().st_nlink == 2 and target.read_bytes() == ANSWER.content
    assert kept.place(KEY, answer, target) == target and target.stat().st_nlink == 2  # placed again
    # A later run writing the output file anew leaves the kept answer as it was.
    target.unlink()
    target.write_bytes(b"another run's label")
    assert kept.load(KEY, record) == ANSWER


def test_without_a_link_the_data_dir_keeps_a_record_not_a_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def other_filesystem(source: object, target: object) -> None:
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    monkeypatch.setattr(os, "link", other_filesystem)
    kept = KeptAnswers(tmp_path / "data" / "answers")
    record, answer = kept.keep(KEY, ANSWER)
    target = kept.place(KEY, answer, tmp_path / "out" / "label-1.json")
    assert target.read_bytes() == ANSWER.content and target.stat().st_nlink == 1
    assert not kept.path(KEY).exists()
    assert [path.name for path in kept.root.iterdir()] == [kept.record_path(KEY).name]
    written = json.loads(kept.record_path(KEY).read_bytes())
    sha256 = hashlib.sha256(ANSWER.content).hexdigest()
    assert written == {"path": str(target.resolve()), "sha256": sha256} and record.sha256 == sha256
    assert kept.load(KEY, record) == ANSWER  # a resumed run reads it where the record says
    target.write_bytes(b"changed")
    assert kept.load(KEY, record) is None and kept.load(KEY, None) is None
    target.unlink()
    assert kept.load(KEY, record) is None


def test_a_kept_answer_longer_than_an_answer_is_not_read_back(tmp_path: Path) -> None:
    kept = KeptAnswers(tmp_path / "answers", max_bytes=16)
    record, _ = kept.keep(KEY, ANSWER)
    assert kept.load(KEY, record) is None
    assert KeptAnswers(tmp_path / "answers").load(KEY, record) == ANSWER
