"""Where the secret scan (tests/e2e/test_secrets_scan.py) looks besides the processes' output: the files of
the runs' workspaces and output directories, and the Prefect server (REST API, database, files).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx

from tests.e2e.conftest import CliWorkspace, PrefectServer
from tests.secret_scan import SecretScan, postgres_tables, sqlite_tables


def scan_workspaces(scan: SecretScan, workspaces: list[CliWorkspace], out: Path) -> None:
    """Every file of every workspace and output directory; the token store may hold the refresh token it
    keeps (and nothing else)."""
    paths = sorted({p for w in workspaces for p in w.root.rglob("*") if p.is_file()} | set(out.rglob("*")))
    for path in paths:
        if not path.is_file():
            continue
        allowed = _stored_refresh_token(path)
        store = "token store" if allowed else _store_of(path)
        scan.scan_file(store, path, allowed=allowed)


def _store_of(path: Path) -> str:
    if path.name.startswith("history.db"):
        return "run history"
    if "prefect-home" in path.parts:
        return "client PREFECT_HOME"
    if path.name == "summary.md":
        return "summaries"
    return "result files"


def _stored_refresh_token(path: Path) -> list[str]:
    """The refresh token of a token store file (JSON with a refresh_token), else nothing."""
    if path.suffix != ".json":
        return []
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, ValueError):
        return []
    token = record.get("refresh_token") if isinstance(record, dict) else None
    return [token] if isinstance(token, str) else []


def scan_prefect(scan: SecretScan, server: PrefectServer, ids: list[str]) -> dict[str, int]:
    """The flow runs ``ids``, their states, task runs, logs and artifacts through the REST API, then the
    server's whole database and its files. Returns how many of each it read."""
    api = httpx.Client(base_url=server.api_url, timeout=30)
    counts: dict[str, int] = {}

    def every(path: str, body: dict[str, Any]) -> list[Any]:
        found: list[Any] = []
        while True:
            page = api.post(path, json={**body, "limit": 200, "offset": len(found)})
            page.raise_for_status()
            found += page.json()
            if len(page.json()) < 200:
                return found

    with api:
        of_runs = {"any_": ids}
        listed = {
            "flow runs": every("/flow_runs/filter", {"flow_runs": {"id": of_runs}}),
            "task runs": every("/task_runs/filter", {"flow_runs": {"id": of_runs}}),
            "logs": every("/logs/filter", {"logs": {"flow_run_id": of_runs}}),
            "artifacts": every("/artifacts/filter", {"artifacts": {"flow_run_id": of_runs}}),
            "flow run states": [
                state
                for id_ in ids
                for state in api.get("/flow_run_states/", params={"flow_run_id": id_}).json()
            ],
        }
    for what, items in listed.items():
        counts[what] = len(items)
        for item in items:
            scan.scan("Prefect API", what, json.dumps(item))
    counts["failed flow runs"] = sum(
        run["state_type"] in {"FAILED", "CRASHED"} for run in listed["flow runs"]
    )
    counts["database rows"] = scan_prefect_database(scan, server)
    for path in sorted(server.home.rglob("*")):
        if path.is_file() and not path.name.startswith("prefect.db"):
            scan.scan_file("Prefect server files", path)
    return counts


def scan_prefect_database(scan: SecretScan, server: PrefectServer) -> int:
    """Every row of every table of the Prefect server's database (PostgreSQL or SQLite)."""
    if server.database_url is None:
        tables = sqlite_tables(server.home / "prefect.db")
        for path in sorted(server.home.glob("prefect.db*")):
            scan.scan("Prefect database file", str(path), path.read_bytes())
    else:
        tables = postgres_tables(server.database_url)
    for table, rows in tables.items():
        for row in rows:
            scan.scan("Prefect database", table, row)
    return sum(len(rows) for rows in tables.values())
