"""What a flow returns: a result model per flow, each a :class:`RunResult` with the fields every run reports.

The result is the run's summary in every place it is read: the history stores :meth:`RunResult.summary`, the
``postflows.<flow>.finished`` event carries it, ``postflows <command>`` prints it and a caller of the flow
(``run_deployment``, a test) reads its fields. A run whose wait was parked returns :class:`RunParked`
instead, which names the follow-up run and keeps what the run had found before it parked.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class RunResult(BaseModel):
    """The fields every run reports: its record in the history (``run_id``), whether its answers came
    from the embedded sandbox, the key its work is recorded under, every file it wrote (``summary.md``
    last), and the earlier work it took up (``reused``, per kind) or sent anew over (``replaced``)."""

    model_config = ConfigDict(extra="forbid")

    run_id: int
    sandbox: bool = False
    idempotency_key: str | None = None
    files: list[str] = Field(default_factory=list)
    resumed: bool = False
    reused: dict[str, list[str]] = Field(default_factory=dict)
    replaced: dict[str, list[str]] | None = None
    took_up_interrupted_run: int | None = None

    def summary(self) -> dict[str, Any]:
        """The result as JSON values, as the history stores it and the finished event carries it."""
        return self.model_dump(mode="json", exclude_none=True)


class RunParked(RunResult):
    """A run whose wait was parked: the job ``parked_job`` is waited for by the follow-up run
    ``follow_up_run`` (``parked`` says when); ``so_far`` holds what the run had found before."""

    parked: str
    parked_job: str
    follow_up_run: str
    so_far: dict[str, Any] = Field(default_factory=dict)
