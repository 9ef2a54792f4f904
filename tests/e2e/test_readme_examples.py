"""The README's examples, as a user copies them: each ``postflows`` command of its "One example per API"
section runs on the embedded sandbox in its own process and writes every file the README's table after it
lists (those the table says come only "when" something happened may be missing)."""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

import pytest

from tests.e2e.conftest import POSTFLOWS, PrefectServer, json_block, sandbox_cli_environment

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]

ROOT = Path(__file__).resolve().parents[2]
SECTION = "## One example per API"


def readme_examples() -> list[tuple[list[str], list[str]]]:
    """Each example's command words and the files its table names as always written."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index(SECTION) :].split("\n## ", 1)[0]
    examples = []
    for block, table in re.findall(r"```sh\n(.*?)```\n\n((?:\|[^\n]*\n)+)", section, flags=re.S):
        (command,) = [line for line in block.splitlines() if line.startswith("postflows ")]
        files = [
            name
            for row in table.splitlines()[2:]
            if " when " not in row.split("|")[2]
            for name in re.findall(r"`([^`]+)`", row.split("|")[1])
        ]
        examples.append((shlex.split(command)[1:], files))
    return examples


EXAMPLES = readme_examples()


def test_the_readme_has_an_example_per_api() -> None:
    assert [words[0] for words, _ in EXAMPLES] == [
        "address-batch",
        "newspaper-order",
        "address-validation",
        "deliverability",
        "pickup-points",
        "address-labels",
        "return-order",
    ]
    assert all(files for _, files in EXAMPLES)


@pytest.mark.parametrize(
    ("words", "files"), EXAMPLES, ids=[f"{words[0]}-{index}" for index, (words, _) in enumerate(EXAMPLES)]
)
def test_a_readme_example_runs_as_written_and_writes_what_its_table_lists(
    tmp_path: Path, prefect_server: PrefectServer, words: list[str], files: list[str]
) -> None:
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    env = sandbox_cli_environment(tmp_path, prefect_server.api_url, job_seconds="1")
    ran = subprocess.run(
        [POSTFLOWS, *words], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=480
    )
    assert ran.returncode == 0, ran.stderr
    assert "embedded sandbox" in ran.stderr
    assert json_block(ran.stdout)["resumed"] is False
    out = tmp_path / words[words.index("--out") + 1]
    missing = [name for name in files if not (out / name.rstrip("/")).exists()]
    assert not missing, f"{' '.join(words)} wrote {sorted(path.name for path in out.iterdir())}"


LOOK_UPS = "## Commerce look-ups"


def readme_look_ups() -> list[tuple[list[list[str]], list[str]]]:
    """Each look-up example's commands (run in order) and the lines of the output shown after it (of the
    last command)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index(LOOK_UPS) :].split("\n## ", 1)[0]
    return [
        (
            [shlex.split(line)[1:] for line in block.splitlines() if line.startswith("postflows ")],
            [line.strip() for line in shown.splitlines() if line.strip()],
        )
        for block, shown in re.findall(r"```sh\n(.*?)```\n\n```text\n(.*?)```", section, flags=re.S)
    ]


def test_the_commerce_look_ups_print_what_the_readme_shows(
    tmp_path: Path, prefect_server: PrefectServer
) -> None:
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    env = sandbox_cli_environment(tmp_path, prefect_server.api_url, job_seconds="1")
    examples = readme_look_ups()
    assert [commands[-1][:2] for commands, _ in examples] == [
        ["commerce", "product"],
        ["commerce", "same-day"],
    ]
    for commands, shown in examples:
        for words in commands:
            ran = subprocess.run(
                [POSTFLOWS, *words], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=480
            )
            assert ran.returncode == 0, ran.stderr
        printed = [line.strip() for line in ran.stdout.splitlines() if line.strip()]
        assert printed == shown, ran.stdout
    assert {path.name for path in (tmp_path / "out" / "same-day").iterdir()} == {
        "acceptance-points.csv",
        "acceptance-points.xlsx",
        "summary.md",
    }
