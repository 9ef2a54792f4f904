"""Every flow of the catalog records a run that fails before it opens its history record."""

from __future__ import annotations

import pytest

from deployments.catalog import CATALOG
from flows.early_failures import record_early_failure


@pytest.mark.parametrize("spec", CATALOG, ids=lambda spec: spec.name)
def test_every_flow_records_its_early_failures(spec) -> None:  # type: ignore[no-untyped-def]
    assert record_early_failure in spec.load_flow().on_failure_hooks
