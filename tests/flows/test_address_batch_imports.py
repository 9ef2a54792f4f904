"""An address batch against a service URL loads no module of the sandbox or of another API: run as a
deployment's flow run runs it (the flow module's entry, in a process of its own reporting to the session's
Prefect server), once as a dry run and once for real against an address where nothing listens."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from prefect.settings import PREFECT_API_URL

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "address-batch.csv"
# The sandbox, and the newspaper and commerce packages of the connectors, the files and the tasks.
FOREIGN = (
    "sandbox", "connectors.newspaper", "connectors.commerce", "fileio.newspaper", "fileio.commerce",
    "tasks.newspaper", "tasks.commerce",
)  # fmt: skip

_RUN = """
import asyncio, json, sys
from flows.address_batch import address_batch
from flows.requests import AddressBatchRequest, OutputOptions

def run(out, dry_run):
    request = AddressBatchRequest(input_path=sys.argv[1], dry_run=dry_run)
    try:
        return asyncio.run(address_batch(request=request, output=OutputOptions(output_dir=out))).summary()
    except Exception as error:
        return type(error).__name__

planned, sent = run("planned", True), run("sent", False)
print("\\nPROBE " + json.dumps({"planned": planned, "sent": sent, "modules": sorted(sys.modules)}))
"""


def _service_url_environment(tmp_path: Path) -> dict[str, str]:
    """A process's environment for an address service at an address where nothing listens (one attempt,
    no retries), reporting to the session's Prefect server."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("POSTFLOWS_", "PREFECT_"))}
    env.update(
        PYTHONPATH=str(REPO),
        PREFECT_API_URL=str(PREFECT_API_URL.value()),
        POSTFLOWS_DATA_DIR=str(tmp_path / "data"),
        POSTFLOWS_ADDRESS_SERVICE_URL="https://127.0.0.1:9/address/REST/v1",
        POSTFLOWS_ADDRESS_SERVICE_USER="user",
        POSTFLOWS_ADDRESS_SERVICE_PASSWORD="password",
        POSTFLOWS_HTTP_MAX_ATTEMPTS="1",
        POSTFLOWS_TASK_RETRIES="0",
    )
    return env


def test_an_address_batch_against_a_service_url_loads_no_sandbox_and_no_other_api(tmp_path: Path) -> None:
    env = _service_url_environment(tmp_path)
    done = subprocess.run(
        [sys.executable, "-c", _RUN, str(EXAMPLE)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    _, _, probe = done.stdout.rpartition("\nPROBE ")
    assert probe, done.stderr[-3000:]
    probed = json.loads(probe)
    assert probed["planned"]["dry_run"] is True and probed["planned"]["sandbox"] is False
    assert probed["sent"] == "PingFailed"  # nothing listens: the run fails at its ping, having sent nothing
    modules = probed["modules"]
    assert "flows.address_batch" in modules and "connectors.address_service.client" in modules
    assert [m for m in modules if any(m == name or m.startswith(f"{name}.") for name in FOREIGN)] == []


_CLI = "import sys; from postflows.cli import main; sys.argv[0] = 'postflows'; main()"


def _imported(stderr: str) -> list[str]:
    """The modules ``python -X importtime`` reports (its lines: ``import time: self | cumulative | name``)."""
    return [
        line.rpartition("|")[2].strip()
        for line in stderr.splitlines()
        if line.startswith("import time:") and not line.endswith("| imported package")
    ]


def test_the_address_batch_command_loads_no_sandbox_and_no_other_api(tmp_path: Path) -> None:
    """``postflows address-batch`` as a user runs it, under ``python -X importtime``: a dry run and a run
    against an address where nothing listens load the address service's modules and none of the other APIs'
    commands, connectors, files or tasks, nor the sandbox's."""
    env = _service_url_environment(tmp_path)
    foreign = (*FOREIGN, "postflows.cli_newspaper", "postflows.cli_commerce", "postflows.cli_sandbox")
    for name, extra in (("planned", ["--dry-run"]), ("sent", [])):
        done = subprocess.run(
            [
                sys.executable,
                "-X",
                "importtime",
                "-c",
                _CLI,
                "address-batch",
                str(EXAMPLE),
                "-o",
                name,
                *extra,
            ],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == (0 if extra else 1), done.stdout[-3000:] + done.stderr[-3000:]
        modules = _imported(done.stderr)
        assert {"postflows.cli", "flows.address_batch", "connectors.address_service.answers"} <= set(modules)
        assert ("connectors.address_service.client" in modules) is not extra, name  # the run calls it
        assert [m for m in modules if any(m == f or m.startswith(f"{f}.") for f in foreign)] == [], name
