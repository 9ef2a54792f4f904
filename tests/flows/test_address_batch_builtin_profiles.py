"""The built-in alignment profiles on the embedded sandbox as it comes, with no alignment setting: the
sandbox holds their alignments for its configured keys, so ``postflows address-batch … --profile legacy-de``
completes and its results come back by the profile's own id column."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from postflows.cli import app
from runtime.wiring import reset_sandbox
from tests.outputs import read_output_csv
from tests.sandbox.test_address_batch import EXAMPLE_OUTCOMES

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "address-batch.csv"


@pytest.fixture
def embedded_sandbox(flow_env: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The embedded sandbox built by the composition root from the settings, with no alignment setting."""
    monkeypatch.delenv("POSTFLOWS_SANDBOX_ALIGNMENTS", raising=False)
    monkeypatch.delenv("POSTFLOWS_ADDRESS_SERVICE_URL", raising=False)
    monkeypatch.setenv("POSTFLOWS_SANDBOX_JOB_SECONDS", "0.2")
    reset_sandbox()
    yield
    reset_sandbox()


@pytest.mark.parametrize("profile", ["legacy-de", "standard"])
def test_a_built_in_profile_completes_on_the_embedded_sandbox(
    embedded_sandbox: None, tmp_path: Path, profile: str
) -> None:
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["address-batch", str(EXAMPLE), "--profile", profile, "--out", str(out)])
    assert result.exit_code == 0, result.output
    results = read_output_csv(out / "results.csv", dtype=str, keep_default_na=False)
    assert results["ReturnedByService"].eq("True").all()
    outcomes = dict(zip(results["KundenNr"], results["QSTAT"], strict=True))
    assert {number: outcomes[number] for number in EXAMPLE_OUTCOMES} == {
        number: qstat for number, (qstat, _) in EXAMPLE_OUTCOMES.items()
    }
