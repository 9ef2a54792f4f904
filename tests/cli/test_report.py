"""``postflows report``: the history's trends by month into report.xlsx, report.png and report.md, a JSON
summary on stdout; every month of the range, an empty history said plainly; usage errors exit 2; and the
README's example runs as written."""

from __future__ import annotations

import json
import re
import shlex
import zipfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from python_calamine import CalamineWorkbook
from typer.testing import CliRunner

from core.locations import history_url
from history import RemoteJob, Run
from history.db import dispose_engines, session_factory
from postflows.cli import app

README = Path(__file__).resolve().parents[2] / "README.md"
FILES = ["report.xlsx", "report.png", "report.md"]


def _record(runs: list[tuple[str, datetime, dict[str, Any] | None]], *, jobs: int = 0) -> None:
    url = history_url()
    with session_factory(url).begin() as session:
        for number, (flow, started, summary) in enumerate(runs):
            run = Run(flow=flow, state="COMPLETED", started_at=started, summary=summary)
            session.add(run)
            session.flush()
            if number < jobs:
                session.add(
                    RemoteJob(
                        run_id=run.id,
                        api="address-service",
                        kind="batch",
                        remote_id=f"b-{number}",
                        created_at=started,
                    )
                )
    dispose_engines(url)


@pytest.fixture
def recorded() -> None:
    """Address runs in January and March 2026 (one without corrected rows), a newspaper order in March."""
    batch = {"result_rows": 200, "moves": 4, "qstat": {"1": 180, "51": 20}}
    query = {"result_rows": 50, "qstat": {"51": 5, "4": 5}, "corrected_rows": 10}
    _record(
        [
            ("address-batch", datetime(2026, 1, 12, 9, tzinfo=UTC), batch),
            ("address-query", datetime(2026, 3, 2, 9, tzinfo=UTC), query),
            ("newspaper-order", datetime(2026, 3, 3, 9, tzinfo=UTC), {"order_id": 1}),
        ],
        jobs=1,
    )


def _invoke(*args: str) -> Any:
    return CliRunner().invoke(app, ["report", *args], env={"COLUMNS": "200"})


def _month_rows(text: str, heading: str) -> list[str]:
    section = text.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| (\d{4}-\d{2}) \|", section, flags=re.M)


def test_the_report_of_a_history(recorded: None, tmp_path: Path) -> None:
    result = _invoke("--since", "2026-01-01", "--until", "2026-03-31", "--out", str(tmp_path / "out"))
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["months"] == ["2026-01", "2026-02", "2026-03"]
    assert (summary["address_runs"], summary["api_runs"], summary["submissions"]) == (2, 3, 1)
    assert summary["report"] == [str((tmp_path / "out" / name).resolve()) for name in FILES]
    assert "3 months, 2026-01 to 2026-03: 2 address runs, 3 runs and 1 remote jobs per API" in result.stderr
    # The batch recorded no corrected rows: unknown, and said so.
    assert "1 address runs recorded no corrected rows" in result.stderr and "not zero" in result.stderr
    text = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert _month_rows(text, "Address quality") == ["2026-01", "2026-02", "2026-03"]
    assert "| 2026-01 | 1 | 200 | 20 | 10 | 0 | 0 | 4 | 2 | 0 |  | 1 |" in text
    assert "| 2026-03 | 1 | 50 | 5 | 10 | 5 | 10 | 0 |  | 10 | 20 | 0 |" in text
    assert "| 2026-03 | 0 | 0 | 0 |" in text.split("## Submissions per API")[1]
    sheets = CalamineWorkbook.from_path(str(tmp_path / "out" / "report.xlsx"))
    assert sheets.sheet_names == ["Address quality", "Submissions per API", "Rows per API", "About"]
    rows = sheets.get_sheet_by_name("Rows per API").to_python()
    assert rows[0] == ["Month", "address service", "newspaper", "commerce"]
    assert rows[1:] == [["2026-01", 200.0, 0.0, 0.0], ["2026-02", 0.0, 0.0, 0.0], ["2026-03", 50.0, 0.0, 0.0]]
    with zipfile.ZipFile(tmp_path / "out" / "report.xlsx") as archive:
        assert len([name for name in archive.namelist() if name.startswith("xl/charts/chart")]) == 3


def test_one_flow_narrows_the_address_figures(recorded: None, tmp_path: Path) -> None:
    result = _invoke(
        "--flow", "address-query", "--since", "2026-01-01", "--until", "2026-03-31", "--out", "o"
    )
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["address_runs"] == 1 and summary["api_runs"] == 3
    assert "Address flows: address-query" in (tmp_path / "o" / "report.md").read_text(encoding="utf-8")


def test_by_default_from_the_first_run_recorded_and_whole_months(recorded: None, tmp_path: Path) -> None:
    result = _invoke("--until", "2026-04-10", "--whole-months", "--out", "o")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["months"] == ["2026-01", "2026-02", "2026-03"]


def test_an_empty_history_says_so_and_still_writes_every_month(tmp_path: Path) -> None:
    result = _invoke("--since", "2026-01-01", "--until", "2026-03-31", "--out", "empty")
    assert result.exit_code == 0, result.output
    assert "no run recorded from 2026-01 to 2026-03 in sqlite:///" in result.stderr
    assert "every month of the report is empty" in result.stderr
    summary = json.loads(result.stdout)
    assert summary["months"] == ["2026-01", "2026-02", "2026-03"] and summary["address_runs"] == 0
    text = (tmp_path / "empty" / "report.md").read_text(encoding="utf-8")
    for heading in ("Address quality", "Submissions per API", "Rows per API"):
        assert _month_rows(text, heading) == ["2026-01", "2026-02", "2026-03"], heading
    assert all((tmp_path / "empty" / name).stat().st_size > 0 for name in FILES)


def test_an_empty_history_without_dates_reports_the_month_of_the_last_day(tmp_path: Path) -> None:
    result = _invoke("--until", "2026-05-20", "--out", "o")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["months"] == ["2026-05"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--flow", "newspaper-order"],
            "'newspaper-order' is not an address flow: choose one of address-batch",
        ),
        (
            ["--since", "2026-03-01", "--until", "2026-02-01"],
            "the last day 2026-02-01 comes before the first",
        ),
        (["--since", "March"], "expected a date as YYYY-MM-DD, got 'March'"),
        (
            ["--since", "2026-03-05", "--until", "2026-03-20", "--whole-months"],
            "the end of the last whole month",
        ),
    ],
)
def test_bad_usage_exits_2_naming_the_problem(tmp_path: Path, args: list[str], message: str) -> None:
    result = _invoke(*args, "--out", "o")
    assert result.exit_code == 2
    assert message in " ".join(result.output.split())
    assert not (tmp_path / "o" / "report.xlsx").exists()


def test_the_out_folder_is_required(tmp_path: Path) -> None:
    result = _invoke("--since", "2026-01-01")
    assert result.exit_code == 2 and "--out" in result.output


def test_a_history_that_cannot_be_read_fails_with_exit_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("POSTFLOWS_DATABASE_URL", "postgresql+psycopg://nobody@127.0.0.1:1/none")
    result = _invoke("--out", "o")
    assert result.exit_code == 1
    assert result.output.startswith("failed: ") and "127.0.0.1" in result.output


def readme_report() -> tuple[list[str], list[str]]:
    """The README's "Reports" example: its command's words and the files its table lists."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Reports") :].split("\n## ", 1)[0]
    ((block, table),) = re.findall(r"```sh\n(.*?)```\n\n((?:\|[^\n]*\n)+)", section, flags=re.S)
    (command,) = [line for line in block.splitlines() if line.startswith("postflows ")]
    files = [name for row in table.splitlines()[2:] for name in re.findall(r"`([^`]+)`", row.split("|")[1])]
    return shlex.split(command)[1:], files


def test_the_readme_example_writes_what_its_table_lists(recorded: None, tmp_path: Path) -> None:
    words, files = readme_report()
    assert words[0] == "report" and files == FILES
    result = CliRunner().invoke(app, words)
    assert result.exit_code == 0, result.output
    out = tmp_path / words[words.index("--out") + 1]
    assert sorted(path.name for path in out.iterdir()) == sorted(files)


def test_a_report_in_the_data_dir_is_its_owners_alone_whatever_the_umask(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    monkeypatch.setattr("fileio.files._private_roots", set())  # as in a fresh process: nothing registered yet
    monkeypatch.setattr("fileio.files._secured_roots", set())
    data = Path(os.environ["POSTFLOWS_DATA_DIR"])
    out = data / "reports" / "2026"
    previous = os.umask(0o022)
    try:
        result = CliRunner().invoke(
            app, ["report", "--since", "2026-01-01", "--until", "2026-01-31", "--out", str(out)]
        )
    finally:
        os.umask(previous)
    assert result.exit_code == 0, result.output
    written = [out, out.parent, *(out / name for name in FILES)]
    modes = {path.name: oct(path.stat().st_mode & 0o777) for path in written}
    assert modes == {"2026": "0o700", "reports": "0o700"} | dict.fromkeys(FILES, "0o600")
