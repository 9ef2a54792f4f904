"""The parts of the commerce flows' results that several flows share: the rows of an input file, the
queries a run sends once per row, and the JSON bodies it posts. Each flow's own result (in its module)
adds what only it reports."""

from __future__ import annotations

from typing import Any

from flows.results import RunResult


class KeepsNone(RunResult):
    """A result whose own fields are in its summary even when they are none (``null``), as these runs have
    always reported them; the fields every run reports are left out when none, as for every run."""

    def summary(self) -> dict[str, Any]:
        """The result as JSON values, the flow's own fields with their nones."""
        values = self.model_dump(mode="json")
        common = RunResult.model_fields
        return {name: value for name, value in values.items() if value is not None or name not in common}


class FileRows(RunResult):
    """The rows of the input file: accepted, rejected (to ``rejected.csv``) and empty."""

    accepted_rows: int
    rejected_rows: int
    empty_rows: int


class RowQueries(FileRows):
    """A run asking the service once per row, resumable: the rows whose query failed (``failed``), the rows
    taken from an interrupted run's answers (``resumed_rows``) and the requests sent (``requests_sent``)."""

    failed: int
    resumed_rows: int
    requests_sent: int


class AddressQueries(RowQueries):
    """A run asking about every address of a file: the rows read (``input_rows``), and the addresses the
    service refused (HTTP 400) or does not know (``not_found``)."""

    input_rows: int
    refused: int
    not_found: int


class PostedBodies(RunResult):
    """A run posting the JSON bodies of a file, each once: the bodies read (``requests``), the bodies per
    status and the index file naming each body's outcome and files."""

    requests: int
    statuses: dict[str, int]
    index: str
