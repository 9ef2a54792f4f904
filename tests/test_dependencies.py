"""Every third-party package the code imports is declared in pyproject.toml, and every declared one is
imported somewhere (or named below with why it is not): imports are read with ``ast`` from every module,
those inside functions too, and mapped to their distributions by ``importlib.metadata``."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from collections.abc import Iterator
from functools import cache
from importlib.metadata import packages_distributions
from pathlib import Path
from typing import Any

from tests.packages import PACKAGES

ROOT = Path(__file__).resolve().parents[1]
WALKED = (*PACKAGES, "bench", "scripts", "tests")
OURS = frozenset({*PACKAGES, "bench", "tests"})

# Declared, never imported: what loads them otherwise.
NOT_IMPORTED = {
    "psycopg": "the run history's PostgreSQL driver, which SQLAlchemy loads for a postgresql+psycopg URL",
    "pytest-timeout": "a pytest plugin: the timeout of [tool.pytest.ini_options]",
    "pytest-xdist": "a pytest plugin: `make test-fast` spreads the tests over processes (-n)",
    "ruff": "a command of `make check` and `make fmt`",
    "mypy": "a command of `make check`",
    "pandas-stubs": "types mypy reads",
    "types-pyyaml": "types mypy reads",
    "types-psutil": "types mypy reads",
    "import-linter": "a command of `make check` (lint-imports)",
    "pylint": "a command of `make check` (code said twice)",
    "mkdocs": "a command of `make docs`",
    "mkdocs-material": "the theme mkdocs.yml names",
    "tzdata": "a data package: fileio/countries.py reads its iso3166.tab through importlib.resources",
}


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


# The distributions built from this repository: an extra that requires one declares its dependencies.
OWN_DISTRIBUTIONS = {"postflows-sandbox": ROOT / "sandbox" / "pyproject.toml"}


@cache
def declared() -> dict[str, str]:
    """Every declared distribution (normalised name) and where: the dependencies or an extra's name (the
    sandbox extra's are those of the postflows-sandbox distribution it requires)."""
    project = _project(ROOT / "pyproject.toml")
    groups = {"dependencies": project["dependencies"], **project["optional-dependencies"]}
    found: dict[str, str] = {}
    for group, requirements in groups.items():
        for requirement in requirements:
            name = _normal(_name(requirement))
            own = OWN_DISTRIBUTIONS.get(name)
            for item in _project(own)["dependencies"] if own else [requirement]:
                found.setdefault(_normal(_name(item)), group)  # the core's dependencies come first
    return found


def _project(path: Path) -> dict[str, Any]:
    project: dict[str, Any] = tomllib.loads(path.read_text(encoding="utf-8"))["project"]
    return project


def _name(requirement: str) -> str:
    name = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement)
    assert name is not None, requirement
    return name.group()


def _imported_names(path: Path) -> Iterator[str]:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module


@cache
def imported() -> dict[str, frozenset[str]]:
    """Every third-party top-level module imported, with the files that import it."""
    found: dict[str, set[str]] = {}
    for folder in WALKED:
        for path in sorted((ROOT / folder).rglob("*.py")):
            for name in _imported_names(path):
                top = name.partition(".")[0]
                if top not in OURS and top not in sys.stdlib_module_names:
                    found.setdefault(top, set()).add(str(path.relative_to(ROOT)))
    return {top: frozenset(paths) for top, paths in found.items()}


@cache
def distributions_of(module: str) -> frozenset[str]:
    """The distributions that install ``module``; one not installed is named by the module."""
    return frozenset(_normal(name) for name in _installed().get(module, [module]))


@cache
def _installed() -> dict[str, list[str]]:
    return dict(packages_distributions())


def test_every_imported_package_is_declared() -> None:
    undeclared = {
        module: sorted(paths)[:3]
        for module, paths in imported().items()
        if not distributions_of(module) & declared().keys()
    }
    assert not undeclared, f"imported, not declared in pyproject.toml: {undeclared}"


def test_the_packages_import_only_what_pip_install_postflows_installs() -> None:
    """The packages a user installs import only the dependencies (and the extra xlsx-writers, whose
    imports the bench alone makes); the dev extra serves the tests and the tools."""
    misplaced = {
        module: sorted(path for path in paths if path.partition("/")[0] in PACKAGES)
        for module, paths in imported().items()
        if any(declared().get(name) == "dev" for name in distributions_of(module))
    }
    assert not {module: paths for module, paths in misplaced.items() if paths}


def test_every_declared_package_is_imported_or_says_why_not() -> None:
    used = {name for module in imported() for name in distributions_of(module)}
    unused = sorted(set(declared()) - used - NOT_IMPORTED.keys())
    assert not unused, f"declared, imported nowhere: {unused}"
    assert not sorted(NOT_IMPORTED.keys() & used), "imported after all: drop it from NOT_IMPORTED"
    assert NOT_IMPORTED.keys() <= declared().keys()


def test_only_the_sandbox_and_its_command_import_what_the_sandbox_extra_adds() -> None:
    """``pip install postflows`` runs everything but the sandbox: what only the extra installs (the
    sandbox's ASGI stack, the server of ``postflows sandbox``) is imported by the sandbox and that command."""
    allowed = ("sandbox/", "postflows/cli_sandbox.py")
    misplaced = {
        module: sorted(
            path for path in paths if path.partition("/")[0] in PACKAGES and not path.startswith(allowed)
        )
        for module, paths in imported().items()
        if any(declared().get(name) == "sandbox" for name in distributions_of(module))
    }
    assert {"starlette", "uvicorn"} <= misplaced.keys()
    assert not {module: paths for module, paths in misplaced.items() if paths}
