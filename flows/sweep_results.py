"""What a flow returns when it runs itself once per item (the statistics inbox, every newspaper synced
before): it records no run of its own, so its result is no :class:`~flows.results.RunResult`; each run it
started reports its own."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict


class SweepResult(BaseModel):
    """The result of a flow's runs over several items, printed as their summary."""

    model_config = ConfigDict(extra="forbid")

    def summary(self) -> dict[str, Any]:
        """The result as JSON values, as ``postflows <command>`` prints it."""
        return self.model_dump(mode="json")
