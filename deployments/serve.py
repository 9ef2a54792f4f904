"""Serve every flow as a deployment of a Prefect server, with typed parameters from the flow signatures."""

from __future__ import annotations

from typing import Any

from prefect import serve

from flows.address_batch import address_batch
from flows.address_purchase import address_purchase
from flows.address_query import address_query
from flows.address_validation import address_validation
from flows.cleanup import cleanup
from flows.deliverability_check import deliverability_check
from flows.delivery_reference_sync import delivery_reference_sync
from flows.newspaper_master_data import newspaper_master_data
from flows.newspaper_order import newspaper_order
from flows.newspaper_reports import newspaper_reports
from flows.newspaper_statistics import newspaper_statistics
from flows.pickup_registration import pickup_registration
from flows.structure_files import structure_files


def deployments() -> list[Any]:
    """One deployment per flow; the UI builds parameter forms from the flows' type hints."""
    return [
        address_batch.to_deployment(name="address-batch", tags=["address-service"]),
        address_query.to_deployment(name="address-query", tags=["address-service"]),
        newspaper_order.to_deployment(name="newspaper-order", tags=["newspaper"]),
        newspaper_reports.to_deployment(name="newspaper-reports", tags=["newspaper"]),
        newspaper_master_data.to_deployment(name="newspaper-master-data", tags=["newspaper"]),
        newspaper_statistics.to_deployment(name="newspaper-statistics", tags=["newspaper"]),
        address_purchase.to_deployment(name="address-purchase", tags=["newspaper"]),
        structure_files.to_deployment(name="structure-files", tags=["newspaper"]),
        cleanup.to_deployment(name="cleanup", tags=["address-service"]),
        address_validation.to_deployment(name="address-validation", tags=["commerce"]),
        deliverability_check.to_deployment(name="deliverability-check", tags=["commerce"]),
        delivery_reference_sync.to_deployment(name="delivery-reference-sync", tags=["commerce"]),
        pickup_registration.to_deployment(name="pickup-registration", tags=["commerce"]),
    ]


def serve_all() -> None:  # pragma: no cover - blocks until interrupted
    serve(*deployments())
