"""A deployment run is refused at submission, naming the parameter, when it has a parameter the flow does
not take, at the top level or inside a request part; the server accepts the flow's own parameters."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from uuid import UUID

import pytest
from prefect.client.orchestration import get_client
from prefect.exceptions import PrefectHTTPStatusError

from deployments.catalog import CATALOG
from deployments.serve import build

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "address-batch.csv"
GOOD = {"request": {"input_path": str(EXAMPLE)}, "output": {"output_dir": "/tmp/out"}}


@pytest.fixture
async def deployment() -> AsyncIterator[UUID]:
    """The address-query deployment as `postflows serve` builds it, on the test server (nothing runs it)."""
    (spec,) = [spec for spec in CATALOG if spec.name == "address-query"]
    runner_deployment = await asyncio.to_thread(build, spec)
    deployment_id: UUID = await runner_deployment.apply()
    yield deployment_id
    async with get_client() as client:
        await client.delete_deployment(deployment_id)


@pytest.mark.parametrize(
    ("parameters", "named"),
    [
        ({**GOOD, "inputpath": str(EXAMPLE)}, "inputpath"),
        ({**GOOD, "request": {**GOOD["request"], "inputpath": str(EXAMPLE)}}, "inputpath"),
    ],
    ids=["top-level", "in-a-request-part"],
)
async def test_an_unknown_parameter_is_refused_at_submission(
    deployment: UUID, parameters: dict[str, object], named: str
) -> None:
    async with get_client() as client:
        with pytest.raises(PrefectHTTPStatusError) as refused:
            await client.create_flow_run_from_deployment(deployment, parameters=parameters)
    assert refused.value.response.status_code == 409
    assert named in refused.value.response.text


async def test_the_flows_own_parameters_are_accepted(deployment: UUID) -> None:
    async with get_client() as client:
        flow_run = await client.create_flow_run_from_deployment(deployment, parameters=GOOD)
        assert flow_run.parameters["request"]["input_path"] == str(EXAMPLE)
        await client.delete_flow_run(flow_run.id)
