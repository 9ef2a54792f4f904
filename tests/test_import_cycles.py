"""The import graph of the project's packages: no module cycle, counting the imports made inside functions
(only the imports a type checker alone reads are left out), and the layer contracts hold with at most
:data:`MAX_IGNORED_IMPORTS` arrows excused."""

from __future__ import annotations

import tomllib
from pathlib import Path

import grimp

from tests.packages import PACKAGES

ROOT = Path(__file__).resolve().parents[1]
MAX_IGNORED_IMPORTS = 2


def cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Every set of modules that import each other, directly or around a loop (Tarjan's components of more
    than one module, and a module importing itself)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for imported in graph.find_modules_directly_imported_by(module):
            if imported not in graph.modules:
                continue
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == module:
                    break
            if len(component) > 1 or module in graph.find_modules_directly_imported_by(module):
                found.append(sorted(component))

    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    return found


def test_no_module_imports_itself_around_a_loop() -> None:
    graph = grimp.build_graph(*PACKAGES, exclude_type_checking_imports=True)
    assert cycles(graph) == []


def test_the_check_finds_a_loop_made_inside_a_function() -> None:
    graph = grimp.ImportGraph()
    for module in ("pkg", "pkg.a", "pkg.b", "pkg.c"):
        graph.add_module(module)
    graph.add_import(importer="pkg.a", imported="pkg.b", line_number=3, line_contents="from pkg import b")
    graph.add_import(
        importer="pkg.b", imported="pkg.a", line_number=40, line_contents="    from pkg import a"
    )
    graph.add_import(importer="pkg.c", imported="pkg.a", line_number=1, line_contents="from pkg import a")
    assert cycles(graph) == [["pkg.a", "pkg.b"]]


def test_the_contracts_excuse_at_most_two_arrows() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    ignored = [arrow for contract in contracts for arrow in contract.get("ignore_imports", [])]
    assert len(ignored) <= MAX_IGNORED_IMPORTS, ignored


def test_the_flows_import_nothing_of_the_cli_package() -> None:
    graph = grimp.build_graph("flows", "postflows", exclude_type_checking_imports=False)
    arrows = graph.find_matching_direct_imports(import_expression="flows.** -> postflows.**")
    assert arrows == []
