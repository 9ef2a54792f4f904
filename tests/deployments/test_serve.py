"""Deployments build from the flows with typed parameter schemas (what the Prefect UI turns into forms)."""

from __future__ import annotations

from prefect.utilities.callables import parameter_schema

from deployments.serve import deployments
from flows.address_batch import address_batch
from flows.delivery_reference_sync import delivery_reference_sync
from flows.pickup_registration import pickup_registration


def test_every_flow_has_a_deployment_with_a_typed_parameter_form() -> None:
    built = {deployment.name: deployment for deployment in deployments()}
    assert {"address-batch", "address-query", "newspaper-order", "address-purchase"} <= set(built)
    schema = parameter_schema(address_batch.fn).model_dump()
    assert set(schema["required"]) == {"request", "output"}
    request = schema["definitions"]["AddressBatchRequest"]
    properties = request["properties"]
    assert set(request["required"]) == {"input_path"}
    assert schema["definitions"]["OutputOptions"]["required"] == ["output_dir"]
    assert properties["input_path"]["format"] == "path"
    polling = schema["definitions"]["PollingOptions"]["properties"]
    assert polling["max_wait_s"]["type"] == "number" and polling["max_wait_s"]["default"] == 3600.0
    assert schema["properties"]["polling"]["default"]["min_poll_interval_s"] == 1.0
    assert "billing_reference" in properties
    assert properties["input_path"]["title"] == "Address file"
    assert properties["input_path"]["description"].startswith("The address file on the worker")
    assert built["address-batch"].description and "batch alignment" in built["address-batch"].description


def test_commerce_flows_are_deployed_with_their_forms() -> None:
    built = {deployment.name: deployment for deployment in deployments()}
    sync, pickup = built["delivery-reference-sync"], built["pickup-registration"]
    assert sync.tags == ["commerce", "scheduled"] and pickup.tags == ["commerce"]
    assert pickup.description and "pickup ids" in pickup.description
    schema = parameter_schema(pickup_registration.fn).model_dump()
    assert set(schema["required"]) == {"request", "output"}
    assert schema["definitions"]["PickupRegistrationRequest"]["properties"]["resubmit"]["default"] is False
    assert parameter_schema(delivery_reference_sync.fn).model_dump()["required"] == []


def test_deploy_builds_the_served_deployment_run_from_the_repository() -> None:
    from prefect.runner.storage import LocalStorage

    from deployments.catalog import spec_named
    from deployments.deploy import CODE_ROOT, runner_deployment

    spec = spec_named("address-query")
    served = {deployment.name: deployment for deployment in deployments()}[spec.name]
    deployed = runner_deployment(spec)
    assert (
        deployed.entrypoint == spec.entrypoint and (CODE_ROOT / spec.entrypoint.partition(":")[0]).is_file()
    )
    assert deployed.storage == LocalStorage(str(CODE_ROOT))
    assert deployed.storage.to_pull_step() == {
        "prefect.deployments.steps.set_working_directory": {"directory": str(CODE_ROOT)}
    }
    assert (deployed.flow_name, deployed.name) == (served.flow_name, served.name)
    assert (deployed.description, deployed.tags, deployed.concurrency_limit) == (
        served.description,
        served.tags,
        served.concurrency_limit,
    )


def test_the_parameter_schema_on_the_server_is_the_flows_form_refusing_other_parameters() -> None:
    from deployments.catalog import spec_named
    from deployments.serve import parameter_schema_of

    schema = parameter_schema_of(spec_named("address-batch"))
    assert schema.pop("additionalProperties") is False
    assert schema == parameter_schema(address_batch.fn).model_dump()  # the UI's form, unchanged
    assert set(schema["required"]) == {"request", "output"}
