"""The shape of the packages' code: no module over :data:`MAX_MODULE_LINES` lines (but the models and the
migrations), no function over :data:`MAX_FUNCTION_LINES` lines (its decorators left out, its docstring
counted) and none taking more than :data:`MAX_PARAMETERS` parameters (``self`` and ``cls`` not counted), so
that a module holds one concern, a function reads at a glance and what travels together is one value.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.packages import PACKAGES

ROOT = Path(__file__).resolve().parents[1]
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60
MAX_PARAMETERS = 7
# Modules exempt from the module size: models mirror a spec's schema, migrations are generated.
EXEMPT_MODULE_SUFFIX = "models.py"
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
    return [(name, length) for name, length, _ in _measured(tree, prefix)]


def _parameters(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """How many parameters ``node`` takes: ``*args`` and ``**kwargs`` count one each, a method's ``self``
    (or a class method's ``cls``) none."""
    arguments = node.args
    positional = [*arguments.posonlyargs, *arguments.args]
    count = len(positional) + len(arguments.kwonlyargs) + (arguments.vararg is not None)
    count += arguments.kwarg is not None
    return count - bool(positional and positional[0].arg in {"self", "cls"})


def _measured(tree: ast.AST, prefix: str = "") -> list[tuple[str, int, int]]:
    """(qualified name, lines, parameters) of every function, nested ones and methods included."""
    found: list[tuple[str, int, int]] = []
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            name = f"{prefix}{node.name}"
            assert node.end_lineno is not None
            found.append((name, node.end_lineno - node.lineno + 1, _parameters(node)))
            found += _measured(node, f"{name}.")
        elif isinstance(node, ast.ClassDef):
            found += _measured(node, f"{prefix}{node.name}.")
        else:
            found += _measured(node, prefix)
    return found


def offenders() -> dict[str, str]:
    """Every module over the line limit (``path``) and every function over its limit
    (``path::qualified.name``), with what is wrong."""
    found: dict[str, str] = {}
    for path in _modules():
        relative = path.relative_to(ROOT).as_posix()
        text = path.read_text(encoding="utf-8")
        lines = len(text.splitlines())
        if lines > MAX_MODULE_LINES and not path.name.endswith(EXEMPT_MODULE_SUFFIX):
            found[relative] = f"{lines} lines (at most {MAX_MODULE_LINES})"
        for name, length, parameters in _measured(ast.parse(text, filename=relative)):
            problems = []
            if length > MAX_FUNCTION_LINES:
                problems.append(f"{length} lines (at most {MAX_FUNCTION_LINES})")
            if parameters > MAX_PARAMETERS:
                problems.append(f"{parameters} parameters (at most {MAX_PARAMETERS})")
            if problems:
                found[f"{relative}::{name}"] = ", ".join(problems)
    return found


def test_modules_and_functions_are_small() -> None:
    found = offenders()
    assert not found, "split these by concern:\n" + "\n".join(
        f"{name}: {problem}" for name, problem in found.items()
    )


def test_the_check_finds_a_long_function_and_counts_its_docstring_not_its_decorators() -> None:
    body = "\n".join(f"    x{n} = {n}" for n in range(56))
    source = f'@decorator\n@another\ndef long():\n    """Doc\n\n    string."""\n{body}\n'
    assert _functions(ast.parse(source)) == [("long", 60)]
    nested = "class Outer:\n    def method(self):\n        def inner():\n            pass\n"
    assert [name for name, _ in _functions(ast.parse(nested))] == ["Outer.method", "Outer.method.inner"]


def test_the_check_counts_parameters_but_self() -> None:
    source = (
        "def free(a, b, /, c, *args, d, **kwargs): pass\n"
        "class Holder:\n"
        "    def method(self, a, b): pass\n"
        "    @classmethod\n"
        "    def make(cls, a): pass\n"
    )
    assert [(name, count) for name, _, count in _measured(ast.parse(source))] == [
        ("free", 6),
        ("Holder.method", 2),
        ("Holder.make", 1),
    ]


def test_the_packages_walked_are_the_makefiles() -> None:
    line = next(
        line for line in (ROOT / "Makefile").read_text().splitlines() if line.startswith("PACKAGES :=")
    )
    assert tuple(line.partition(":=")[2].split()) == PACKAGES
