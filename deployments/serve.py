"""Serve every flow as a deployment of a Prefect server, with typed parameters from the flow signatures."""

from __future__ import annotations

from typing import Any

from prefect import serve

from flows.address_batch import address_batch
from flows.address_query import address_query


def deployments() -> list[Any]:
    """One deployment per flow; the UI builds parameter forms from the flows' type hints."""
    return [
        address_batch.to_deployment(name="address-batch", tags=["address-service"]),
        address_query.to_deployment(name="address-query", tags=["address-service"]),
    ]


def serve_all() -> None:  # pragma: no cover - blocks until interrupted
    serve(*deployments())
