"""The address validation and deliverability flows are deployments with typed parameter forms."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import yaml
from prefect.utilities.callables import parameter_schema

from deployments.serve import deployments
from flows.deliverability_check import deliverability_check

ROOT = Path(__file__).resolve().parents[2]


def test_both_flows_are_served_and_listed_in_prefect_yaml() -> None:
    built = {deployment.name: deployment for deployment in deployments()}
    assert {"address-validation", "deliverability-check"} <= set(built)
    assert built["address-validation"].tags == ["commerce"]
    assert built["deliverability-check"].description
    listed = {d["name"]: d for d in yaml.safe_load((ROOT / "prefect.yaml").read_text())["deployments"]}
    assert listed["address-validation"]["entrypoint"] == "flows/address_validation.py:address_validation"
    assert listed["deliverability-check"]["tags"] == ["commerce"]


def test_the_deliverability_form_takes_a_date_and_a_day_count() -> None:
    schema = parameter_schema(deliverability_check.fn).model_dump()
    assert set(schema["required"]) == {"request", "output"}
    request = schema["definitions"]["DeliverabilityRequest"]
    properties = request["properties"]
    assert request["required"] == ["input_path"]
    assert properties["days"]["default"] == 14
    assert (
        properties["start"]["pattern"] == r"^(\d{4}-\d{2}-\d{2})?$" and properties["start"]["default"] == ""
    )
    output = {"output_dir": "out"}

    def given(start: str) -> dt.date | None:
        request = {"input_path": "in.csv", "start": start}
        day: dt.date | None = deliverability_check.validate_parameters(
            {"request": request, "output": output}
        )["request"].start
        return day

    assert given("2026-11-23") == dt.date(2026, 11, 23)
    assert given("") is None
