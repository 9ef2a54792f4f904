"""Where the sandbox is not installed (``pip install postflows`` without the ``sandbox`` extra), a command
that needs it refuses with one line naming ``postflows[sandbox]``, exit 2, before anything runs. Checked in
processes of their own whose entry points and import path lack the sandbox."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "address-batch.csv"

# The console script's own code, in a process where the postflows-sandbox distribution is not installed:
# its entry point is not listed and its package cannot be imported (not even from the source tree).
_HIDDEN = """
import importlib.abc, importlib.metadata, json, sys

class NoSandbox(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.partition(".")[0] == "sandbox":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, NoSandbox())
listed = importlib.metadata.entry_points

def entry_points(**selection):
    return importlib.metadata.EntryPoints(
        point for point in listed(**selection) if point.group != "postflows.sandbox"
    )

importlib.metadata.entry_points = entry_points
from postflows.cli import main
code = 0
try:
    main()
except SystemExit as exit:
    code = exit.code
print("\\nPROBE " + json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


def _run_without_sandbox(tmp_path: Path, *args: str) -> tuple[int, list[str], str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("POSTFLOWS_", "PREFECT_"))}
    env.update(POSTFLOWS_DATA_DIR=str(tmp_path / "data"), PYTHONPATH=str(REPO), COLUMNS="300")
    done = subprocess.run(
        [sys.executable, "-c", _HIDDEN, *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=90,
    )
    output, _, probe = done.stdout.rpartition("\nPROBE ")
    assert probe, done.stderr
    probed = json.loads(probe)
    lines = [line for line in (output + done.stderr).splitlines() if line.strip()]
    return probed["code"], lines, "\n".join(probed["modules"])


@pytest.mark.parametrize(
    ("args", "needed_by"),
    [
        (["sandbox", "--port", "0"], "postflows sandbox needs the embedded sandbox"),
        (["demo", "--out", "demo"], "postflows demo needs the embedded sandbox"),
        (
            ["address-batch", str(EXAMPLE), "--out", "out"],
            "POSTFLOWS_ADDRESS_SERVICE_URL is not set, and the embedded sandbox that would serve the "
            "address service is not installed",
        ),
    ],
    ids=["sandbox", "demo", "a run with the URL unset"],
)
def test_a_command_that_needs_the_missing_sandbox_refuses_in_one_line(
    tmp_path: Path, args: list[str], needed_by: str
) -> None:
    code, lines, modules = _run_without_sandbox(tmp_path, *args)
    assert code == 2
    assert len(lines) == 1, lines
    assert lines[0].startswith("configuration error: ") and needed_by in lines[0]
    assert "pip install 'postflows[sandbox]'" in lines[0]
    assert "\nsandbox" not in f"\n{modules}" and "\nprefect\n" not in f"\n{modules}\n"
