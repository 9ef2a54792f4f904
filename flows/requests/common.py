"""The parts several flows' requests share: how long to wait for a remote job, where results go, whom a
job is billed to, the idempotency key and the resubmit switch, and how an address table is read."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from pydantic import ValidationInfo, field_validator

from fileio.writeback_policy import Policy
from flows.forms import (
    COLUMN_MAPPING,
    FIXED_WIDTHS,
    INPUT_ENCODING,
    INPUT_SEPARATOR,
    INPUT_SHEET,
    SPLIT_HOUSE_NUMBERS,
    Blank,
    Separator,
)
from flows.requests.base import WORK, RequestPart, argument, flag, option

LONGEST_CHECK_INTERVAL_S = 180.0
"""The longest wait between status checks by default (tasks.polling's, which this package cannot import:
the command line reads it before any task module loads; a test holds them equal)."""


class PollingOptions(RequestPart):
    """How long and how often a run checks its remote job."""

    max_wait_s: Annotated[float, flag("--max-wait")] = option(
        "Longest wait (s)",
        "Give up waiting for the remote job after this many seconds; a re-run resumes the wait.",
        3600.0,
        exclusiveMinimum=0,
    )
    min_poll_interval_s: Annotated[float, flag("--poll-interval")] = option(
        "First check interval (s)",
        "First (and shortest) wait between status checks, in seconds.",
        2.0,
        exclusiveMinimum=0,
    )
    max_poll_interval_s: float = option(
        "Longest check interval (s)",
        "Longest wait between status checks, in seconds.",
        LONGEST_CHECK_INTERVAL_S,
        exclusiveMinimum=0,
    )


class OutputOptions(RequestPart):
    """Where a run writes its results."""

    output_dir: Annotated[Path, flag("--out", "-o")] = option(
        "Output folder",
        "Folder on the worker for the results, rejected.csv and summary.md (and what else the run writes).",
    )


def _own_output_dir() -> Any:
    return option(
        "Output folder",
        "Folder on the worker for the results, the documents and summary.md. Empty: a folder of the run's "
        "own under the data dir (the flow's description names it).",
        None,
        blank="",
    )


class _FolderOfItsOwn(RequestPart):
    output_dir: Path | None

    def folder_or(self, default: Path) -> Path:
        """The output folder given, else the run's own ``default``."""
        return Path(self.output_dir) if self.output_dir is not None else default


class OwnOutputOptions(_FolderOfItsOwn):
    """Where a run writes its results, when the run has a folder of its own by default (the command line
    asks for one all the same)."""

    output_dir: Annotated[Blank[Path], flag("--out", "-o", required=True)] = _own_output_dir()


class OptionalOutputOptions(_FolderOfItsOwn):
    """Where a run writes its results, when the run has a folder of its own by default (on the command
    line too)."""

    output_dir: Annotated[Blank[Path], flag("--out", "-o")] = _own_output_dir()


class BillingReference(RequestPart):
    """Whom the service bills the requests to (its …withclient calls)."""

    billing_reference: Annotated[Blank[str], flag("--billing-ref"), WORK] = option(
        "Billing reference", "Bill the requests to this client's billing reference number.", None, blank=""
    )


class BillingOptions(BillingReference):
    """Whom the service bills the work to, with the client's identifier and name (runbatchwithclient,
    runquery2withclient)."""

    client_identifier: Annotated[Blank[str], flag("--client-id"), WORK] = option(
        "Client identifier", "The client's identifier, with a billing reference.", None, blank=""
    )
    client_name: Annotated[Blank[str], flag("--client-name"), WORK] = option(
        "Client name", "The client's name, with a billing reference.", None, blank=""
    )

    @field_validator("client_identifier", "client_name")
    @classmethod
    def _with_a_reference(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value and not info.data.get("billing_reference"):
            raise ValueError("a client's identifier and name are sent only with a billing reference number")
        return value


class Resubmission(RequestPart):
    """The switch that sends a side-effecting request again."""

    resubmit: Annotated[bool, flag("--resubmit")] = option(
        "Send again",
        "Send again although an earlier request of this work may have reached the service (check first!).",
        False,
    )


class WriteBack(RequestPart):
    """Which of the service's corrections go back into the copy of the customer's own file."""

    apply: Annotated[Policy, flag("--apply")] = option(
        "Write back",
        "Which values go into writeback.<ext>, the copy of your file in its own layout: corrections (the "
        "spelling, postcode and town corrections of hits whose CorrectionType requires a correction), moves "
        "(the new address of a person who moved), all, or none (an unchanged copy). Every other value the "
        "service has otherwise stays as you gave it and is listed in writeback-skipped.csv.",
        "corrections",
    )


class KeyedWork(RequestPart):
    """The name a run gives its work, instead of the hash of what it sends."""

    idempotency_key: Annotated[Blank[str], flag("--key")] = option(
        "Idempotency key",
        "Identifies this work. Empty: a hash of what is sent, with the service and its user. A run with the "
        "same key resumes the recorded work instead of starting it a second time.",
        None,
        blank="",
    )


class TableReading(RequestPart):
    """How a table file is read: a text file's separator and encoding, a workbook's sheet."""

    input_delimiter: Annotated[Separator, flag("--delimiter", takes="escaped")] = option(
        "Input separator", INPUT_SEPARATOR, None, blank=""
    )
    input_encoding: Annotated[Blank[str], flag("--encoding")] = option(
        "Input encoding", INPUT_ENCODING, None, blank=""
    )
    input_sheet: Annotated[Blank[str], flag("--sheet")] = option("Worksheet", INPUT_SHEET, None, blank="")


class AddressFile(RequestPart):
    """An address file on the worker, for the address web service."""

    input_path: Annotated[Path, argument("input_path")] = option(
        "Address file", "The address file on the worker: .csv, .xlsx or a fixed-width .txt."
    )


class AddressTable(TableReading, AddressFile):
    """An address file on the worker and how to read it: its header mapped to the address fields, a
    fixed-width file's columns, and house numbers split from the street."""

    column_mapping: Annotated[Blank[dict[str, str]], flag("--map", takes="pairs"), WORK] = option(
        "Column mapping", COLUMN_MAPPING, None, blank={}
    )
    fixed_widths: Annotated[Blank[dict[str, int]], flag("--fixed-widths", takes="widths")] = option(
        "Fixed widths", FIXED_WIDTHS, None, blank={}
    )
    split_house_numbers: Annotated[bool, flag("--split/--no-split"), WORK] = option(
        "Split house numbers", SPLIT_HOUSE_NUMBERS, True
    )


Concurrent = Annotated[int, flag("--concurrency")]
"""How many requests a row-by-row flow has in flight at once, on the command line ``--concurrency``."""


def concurrency(default: int) -> Any:
    """The field of :data:`Concurrent` with a flow's own default."""
    return option("Requests at once", "Requests in flight at the same time.", default, ge=1, maximum=64)


class Concurrency(RequestPart):
    """How many requests a row-by-row flow has in flight at once."""

    concurrency: Concurrent = concurrency(8)
