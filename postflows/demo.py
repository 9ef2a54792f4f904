"""``postflows demo``: the address batch on the bundled example file, against the embedded sandbox."""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

from rich.text import Text
from sqlalchemy.engine import make_url

from postflows.console import console
from runtime.settings import get_settings

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "address-batch.csv"
# The address service URL in its flat and its nested spelling.
SERVICE_URL_VARIABLES = frozenset({"POSTFLOWS_ADDRESS_SERVICE_URL", "POSTFLOWS_ADDRESS_SERVICE__URL"})
RESULT_FILES = frozenset(
    {
        "results.csv",
        "results.xlsx",
        "moves.csv",
        "moves.txt",
        "review.xlsx",
        "writeback-sandbox.csv",
        "qstat.png",
    }
)


def example_input() -> Path:
    if EXAMPLE.is_file():
        return EXAMPLE
    return Path(str(resources.files("examples") / "address-batch.csv"))  # pragma: no cover - installed wheel


def run_demo(output_dir: Path) -> None:
    """Run the demo and say where the results, the history database and the run are."""
    from flows.address_batch import address_batch
    from flows.address_results import AddressBatchResult
    from flows.requests import AddressBatchRequest, OutputOptions, PollingOptions
    from postflows.cli_common import run_flow

    if get_settings().address_service.url:
        console.print(
            "[yellow]POSTFLOWS_ADDRESS_SERVICE_URL is set; the demo uses the embedded sandbox regardless[/]",
            soft_wrap=True,
        )
    for name in [name for name in os.environ if name.upper() in SERVICE_URL_VARIABLES]:
        os.environ.pop(name)
    # An empty URL in the environment also wins over one in .env: the demo's runs go to the sandbox.
    os.environ["POSTFLOWS_ADDRESS_SERVICE_URL"] = ""
    os.environ.setdefault("POSTFLOWS_SANDBOX_JOB_SECONDS", "3")
    settings = get_settings()
    console.print(f"demo input: {example_input()}")
    summary = run_flow(
        lambda: address_batch(
            request=AddressBatchRequest(input_path=example_input(), idempotency_key=f"demo:{os.getpid()}"),
            output=OutputOptions(output_dir=output_dir),
            polling=PollingOptions(min_poll_interval_s=0.5),
        )
    )
    # The demo is no dry run, and no deployment run: its wait never parks.
    assert isinstance(summary, AddressBatchResult)
    console.print()
    console.print("[bold green]demo finished[/]")
    lines = [
        f"rows: {summary.accepted_rows} accepted, {summary.rejected_rows} rejected",
        f"QSTAT counts: {summary.qstat}",
        *(f"result file: {path}" for path in summary.files if Path(path).name in RESULT_FILES),
        f"rejected rows: {output_dir / 'rejected.csv'}",
        f"summary: {output_dir / 'summary.md'}",
        f"run history: {make_url(settings.effective_database_url).render_as_string(hide_password=True)}",
        f"this run: postflows history {summary.run_id}",
    ]
    for line in lines:
        # Paths are never wrapped, on a terminal or in a pipe: a wrapped path cannot be copied.
        console.print(Text(f"  {line}"), soft_wrap=True, overflow="ignore")
