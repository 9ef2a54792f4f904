"""What a worker loads before a flow run's first step: importing any flow module of the deployment catalog, in
a process of its own, loads no data library (pandas, numpy, pyarrow, openpyxl, matplotlib load where they are
used), no module of the sandbox, none of another API's connectors, files or tasks, none of the writers
of a run's later steps (results, write-back, review), which load when a run comes to them, no reader of a
workbook, which loads when a run reads one, and no OAuth library, which loads with the first token
request; only the flows that take an order or a purchase filled in build the forms of the spec's bodies."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from deployments.catalog import API_POOLS, CATALOG

REPO = Path(__file__).resolve().parents[2]
DATA_LIBRARIES = ("pandas", "numpy", "pyarrow", "openpyxl", "matplotlib")
PACKAGES = {"address-service": "address_service", "newspaper": "newspaper", "commerce": "commerce"}
# The address service's field names are the vocabulary every API's input rows are read in (fileio.headers).
SHARED = ("connectors.address_service", "connectors.address_service.codes")
LATER_STEPS = (
    "fileio.writeback.write",
    "fileio.address_service.results",
    "fileio.address_service.review",
    "fileio.address_service.result_file",
    "email_validator",
)
FORMS = "flows.newspaper_forms"
FORM_FLOWS = {"flows.newspaper_order", "flows.address_purchase"}
LOADED_WHEN_USED = ("python_calamine", "fileio.worksheets", "fileio.workbook_parts", "authlib", "joserfc")
_PROBE = "import json, sys; __import__(sys.argv[1]); print(json.dumps(sorted(sys.modules)))"


def _loaded(module: str, tmp_path: Path) -> list[str]:
    """The modules a fresh interpreter holds after importing ``module``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("POSTFLOWS_", "PREFECT_"))}
    env.update(
        PYTHONPATH=str(REPO),
        POSTFLOWS_DATA_DIR=str(tmp_path / "data"),
        PREFECT_HOME=str(tmp_path / "prefect"),
        PREFECT_SERVER_ANALYTICS_ENABLED="false",
    )
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, module],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    loaded: list[str] = json.loads(done.stdout.strip().splitlines()[-1])
    return loaded


def _unwanted(modules: list[str], api: str | None) -> list[str]:
    """The data libraries, the sandbox, the other APIs' packages, the later steps' writers, the workbook
    readers and the OAuth libraries among ``modules``."""
    others = [PACKAGES[name] for name in API_POOLS if name != api] if api is not None else []
    foreign = tuple(f"{layer}.{package}" for layer in ("connectors", "fileio", "tasks") for package in others)
    return [
        module
        for module in modules
        if module.split(".")[0] in (*DATA_LIBRARIES, "sandbox")
        or module in LATER_STEPS
        or any(module == name or module.startswith(f"{name}.") for name in LOADED_WHEN_USED)
        or (module not in SHARED and any(module == name or module.startswith(f"{name}.") for name in foreign))
    ]


def test_a_flow_module_loads_no_data_library_no_sandbox_no_other_api_and_no_later_step(
    tmp_path: Path,
) -> None:
    apis = {spec.flow.partition(":")[0]: spec.api for spec in CATALOG}
    assert len(apis) >= 20 and "flows.address_batch" in apis and "flows.pickup_points" in apis

    with ThreadPoolExecutor(max_workers=2) as pool:
        loaded = dict(zip(apis, pool.map(lambda module: _loaded(module, tmp_path), apis), strict=True))

    assert all(module in loaded[module] for module in apis)  # each probe imported its flow
    found = {module: unwanted for module in apis if (unwanted := _unwanted(loaded[module], apis[module]))}
    assert found == {}
    # the forms generated from the spec's bodies: built by the two flows that take one filled in, only
    assert {module for module in apis if FORMS in loaded[module]} == FORM_FLOWS


def test_the_rule_names_data_libraries_the_sandbox_and_other_apis_only() -> None:
    modules = [
        "pandas", "numpy.core", "sandbox.app", "connectors.commerce.client", "tasks.newspaper.orders",
        "connectors.address_service.codes", "connectors.address_service.client", "fileio.headers", "prefect",
        "fileio.writeback.write", "fileio.writeback.options", "python_calamine._python_calamine",
        "fileio.worksheets", "fileio.workbooks", "authlib.oauth2.rfc6749",
    ]  # fmt: skip
    assert _unwanted(modules, "address-service") == [
        "pandas", "numpy.core", "sandbox.app", "connectors.commerce.client", "tasks.newspaper.orders",
        "fileio.writeback.write", "python_calamine._python_calamine", "fileio.worksheets",
        "authlib.oauth2.rfc6749",
    ]  # fmt: skip
    assert _unwanted(modules, "commerce") == [
        "pandas", "numpy.core", "sandbox.app", "tasks.newspaper.orders", "connectors.address_service.client",
        "fileio.writeback.write", "python_calamine._python_calamine", "fileio.worksheets",
        "authlib.oauth2.rfc6749",
    ]  # fmt: skip
    assert _unwanted(modules, None) == [
        "pandas", "numpy.core", "sandbox.app", "fileio.writeback.write", "python_calamine._python_calamine",
        "fileio.worksheets", "authlib.oauth2.rfc6749",
    ]  # fmt: skip


def _python(code: str) -> list[str]:
    """What ``code`` prints on its last line in a fresh interpreter of the repository, split."""
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip().splitlines()[-1].split()


def test_a_flow_module_finds_prefects_heap_frozen_and_the_collector_paced_and_the_package_loads_nothing() -> (
    None
):
    """In a fresh interpreter and in a run's process (Prefect's engine loaded first) alike, Prefect's heap is
    frozen before the flow's own modules load, which load with the youngest generation collected seldom;
    when the run begins, what they made is frozen too and the youngest generation is collected at the
    run's pace (the older ones at CPython's), once a process; the package alone (the command line reading a
    request model) loads no Prefect, freezes nothing and leaves the collector as it was."""
    young, *older = map(int, _python("import gc; print(*gc.get_threshold())"))
    for prefix in ("", "import prefect.main; "):
        probe = (
            f"import gc; {prefix}import flows.address_batch, flows.heap; "
            "loaded = (gc.get_freeze_count(), *gc.get_threshold()); "
            "from flows.runs import begin_run; begin_run('address-batch'); "
            "begun = (gc.get_freeze_count(), *gc.get_threshold()); "
            "gc.set_threshold(1); begin_run('address-batch'); "
            "print(flows.heap.LOADING_THRESHOLD, flows.heap.YOUNG_THRESHOLD, *loaded, *begun, "
            "*gc.get_threshold())"
        )
        loading, paced, *figures = map(int, _python(probe))
        frozen, loading_young, *loading_older = figures[:4]
        settled, run_young, *run_older = figures[4:8]
        assert frozen > 100_000 and settled > frozen, prefix
        assert loading_young == loading > paced > young and loading_older == older, prefix
        assert run_young == paced and run_older == older, prefix
        assert figures[8] == 1, prefix  # a second run's beginning leaves the collector as it is
    alone = (
        "import gc, sys, flows.requests; "
        "print(gc.get_freeze_count(), 'prefect' in sys.modules, *gc.get_threshold())"
    )
    assert _python(alone) == ["0", "False", str(young), *map(str, older)]


def test_every_flow_module_of_the_catalog_loads_prefect_through_the_heap_before_its_own_modules() -> None:
    first_party = ("connectors", "fileio", "flows", "history", "runtime", "tasks", "deployments")
    for module in sorted({spec.flow.partition(":")[0] for spec in CATALOG}):
        tree = ast.parse((REPO / (module.replace(".", "/") + ".py")).read_text(encoding="utf-8"))
        imported = [
            node.names[0].name if isinstance(node, ast.Import) else node.module or ""
            for node in tree.body
            if isinstance(node, ast.Import | ast.ImportFrom)
        ]
        ours = [name for name in imported if name.split(".")[0] in first_party]
        assert ours[:1] == ["flows.heap"], module
