"""A deployment run is refused at submission, naming the parameter, when it has a parameter the flow does
not take, at the top level or inside a request part; the server accepts the flow's own parameters."""

from __future__ import annotations

from pathlib import Path
from uuid import UUID

import pytest
from prefect.client.orchestration import get_client
from prefect.exceptions import PrefectHTTPStatusError

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "address-batch.csv"
GOOD = {"request": {"input_path": str(EXAMPLE)}, "output": {"output_dir": "/tmp/out"}}


@pytest.mark.parametrize(
    ("parameters", "named"),
    [
        ({**GOOD, "inputpath": str(EXAMPLE)}, "inputpath"),
        ({**GOOD, "request": {**GOOD["request"], "inputpath": str(EXAMPLE)}}, "inputpath"),
    ],
    ids=["top-level", "in-a-request-part"],
)
async def test_an_unknown_parameter_is_refused_at_submission(
    address_query_deployment: UUID, parameters: dict[str, object], named: str
) -> None:
    async with get_client() as client:
        with pytest.raises(PrefectHTTPStatusError) as refused:
            await client.create_flow_run_from_deployment(address_query_deployment, parameters=parameters)
    assert refused.value.response.status_code == 409
    assert named in refused.value.response.text


async def test_the_flows_own_parameters_are_accepted(address_query_deployment: UUID) -> None:
    async with get_client() as client:
        flow_run = await client.create_flow_run_from_deployment(address_query_deployment, parameters=GOOD)
        assert flow_run.parameters["request"]["input_path"] == str(EXAMPLE)
        await client.delete_flow_run(flow_run.id)
