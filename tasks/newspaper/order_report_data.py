"""What the order pipelines collect about one order, for its files and summary."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tasks.newspaper.orders import OrderReports


@dataclass
class OrderOutcome:
    """An order's id, identity, observed status changes, reports, the API warnings of the run and the errors
    of the answer that took the order."""

    order_id: int
    reports: OrderReports = field(default_factory=OrderReports)
    identity: dict[str, Any] = field(default_factory=dict)
    status_history: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    resumed: bool = False
