"""The session's Prefect server keeps its flow runs in PostgreSQL, as a production server does (README,
"Scale-out"): a flow run created through its API is a row of the PostgreSQL database made for it."""

from __future__ import annotations

import os

import httpx
import pytest
from sqlalchemy import create_engine, text

from tests.e2e.conftest import POSTGRES_URL_ENV, PrefectServer

pytestmark = [pytest.mark.e2e, pytest.mark.postgres]


def test_the_prefect_server_runs_on_postgresql(prefect_server: PrefectServer) -> None:
    if not os.environ.get(POSTGRES_URL_ENV):
        pytest.fail(
            f"{POSTGRES_URL_ENV} is not set: run through `make test` / scripts/with-postgres.sh", False
        )
    assert prefect_server.database_url is not None
    with httpx.Client(base_url=prefect_server.api_url, timeout=30) as api:
        flow = api.post("/flows/", json={"name": "postgres-check"}).raise_for_status().json()
        run = api.post("/flow_runs/", json={"flow_id": flow["id"], "name": "stored-in-postgres"})
        run_id = run.raise_for_status().json()["id"]

    engine = create_engine(prefect_server.database_url)
    try:
        with engine.connect() as connection:
            assert connection.dialect.name == "postgresql"
            stored = connection.execute(
                text("SELECT flow_run.name, flow.name FROM flow_run JOIN flow ON flow.id = flow_run.flow_id "
                     "WHERE flow_run.id = :id"),
                {"id": run_id},
            ).one()  # fmt: skip
    finally:
        engine.dispose()
    assert tuple(stored) == ("stored-in-postgres", "postgres-check")
