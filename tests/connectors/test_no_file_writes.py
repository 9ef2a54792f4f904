"""Connectors return bytes and streams and write no files: no call in ``connectors/`` creates, replaces or
removes one, and no ``open`` there is for writing."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

CONNECTORS = Path(__file__).resolve().parents[2] / "connectors"
WRITING_CALLS = {
    "fdopen",
    "mkdir",
    "mkdtemp",
    "mkstemp",
    "NamedTemporaryFile",
    "rename",
    "rmdir",
    "TemporaryDirectory",
    "unlink",
    "write_bytes",
    "write_text",
}


def _called_name(call: ast.Call) -> str | None:
    if isinstance(call.func, ast.Name):
        return call.func.id
    if isinstance(call.func, ast.Attribute):
        return call.func.attr
    return None


def _writing_open(call: ast.Call) -> bool:
    """``open(..., "w")`` and the like, whether the mode is positional or a keyword."""
    first_mode = 0 if isinstance(call.func, ast.Attribute) else 1  # Path.open(mode) / open(file, mode)
    modes = [argument for argument in call.args[first_mode : first_mode + 1]]
    modes += [keyword.value for keyword in call.keywords if keyword.arg == "mode"]
    return any(
        isinstance(mode, ast.Constant) and isinstance(mode.value, str) and set(mode.value) & set("wax+")
        for mode in modes
    )


def _writes(source: str) -> list[str]:
    """``<line> <call>`` of every call in ``source`` that writes, moves or removes a file."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        name = _called_name(node)
        is_os_replace = (
            name == "replace"
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "os"
        )
        if name in WRITING_CALLS or is_os_replace or (name == "open" and _writing_open(node)):
            found.append(f"{node.lineno} {name}")
    return found


@pytest.mark.parametrize(
    "module", sorted(CONNECTORS.rglob("*.py")), ids=lambda path: str(path.relative_to(CONNECTORS))
)
def test_connector_module_writes_no_files(module: Path) -> None:
    assert _writes(module.read_text(encoding="utf-8")) == []


def test_the_check_sees_file_writes() -> None:
    sample = (
        "import os, tempfile\n"
        "fd, name = tempfile.mkstemp()\n"
        "os.replace(name, 'x')\n"
        "open('y', 'wb')\n"
        "open('z', mode='a')\n"
        "p.open('w')\n"
        "p.open('rb')\n"
        "'abc'.replace('a', 'b')\n"
    )
    assert _writes(sample) == ["2 mkstemp", "3 replace", "4 open", "5 open", "6 open"]
