"""``pip install postflows`` installs no FastAPI app of ours: the sandbox is the distribution
``postflows-sandbox`` (sandbox/pyproject.toml), which the ``postflows[sandbox]`` extra requires and which
the runtime finds by its entry point. Read from the setuptools configuration of both distributions (the
packages each wheel holds, as setuptools selects them) and from the installed entry point."""

from __future__ import annotations

import re
import tomllib
from fnmatch import fnmatchcase
from importlib.metadata import entry_points, version
from pathlib import Path
from typing import Any

from runtime.endpoints import SANDBOX_ENTRY_POINT, SANDBOX_ENTRY_POINTS
from runtime.wiring.embedded import SandboxOptions

ROOT = Path(__file__).resolve().parents[1]


def _pyproject(path: Path) -> dict[str, Any]:
    return tomllib.loads(path.read_text(encoding="utf-8"))


def _packages_under(folder: Path, prefix: str) -> set[str]:
    """Every package (folder with ``__init__.py``) below ``folder``, named from ``prefix``."""
    return {
        ".".join((prefix, *init.parent.relative_to(folder).parts))
        for init in folder.rglob("__init__.py")
        if "build" not in init.parts
    }


def _postflows_packages() -> set[str]:
    """The packages the postflows wheel holds: setuptools' ``packages.find`` includes, applied to every
    package of the tree (its matching is fnmatch on the dotted name)."""
    find = _pyproject(ROOT / "pyproject.toml")["tool"]["setuptools"]["packages"]["find"]
    tops = {path.parent.name for path in ROOT.glob("*/__init__.py")}
    every = set().union(*(_packages_under(ROOT / top, top) for top in tops))
    return {name for name in every if any(fnmatchcase(name, pattern) for pattern in find["include"])}


def test_the_postflows_wheel_holds_no_sandbox_package() -> None:
    packages = _postflows_packages()
    assert {"postflows", "runtime.wiring", "flows.requests", "connectors.commerce"} <= packages
    assert not {name for name in packages if name.partition(".")[0] == "sandbox"}


def test_the_sandbox_distribution_holds_every_sandbox_package() -> None:
    setuptools = _pyproject(ROOT / "sandbox" / "pyproject.toml")["tool"]["setuptools"]
    assert setuptools["package-dir"] == {"sandbox": "."}
    assert set(setuptools["packages"]) == _packages_under(ROOT / "sandbox", "sandbox")


def test_the_sandbox_extra_requires_the_sandbox_distribution_of_this_tree() -> None:
    root, sandbox = _pyproject(ROOT / "pyproject.toml"), _pyproject(ROOT / "sandbox" / "pyproject.toml")
    extra = root["project"]["optional-dependencies"]["sandbox"]
    assert extra == [f"postflows-sandbox=={sandbox['project']['version']}"]
    core = {re.split(r"[<>=\[; ]", item)[0] for item in root["project"]["dependencies"]}
    # Prefect's server requires FastAPI (the pin stays with the core); our app and its server do not.
    assert "fastapi" in core and not core & {"uvicorn", "starlette", "anyio"}
    declared = sandbox["project"]["entry-points"][SANDBOX_ENTRY_POINTS]
    assert declared == {SANDBOX_ENTRY_POINT: "sandbox.inprocess"}


def test_the_installed_sandbox_is_found_by_its_entry_point_and_builds_a_transport(tmp_path: Path) -> None:
    (point,) = entry_points(group=SANDBOX_ENTRY_POINTS, name=SANDBOX_ENTRY_POINT)
    assert version("postflows-sandbox") == version("postflows")
    embedded = point.load()
    options = SandboxOptions(1.0, None, tmp_path, None, "LOADED,DONE", "status", "ours")
    transport = embedded.transport(options)
    assert transport.config.order_statuses == ("LOADED", "DONE") and transport.config.state_dir == tmp_path
    assert embedded.services()["address-service"]["base_url"].endswith("/address/REST/v1")
