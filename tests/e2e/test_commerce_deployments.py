"""The commerce flows as deployments of a real Prefect server: ``postflows serve`` serves them, and runs are
triggered as another system would (``prefect deployment run … --watch``), each reaching COMPLETED with its
files written, against the embedded sandbox.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.conftest import ServedDeployments
from tests.outputs import output_records

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_address_validation_and_deliverability_run_as_deployments(
    served: ServedDeployments, tmp_path: Path
) -> None:
    validation = served.run_deployment(
        "address-validation",
        {
            "request": {"input_path": str(EXAMPLES / "commerce-addresses.csv")},
            "output": {"output_dir": str(tmp_path / "validation")},
        },
    )
    assert validation.returncode == 0, validation.stdout + validation.stderr
    assert "Completed" in validation.stdout
    assert (tmp_path / "validation" / "results.xlsx").is_file()

    deliverability = served.run_deployment(
        "deliverability-check",
        {
            "request": {
                "input_path": str(EXAMPLES / "commerce-addresses.csv"),
                "start": "2026-11-23",
                "days": 7,
            },
            "output": {"output_dir": str(tmp_path / "deliverability")},
        },
    )
    assert deliverability.returncode == 0, deliverability.stdout + deliverability.stderr
    assert (tmp_path / "deliverability" / "deliverability.xlsx").is_file()


def test_delivery_sync_and_pickup_registration_run_as_deployments(
    served: ServedDeployments, tmp_path: Path
) -> None:
    sync = served.run_deployment(
        "delivery-reference-sync", {"output": {"output_dir": str(tmp_path / "sync")}}
    )
    assert sync.returncode == 0, sync.stdout + sync.stderr
    assert "Completed" in sync.stdout
    assert "| holidays |" in (tmp_path / "sync" / "summary.md").read_text()

    pickup = served.run_deployment(
        "pickup-registration",
        {
            "request": {"input_path": str(EXAMPLES / "pickup-users.csv")},
            "output": {"output_dir": str(tmp_path / "pickup")},
        },
    )
    assert pickup.returncode == 0, pickup.stdout + pickup.stderr
    results = output_records(tmp_path / "pickup" / "results.csv")
    assert len(results) == 3 and all(row["status"] == "registered" for row in results)
    assert len(output_records(tmp_path / "pickup" / "rejected.csv")) == 3  # one line per rejected row
