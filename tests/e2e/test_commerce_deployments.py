"""The commerce flows as deployments of a real Prefect server: ``postflows serve`` serves them, and runs are
triggered as another system would (``prefect deployment run … --watch``), each reaching COMPLETED with its
files written, against the embedded sandbox.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest import POSTFLOWS, PREFECT, PrefectServer, base_environment, stop

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(scope="module")
def served(
    prefect_server: PrefectServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, str]]:
    root = tmp_path_factory.mktemp("commerce-serve")
    env = base_environment()
    env.update(
        PREFECT_API_URL=prefect_server.api_url,
        PREFECT_HOME=str(root / "prefect-home"),
        POSTFLOWS_DATA_DIR=str(root / "data"),
    )
    log = root / "serve.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [POSTFLOWS, "serve"],
            cwd=root,
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        wait_for_deployments(env, ["address-validation/address-validation"], process, log)
        yield env
    finally:
        stop(process)


def wait_for_deployments(
    env: dict[str, str], names: list[str], process: subprocess.Popen[bytes], log: Path
) -> None:
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"postflows serve exited:\n{log.read_text()}")
        listed = subprocess.run(
            [PREFECT, "deployment", "ls"], env=env, capture_output=True, text=True, timeout=60
        )
        if all(name.split("/")[1] in listed.stdout for name in names):
            return
        time.sleep(1)
    raise RuntimeError(f"deployments did not appear:\n{log.read_text()}")


def run_deployment(
    env: dict[str, str], name: str, parameters: dict[str, object]
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            PREFECT, "deployment", "run", name, "--params", json.dumps(parameters),
            "--watch", "--watch-timeout", "240",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )  # fmt: skip


def test_address_validation_and_deliverability_run_as_deployments(
    served: dict[str, str], tmp_path: Path
) -> None:
    validation = run_deployment(
        served,
        "address-validation/address-validation",
        {"input_path": str(EXAMPLES / "commerce-addresses.csv"), "output_dir": str(tmp_path / "validation")},
    )
    assert validation.returncode == 0, validation.stdout + validation.stderr
    assert "Completed" in validation.stdout
    assert (tmp_path / "validation" / "results.xlsx").is_file()

    deliverability = run_deployment(
        served,
        "deliverability-check/deliverability-check",
        {
            "input_path": str(EXAMPLES / "commerce-addresses.csv"),
            "output_dir": str(tmp_path / "deliverability"),
            "start": "2026-11-23",
            "days": 7,
        },
    )
    assert deliverability.returncode == 0, deliverability.stdout + deliverability.stderr
    assert (tmp_path / "deliverability" / "deliverability.xlsx").is_file()


def test_delivery_sync_and_pickup_registration_run_as_deployments(
    served: dict[str, str], tmp_path: Path
) -> None:
    sync = run_deployment(
        served, "delivery-reference-sync/delivery-reference-sync", {"output_dir": str(tmp_path / "sync")}
    )
    assert sync.returncode == 0, sync.stdout + sync.stderr
    assert "Completed" in sync.stdout
    assert "| holidays |" in (tmp_path / "sync" / "summary.md").read_text()

    pickup = run_deployment(
        served,
        "pickup-registration/pickup-registration",
        {"input_path": str(EXAMPLES / "pickup-users.csv"), "output_dir": str(tmp_path / "pickup")},
    )
    assert pickup.returncode == 0, pickup.stdout + pickup.stderr
    results = (tmp_path / "pickup" / "results.csv").read_text().splitlines()
    assert len(results) == 4 and all(",registered," in line for line in results[1:])
    assert len((tmp_path / "pickup" / "rejected.csv").read_text().splitlines()) == 4
