"""The shape of the packages' code: no module over :data:`MAX_MODULE_LINES` lines (but the models and the
migrations) and no function over :data:`MAX_FUNCTION_LINES` lines (its decorators left out, its docstring
counted), so that a module holds one concern and a function reads at a glance.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.packages import PACKAGES

ROOT = Path(__file__).resolve().parents[1]
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 80
# Modules exempt from the module size: models mirror a spec's schema, migrations are generated.
EXEMPT_MODULE_NAMES = frozenset({"models.py"})
EXEMPT_DIRECTORIES = frozenset({"migrations"})


def _modules() -> list[Path]:
    return sorted(
        path
        for package in PACKAGES
        for path in (ROOT / package).rglob("*.py")
        if not EXEMPT_DIRECTORIES.intersection(path.relative_to(ROOT).parts)
    )


def _functions(tree: ast.AST, prefix: str = "") -> list[tuple[str, int]]:
    """(qualified name, lines from ``def`` to its end) of every function, nested ones and methods included."""
    found: list[tuple[str, int]] = []
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            name = f"{prefix}{node.name}"
            assert node.end_lineno is not None
            found.append((name, node.end_lineno - node.lineno + 1))
            found += _functions(node, f"{name}.")
        elif isinstance(node, ast.ClassDef):
            found += _functions(node, f"{prefix}{node.name}.")
        else:
            found += _functions(node, prefix)
    return found


def offenders() -> dict[str, str]:
    """Every module over the line limit (``path``) and every function over its limit
    (``path::qualified.name``), with what is wrong."""
    found: dict[str, str] = {}
    for path in _modules():
        relative = path.relative_to(ROOT).as_posix()
        text = path.read_text(encoding="utf-8")
        lines = len(text.splitlines())
        if lines > MAX_MODULE_LINES and path.name not in EXEMPT_MODULE_NAMES:
            found[relative] = f"{lines} lines (at most {MAX_MODULE_LINES})"
        for name, length in _functions(ast.parse(text, filename=relative)):
            if length > MAX_FUNCTION_LINES:
                found[f"{relative}::{name}"] = f"{length} lines (at most {MAX_FUNCTION_LINES})"
    return found


def test_modules_and_functions_are_small() -> None:
    found = offenders()
    assert not found, "split these by concern:\n" + "\n".join(
        f"{name}: {problem}" for name, problem in found.items()
    )


def test_the_check_finds_a_long_function_and_counts_its_docstring_not_its_decorators() -> None:
    body = "\n".join(f"    x{n} = {n}" for n in range(76))
    source = f'@decorator\n@another\ndef long():\n    """Doc\n\n    string."""\n{body}\n'
    assert _functions(ast.parse(source)) == [("long", 80)]
    nested = "class Outer:\n    def method(self):\n        def inner():\n            pass\n"
    assert [name for name, _ in _functions(ast.parse(nested))] == ["Outer.method", "Outer.method.inner"]


def test_the_packages_walked_are_the_makefiles() -> None:
    line = next(
        line for line in (ROOT / "Makefile").read_text().splitlines() if line.startswith("PACKAGES :=")
    )
    assert tuple(line.partition(":=")[2].split()) == PACKAGES
