"""Deployments build from the flows with typed parameter schemas (what the Prefect UI turns into forms)."""

from __future__ import annotations

from pathlib import Path

import yaml
from prefect.utilities.callables import parameter_schema

from deployments.serve import deployments
from flows.address_batch import address_batch
from flows.delivery_reference_sync import delivery_reference_sync
from flows.pickup_registration import pickup_registration

ROOT = Path(__file__).resolve().parents[2]


def test_every_flow_has_a_deployment_with_a_typed_parameter_form() -> None:
    built = {deployment.name: deployment for deployment in deployments()}
    assert {"address-batch", "address-query", "newspaper-order", "address-purchase"} <= set(built)
    schema = parameter_schema(address_batch.fn).model_dump()
    properties = schema["properties"]
    assert set(schema["required"]) == {"input_path", "output_dir"}
    assert properties["input_path"]["format"] == "path"
    assert properties["max_wait_s"]["type"] == "number" and properties["max_wait_s"]["default"] == 3600.0
    assert "billing_reference" in properties
    assert properties["input_path"]["description"] == "the address file."
    assert built["address-batch"].description and "batch alignment" in built["address-batch"].description


def test_prefect_yaml_entrypoints_exist() -> None:
    config = yaml.safe_load((ROOT / "prefect.yaml").read_text())
    for deployment in config["deployments"]:
        module, _, function = deployment["entrypoint"].partition(":")
        source = (ROOT / module).read_text()
        assert f"async def {function}(" in source or f"def {function}(" in source


def test_prefect_yaml_lists_every_served_flow() -> None:
    config = yaml.safe_load((ROOT / "prefect.yaml").read_text())
    assert {d["name"] for d in config["deployments"]} == {d.name for d in deployments()}


def test_commerce_flows_are_deployed_with_their_forms() -> None:
    built = {deployment.name: deployment for deployment in deployments()}
    sync, pickup = built["delivery-reference-sync"], built["pickup-registration"]
    assert sync.tags == ["commerce"] and pickup.tags == ["commerce"]
    assert pickup.description and "pickup ids" in pickup.description
    schema = parameter_schema(pickup_registration.fn).model_dump()
    assert set(schema["required"]) == {"input_path", "output_dir"}
    assert schema["properties"]["resubmit"]["default"] is False
    assert parameter_schema(delivery_reference_sync.fn).model_dump()["required"] == []
