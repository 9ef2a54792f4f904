"""What the address web service's flows return: the batch's result (or its dry run's plan) and the
queries' result, with the input's counts and the results' counts they share.

The field names are the keys of the run summary (the printed JSON, the history's summary, the finished
event's payload); a count a run cannot give (a run without corrections, a sheet it did not choose) is
absent from the summary, as ``None`` here.
"""

from __future__ import annotations

from typing import Any

from flows.results import RunResult


class AddressInputResult(RunResult):
    """What the input's checks found: the rows accepted and rejected (rejected.csv), the street lines split
    into street and house number, and the worksheet the reader chose where it had to say so."""

    accepted_rows: int
    rejected_rows: int
    house_numbers_split: int
    sheet: str | None = None


class AddressResultCounts(AddressInputResult):
    """What the results hold: their rows, the rows per QSTAT code and, where the service says what it
    corrected, the rows corrected (in all and per kind) and the rows a human has to look at."""

    result_rows: int
    qstat: dict[str, int]
    corrected_rows: int | None = None
    corrections: dict[str, int] | None = None
    needs_human: int | None = None
    duplicates: dict[str, int] | None = None
    """Originals (K), duplicates (F) and their groups, counted from Double_DSTAT."""


class AddressBatchResult(AddressResultCounts):
    """An address batch done: its counts, the move notifications, the column a profile's record id came back
    in, and the copy of the input with the corrections written back (its path and counts, or why it was not
    written; absent where the results hold no corrections)."""

    moves: int
    record_id_returned_in: str | None = None
    writeback: dict[str, Any] | None = None


class AddressBatchPlan(AddressInputResult):
    """An address batch's dry run: nothing was sent; the upload file and plan.json say what would be, and
    ``problem`` why the results could not be merged (the embedded sandbox's reading of the upload)."""

    dry_run: bool = True
    upload: str
    plan: str
    record_id_returned_in: str | None = None
    problem: str | None = None


class AddressQueryResult(AddressResultCounts):
    """The address queries of a file: the rows whose query was refused (``failed_queries``: the next run
    asks them again) or is uncertain (``uncertain_rows``: asked again only with ``resubmit``), the queries
    sent, the rows answered by an earlier run's checkpoint and the uncertain rows asked again."""

    failed_queries: int
    uncertain_rows: int
    query_sends: int
    resumed_rows: int
    resubmitted_rows: int
