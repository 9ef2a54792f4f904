"""The structure files flow against the sandbox: files written, recorded as new only when their content
changed, the notice e-mail registered and checked before any request.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
from sqlalchemy import select

import history
from connectors.newspaper import OrderInvalid
from flows.structure_files import structure_files
from history.models import Document, Run
from tasks.newspaper.structure_files import NoticeEmailRefused
from tasks.submission import SubmissionUncertain
from tests.flows.calls import call
from tests.flows.conftest import Sandbox


def recorded(data_dir: Path) -> list[Document]:
    factory = history.session_factory(f"sqlite:///{data_dir / 'history.db'}")
    with factory() as session:
        return list(session.scalars(select(Document).where(Document.kind == "structure-file")))


async def test_new_only_when_content_changes(sandbox: Sandbox, flow_env: Path, tmp_path: Path) -> None:
    first = await call(structure_files, 9, tmp_path / "first")
    assert [(f.name, f.new) for f in first.structure_files] == [
        ("AZ_GZA_v1.zip", True),
        ("AZA_AZB_v1.zip", True),
    ]
    with zipfile.ZipFile(tmp_path / "first" / "AZ_GZA_v1.zip") as archive:
        assert archive.namelist() == ["AZ_GZA.csv"]
    assert len(recorded(flow_env)) == 2

    second = await call(structure_files, 1, tmp_path / "second")
    assert second.new_files == 0
    assert len(recorded(flow_env)) == 2
    # Written all the same, so listed with the run's files.
    assert {Path(name).name for name in second.files} == {
        "AZ_GZA_v1.zip",
        "structure-files.csv",
        "summary.md",
    }
    assert "unchanged" in (tmp_path / "second" / "summary.md").read_text()

    sandbox.config.structure_file_version = 2
    third = await call(structure_files, 2, tmp_path / "third")
    assert [(f.name, f.new) for f in third.structure_files] == [("AZA_AZB_v2.zip", True)]
    assert len(recorded(flow_env)) == 3


async def test_notice_email_registered(sandbox: Sandbox, flow_env: Path, tmp_path: Path) -> None:
    summary = await call(structure_files, 1, tmp_path / "out", notify_email="vertrieb@seetaler-bote.ch")
    assert summary.confirmation == "E-mail address registered"
    assert sandbox.transport.count("/structurefiles/email") == 1

    # Registered once: a later run with the same address does not send it again; another address is sent.
    again = await call(structure_files, 1, tmp_path / "out", notify_email="vertrieb@seetaler-bote.ch")
    assert again.confirmation == "E-mail address registered"
    assert sandbox.transport.count("/structurefiles/email") == 1
    await call(structure_files, 1, tmp_path / "out", notify_email="druck@seetaler-bote.ch")
    assert sandbox.transport.count("/structurefiles/email") == 2


async def test_lost_email_answer_refuses_until_resubmit(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    sandbox.inject(api="newspaper", endpoint="*structurefiles/email", method="POST", kind="drop")
    with pytest.raises(Exception, match="RemoteProtocolError|connection"):
        await call(structure_files, 1, tmp_path / "out", notify_email="vertrieb@seetaler-bote.ch")
    with pytest.raises(SubmissionUncertain, match="--resubmit"):
        await call(structure_files, 1, tmp_path / "out", notify_email="vertrieb@seetaler-bote.ch")
    assert sandbox.transport.count("/structurefiles/email") == 1
    await call(structure_files, 1, tmp_path / "out", notify_email="vertrieb@seetaler-bote.ch", resubmit=True)
    assert sandbox.transport.count("/structurefiles/email") == 2


async def test_an_address_registered_with_one_file_code_is_not_sent_again_with_another(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    """Each file code is its own work, the notice address is one: registered once, whatever the code."""
    first = await call(structure_files, 9, tmp_path / "nine", notify_email="vertrieb@seetaler-bote.ch")
    other_code = await call(structure_files, 1, tmp_path / "one", notify_email="vertrieb@seetaler-bote.ch")
    assert first.confirmation == other_code.confirmation == "E-mail address registered"
    assert other_code.reused["notice e-mail registration"][0].startswith("vertrieb@seetaler-bote.ch, ")
    assert sandbox.transport.count("/structurefiles/email") == 1


async def test_a_field_the_service_does_not_read_names_its_setting(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """newspaper.structure-file-email-body: a refusal without a §7 code names the field's setting; the
    registration is uncertain, so the right field is sent with --resubmit."""
    monkeypatch.setenv("POSTFLOWS_NEWSPAPER_STRUCTURE_FILE_EMAIL_FIELD", "mail")
    with pytest.raises(NoticeEmailRefused, match="POSTFLOWS_NEWSPAPER_STRUCTURE_FILE_EMAIL_FIELD") as refused:
        await call(structure_files, 1, tmp_path / "out", notify_email="vertrieb@seetaler-bote.ch")
    assert "the field 'mail' of its body is a guess" in str(refused.value) and refused.value.outcome_unknown
    monkeypatch.delenv("POSTFLOWS_NEWSPAPER_STRUCTURE_FILE_EMAIL_FIELD")
    with pytest.raises(SubmissionUncertain, match="--resubmit"):
        await call(structure_files, 1, tmp_path / "out", notify_email="vertrieb@seetaler-bote.ch")
    summary = await call(
        structure_files, 1, tmp_path / "out", notify_email="vertrieb@seetaler-bote.ch", resubmit=True
    )
    assert summary.confirmation == "E-mail address registered"
    assert sandbox.transport.count("/structurefiles/email") == 2


async def test_bad_email_fails_before_any_request(sandbox: Sandbox, flow_env: Path, tmp_path: Path) -> None:
    with pytest.raises(OrderInvalid, match="email"):
        await call(structure_files, 1, tmp_path / "out", notify_email="no-at-sign")
    assert sum(sandbox.transport.calls.values()) == 0


async def test_unknown_file_code_is_refused(sandbox: Sandbox, flow_env: Path, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="3"):
        await call(structure_files, 3, tmp_path / "out")
    assert sum(sandbox.transport.calls.values()) == 0


async def test_the_weekly_run_writes_into_the_data_dir(sandbox: Sandbox, flow_env: Path) -> None:
    summary = await call(structure_files, 9)
    assert summary.new_files == 2
    # Without an address, the summary says so with nulls, in the history as printed.
    printed = summary.summary()
    assert printed["notice_email"] is None and printed["confirmation"] is None
    factory = history.session_factory(f"sqlite:///{flow_env / 'history.db'}")
    with factory() as session:
        [run] = session.scalars(select(Run).where(Run.flow == "structure-files"))
    assert run.summary is not None and run.summary["files"] == printed["files"]
    assert run.summary["notice_email"] is None and run.summary["confirmation"] is None
    assert (flow_env / "structure-files" / "9" / "AZ_GZA_v1.zip").is_file()
    assert (flow_env / "structure-files" / "9" / "structure-files.csv").is_file()
