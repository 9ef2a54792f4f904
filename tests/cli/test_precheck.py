"""A flow command refuses bad input, missing credentials and an unusable ``--out`` before Prefect or any flow
module is imported: one line, printed once, exit 2, nothing recorded."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from postflows.cli import app

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
runner = CliRunner()


def _refusal(result_output: str) -> str:
    """The one line of a refusal; fails unless there is exactly one."""
    lines = [
        line for line in result_output.splitlines() if line.startswith(("refused:", "configuration error:"))
    ]
    assert len(lines) == 1, result_output
    return lines[0]


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "empty.csv").write_bytes(b"")
    (tmp_path / "header-only.csv").write_text("Vorname;Nachname;Strasse;Hausnummer;PLZ;Ort\n;;;;;\n\n")
    (tmp_path / "no-address.csv").write_text("Kunde;Telefon\n1;044 000 00 00\n")
    (tmp_path / "scan.pdf").write_bytes(b"%PDF-1.7\n")
    (tmp_path / "report.csv").write_bytes(b"%PDF-1.7\n")
    (tmp_path / "a-file").write_text("not a directory\n")
    (tmp_path / "order.json").write_text('["not", "an", "order"]')
    (tmp_path / "params.yaml").write_text("- a list\n")
    return tmp_path


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["address-batch", "empty.csv"], "empty.csv: file is empty: no header row"),
        (["address-batch", "missing.csv"], "missing.csv: file not found"),
        (["address-batch", "."], "is a directory, not a file"),
        (["address-batch", "header-only.csv"], "header-only.csv: no data rows after the header"),
        (["address-batch", "no-address.csv"], "none of the address columns found"),
        (["address-batch", "scan.pdf"], "unsupported file type: extension '.pdf' (a PDF document)"),
        (["address-batch", "report.csv"], "report.csv: is not a text table: the file is a PDF document"),
        (["address-batch", str(EXAMPLES / "address-batch.csv"), "--profile", "nope"], "profile 'nope'"),
        (
            ["address-batch", str(EXAMPLES / "address-batch.csv"), "--map", "Kunde=Name"],
            "mapped column 'Kunde'",
        ),
        (["address-query", "no-address.csv"], "none of the address columns found"),
        (["address-validation", "no-address.csv"], "missing address columns: zip or city"),
        (["deliverability", "header-only.csv"], "no data rows after the header"),
        (["pickup-register", "no-address.csv"], "column firstName, lastName, zip missing"),
        (["pickup-points", "no-address.csv"], "no-address.csv: column zip missing"),
        (
            ["address-labels", "order.json"],
            "order.json: line 1, column 2: address label request 1 must be a JSON object, not a string",
        ),
        (["return-order", "empty.csv"], "empty.csv: holds no return order request"),
        (["newspaper-statistics", "no-address.csv"], "missing statistics columns: newspaperId"),
        (
            ["newspaper-statistics", str(EXAMPLES / "statistics.csv"), "--calendar", "no-address.csv"],
            "no-address.csv, row 1, field 'Kunde': '1' is not a date",
        ),
        (
            ["address-purchase", "no-address.csv", "--params", str(EXAMPLES / "purchase.json")],
            "address columns missing: need zipCode, city",
        ),
        (
            ["address-purchase", str(EXAMPLES / "purchase-addresses.csv"), "--params", "params.yaml"],
            "purchase parameters must be an object",
        ),
        (["newspaper-order", "order.json"], "order.json: line 1, column 1: the order must be a JSON object"),
        (["address-batch", str(EXAMPLES / "address-batch.csv"), "--out", "a-file"], "--out is a file"),
        (["newspaper-reports", "4711", "--out", "a-file"], "a-file: --out is a file, not a directory"),
    ],
)
def test_a_bad_input_is_refused_on_one_line(
    files: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], expected: str
) -> None:
    monkeypatch.chdir(files)
    command = [*args, "--out", "out"] if "--out" not in args and args[0] != "newspaper-statistics" else args
    result = runner.invoke(app, command)
    assert result.exit_code == 2, result.output
    line = _refusal(result.output)
    assert line.startswith("refused: ") and expected in line
    if "--out" not in args:
        assert not (files / "out").exists()  # nothing was made for a refused run
    assert not (files.parent / "data" / "history.db").exists()


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["address-batch", "far.xlsx"], "A1:XFD1048576: 16,384 columns × 1,048,576 rows"),
        (["address-query", "far.xlsx"], "(POSTFLOWS_TABLE_MAX_CELLS)"),
        (["address-batch", "wide.csv"], "the header has 1,001 columns, more than the limit of 1,000"),
        (["address-validation", "wide.csv"], "(POSTFLOWS_TABLE_MAX_COLUMNS)"),
        (["deliverability", "far.xlsx"], "(POSTFLOWS_TABLE_MAX_CELLS)"),
        (["pickup-register", "wide.csv"], "(POSTFLOWS_TABLE_MAX_COLUMNS)"),
        (["pickup-points", "far.xlsx"], "(POSTFLOWS_TABLE_MAX_CELLS)"),
        (["newspaper-statistics", "wide.csv"], "(POSTFLOWS_TABLE_MAX_COLUMNS)"),
        (["address-purchase", "far.xlsx", "--params", str(EXAMPLES / "purchase.json")], "TABLE_MAX_CELLS"),
    ],
)
def test_a_file_over_a_limit_is_refused_before_the_run_naming_the_setting(
    files: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], expected: str
) -> None:
    import openpyxl

    book = openpyxl.Workbook()
    book.active.append(["Name", "Prename", "Streetname", "HouseNo", "ZIPCode", "TownName"])
    book.active["XFD1048576"] = "x"
    book.save(files / "far.xlsx")
    (files / "wide.csv").write_text(
        ";".join(["Name", "PLZ", "Ort", *map(str, range(998))]) + "\nx;3000;Bern\n"
    )
    monkeypatch.chdir(files)
    command = [*args, "--out", "out"] if args[0] != "newspaper-statistics" else args
    result = runner.invoke(app, command)
    assert result.exit_code == 2, result.output
    line = _refusal(result.output)
    assert line.startswith("refused: ") and expected in line


def test_the_precheck_takes_its_limits_from_the_settings(
    files: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(files)
    monkeypatch.setenv("POSTFLOWS_TABLE_MAX_COLUMNS", "3")
    result = runner.invoke(app, ["address-batch", str(EXAMPLES / "address-batch.csv"), "--out", "out"])
    assert result.exit_code == 2, result.output
    assert "more than the limit of 3 columns per row (POSTFLOWS_TABLE_MAX_COLUMNS)" in _refusal(result.output)


def test_the_output_directory_is_made_before_the_run(tmp_path: Path) -> None:
    from postflows.precheck import output_dir

    output_dir(tmp_path / "a" / "b")
    assert (tmp_path / "a" / "b").is_dir()
    output_dir(tmp_path / "a" / "b")  # an existing directory is fine: a re-run writes there again


@pytest.mark.parametrize(
    ("env", "args", "missing", "not_missing"),
    [
        (
            {"POSTFLOWS_ADDRESS_SERVICE_URL": "https://addresses.example.test/REST/v1"},
            ["cleanup"],
            ["POSTFLOWS_ADDRESS_SERVICE_USER", "POSTFLOWS_ADDRESS_SERVICE_PASSWORD"],
            [],
        ),
        (
            {
                "POSTFLOWS_NEWSPAPER_URL": "https://newspaper.example.test",
                "POSTFLOWS_NEWSPAPER_CLIENT_ID": "c",
            },
            ["newspaper-order", str(EXAMPLES / "newspaper-order.json"), "--out", "out"],
            ["POSTFLOWS_NEWSPAPER_TOKEN_URL", "POSTFLOWS_NEWSPAPER_CLIENT_SECRET"],
            ["CLIENT_ID"],
        ),
        (
            # The block may hold the client credentials, never the token address.
            {
                "POSTFLOWS_NEWSPAPER_URL": "https://newspaper.example.test",
                "POSTFLOWS_CREDENTIALS_BLOCK": "prod",
            },
            ["newspaper-sync", "4711", "--out", "out"],
            ["POSTFLOWS_NEWSPAPER_TOKEN_URL"],
            ["CLIENT_ID", "CLIENT_SECRET"],
        ),
        (
            {"POSTFLOWS_COMMERCE_URL": "https://commerce.example.test"},
            ["address-validation", str(EXAMPLES / "commerce-addresses.csv"), "--out", "out"],
            [
                "POSTFLOWS_COMMERCE_AUTH_URL",
                "POSTFLOWS_COMMERCE_CLIENT_ID",
                "POSTFLOWS_COMMERCE_CLIENT_SECRET",
            ],
            [],
        ),
    ],
)
def test_a_real_endpoint_without_its_settings_is_refused(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    env: dict[str, str],
    args: list[str],
    missing: list[str],
    not_missing: list[str],
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    line = _refusal(result.output)
    assert line.startswith("configuration error: ")
    assert all(name in line for name in missing) and not any(name in line for name in not_missing)
    url = next(value for name, value in env.items() if name.endswith("_URL"))
    assert url in line
    assert not (tmp_path / "out").exists()


def test_an_http_endpoint_off_loopback_is_refused_on_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("POSTFLOWS_ADDRESS_SERVICE_URL", "http://addresses.example.test/REST/v1")
    monkeypatch.setenv("POSTFLOWS_ADDRESS_SERVICE_USER", "tech-user")
    monkeypatch.setenv("POSTFLOWS_ADDRESS_SERVICE_PASSWORD", "pw")
    result = runner.invoke(app, ["address-batch", str(EXAMPLES / "address-batch.csv"), "--out", "out"])
    assert result.exit_code == 2, result.output
    line = _refusal(result.output)
    assert line.startswith("configuration error: POSTFLOWS_ADDRESS_SERVICE_URL is http:// to addresses.")
    assert "POSTFLOWS_ALLOW_HTTP=true" in line
    assert not (tmp_path / "out").exists()


def test_an_invalid_setting_is_refused_on_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POSTFLOWS_LEASE_TTL_S", "-1")
    result = runner.invoke(app, ["newspaper-sync", "4711", "--out", "out"])
    assert result.exit_code == 2
    assert "lease_ttl_s" in _refusal(result.output)


# The refusal in a process of its own: Prefect (and every flow module) must not be imported at all; the
# flows' request models (pydantic models the commands' options are read from) are.
_PROBE = """
import json, sys
from typer.testing import CliRunner
from postflows.cli import app
result = CliRunner().invoke(app, sys.argv[1:])
requests = ("flows", "flows.forms", "flows.newspaper_forms", "flows.spec_forms", "flows.requests")
loaded = sorted(
    name
    for name in sys.modules
    if name.split(".")[0] in ("prefect", "flows")
    and name not in requests
    and not name.startswith("flows.requests.")
)
print(json.dumps({"code": result.exit_code, "output": result.output, "loaded": loaded}))
"""


def _probe(tmp_path: Path, *args: str) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("POSTFLOWS_", "PREFECT_"))}
    env.update(POSTFLOWS_DATA_DIR=str(tmp_path / "data"), PYTHONPATH=str(REPO), COLUMNS="120")
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    probed: dict[str, object] = json.loads(done.stdout.splitlines()[-1])
    return probed


@pytest.mark.parametrize(
    "args",
    [
        ["address-batch", "empty.csv", "--out", "o"],
        ["address-validation", "no-address.csv", "--out", "o"],
        ["newspaper-statistics", "empty.csv"],
        ["newspaper-order", "order.json", "--out", "o"],
        ["address-batch", str(EXAMPLES / "address-batch.csv"), "--out", "a-file"],
    ],
)
def test_a_refusal_imports_neither_prefect_nor_a_flow(files: Path, args: list[str]) -> None:
    probed = _probe(files, *args)
    assert probed["code"] == 2
    assert probed["loaded"] == [], probed["loaded"]
    output = str(probed["output"])
    assert output.count("refused: ") == 1 and len(output.strip().splitlines()) == 1, output


def test_the_console_script_refuses_without_starting_a_server(files: Path) -> None:
    """``-X importtime`` lists every module the real command imports."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("POSTFLOWS_", "PREFECT_"))}
    env.update(POSTFLOWS_DATA_DIR=str(files / "data"), PYTHONPATH=str(REPO))
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "from postflows.cli import main; main()"]
        + ["address-batch", "empty.csv", "--out", "o"],
        cwd=files,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    imported = [
        line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if "import time:" in line
    ]
    assert "postflows.precheck" in imported and not [name for name in imported if name.startswith("prefect")]
    said = [line for line in done.stderr.splitlines() if "import time:" not in line]
    assert said == ["refused: empty.csv: file is empty: no header row"]
    assert not (files / "o").exists()


def test_a_password_file_named_as_the_profile_is_refused_without_a_line_of_it(tmp_path: Path) -> None:
    shadow = tmp_path / "etc" / "shadow"
    shadow.parent.mkdir()
    shadow.write_text(
        "root:$6$Xy7hQ2Zq$secrethashCCCCCCCCCCCCCCCCCCCCCCCC:19700:0:99999:7:::\ndaemon:*:19700:0:99999:7:::\n"
    )
    work = tmp_path / "work"
    work.mkdir()
    os.chdir(work)  # restored by the suite's fixture
    result = runner.invoke(
        app, ["address-batch", str(EXAMPLES / "address-batch.csv"), "--profile", str(shadow), "--out", "out"]
    )
    assert result.exit_code == 2, result.output
    line = _refusal(result.output)
    assert line.startswith(f"refused: profile {shadow}: upload (line 1, column 1): Field required"), line
    for piece in ("$6$", "Xy7hQ2Zq", "secrethash", "daemon", "19700"):
        assert piece not in result.output


def test_a_symlinked_download_folder_in_out_is_refused_naming_it(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.mkdir()
    out = tmp_path / "out"
    out.mkdir()
    (out / "download").symlink_to(target, target_is_directory=True)
    os.chdir(tmp_path)  # restored by the suite's fixture
    result = runner.invoke(app, ["address-batch", str(EXAMPLES / "address-batch.csv"), "--out", str(out)])
    assert result.exit_code == 2, result.output
    line = _refusal(result.output)
    assert line.startswith(f"refused: {out / 'download'}: download/ in --out is a symbolic link"), line
    assert list(target.iterdir()) == []
