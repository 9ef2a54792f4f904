"""The requests of the address web service's flows."""

from __future__ import annotations

from typing import Annotated, Any

from flows.forms import Blank, Separator
from flows.requests.base import WORK, RequestPart, flag, option
from flows.requests.common import (
    AddressTable,
    BillingOptions,
    Concurrency,
    KeyedWork,
    PollingOptions,
    Resubmission,
    WriteBack,
)


class AddressBatchRequest(Resubmission, KeyedWork, BillingOptions, WriteBack, AddressTable):
    """What an address batch aligns, and how: the file, its reading, the agreed alignment and the billing."""

    profile: Annotated[Blank[str], flag("--profile")] = option(
        "Alignment profile",
        "The agreed alignment: a built-in profile (postflows profiles: standard, legacy-de) or a YAML file "
        "on the worker. Empty: the POSTFLOWS_ADDRESS_SERVICE_PROFILE setting.",
        None,
        blank="",
    )
    upload_delimiter: Annotated[Separator, flag("--upload-delimiter", takes="escaped")] = option(
        "Upload separator",
        "Field separator of the file sent to the service. Empty: tab, or the profile's. Write tab or \\t for "
        "a tab.",
        None,
        blank="",
    )
    upload_encoding: Annotated[Blank[str], flag("--upload-encoding")] = option(
        "Upload encoding",
        "Encoding of the file sent to the service. Empty: Windows-1252 (cp1252), or the profile's.",
        None,
        blank="",
    )
    dry_run: Annotated[bool, flag("--dry-run")] = option(
        "Dry run", "Write the upload file and plan.json into the output folder; send nothing.", False
    )


BATCH_POLLING = PollingOptions(min_poll_interval_s=1.0)
"""A batch job is checked after a second first: the service answers small jobs that fast."""


QUERY_TIMEOUT_MAX_MS = 25_000
"""The longest service-side timeout of one query: below the HTTP timeout of 30 s, so the service answers
(Status or result) before the connection gives up on it."""


class AddressQueryRequest(Resubmission, Concurrency, BillingOptions, AddressTable):
    """What the individual queries check: the file, its reading, the billing, how many at once, and whether
    the rows whose earlier query is uncertain (it may have been billed) are asked again."""

    timeout_ms: Annotated[int, WORK] = option(
        "Query timeout (ms)",
        f"The service-side timeout of one query, at most {QUERY_TIMEOUT_MAX_MS} (below the HTTP timeout).",
        10000,
        ge=1,
        le=QUERY_TIMEOUT_MAX_MS,
    )

    def identity(self) -> dict[str, Any]:
        """The work's fields; the client's identifier and name only when given, so that the key of work
        billed to a reference alone stays what it was before they could be given."""
        work = super().identity()
        for name in ("client_identifier", "client_name"):
            if work.get(name) is None:
                work.pop(name, None)
        return work


CLEANUP_AGE_HOURS = 7 * 24.0
"""The age past which the clean-up deletes a recorded remote file by default (a week)."""


class CleanupRequest(RequestPart):
    """Which recorded remote files of the address service the clean-up deletes."""

    older_than_hours: Annotated[float, flag("--older-than", takes="duration", unset=True)] = option(
        "Older than (hours)",
        "Delete the recorded remote files created more than this many hours ago (168 = a week); 0 takes "
        "every recorded file not deleted yet, whatever its age. A file an earlier delete left on the "
        "service is asked for again whatever its age.",
        CLEANUP_AGE_HOURS,
        ge=0,
    )
    force: Annotated[bool, flag("--force")] = option(
        "Delete owed results too",
        "Also delete the files of batch jobs whose result has not been downloaded yet or that may still run; "
        "their results are lost.",
        False,
    )
