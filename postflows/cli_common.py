"""What every ``postflows`` sub-command shares: running a flow with one-line failures and exit codes,
printing the summary, and the options several commands take.

Exit codes: 0 success; 1 the work failed (the reason on one line); 2 bad usage, configuration, or input
that belongs to other recorded work (an error says so with its ``exit_code``); 130 interrupted.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Annotated, Any, NoReturn, TypeVar

import typer
from rich.text import Text

from connectors.errors import PostflowsError
from postflows.console import console, progress_bars
from postflows.logsetup import quiet_console_tracebacks
from postflows.wiring import ConfigurationError

T = TypeVar("T")
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
MAX_REASON = 2000

OutOpt = Annotated[Path, typer.Option("--out", "-o", help="Output directory")]
ResubmitOpt = Annotated[
    bool,
    typer.Option(
        "--resubmit",
        help="Send again although an earlier request may have reached the service (check first!)",
    ),
]


def run_work(work: Callable[[], Coroutine[Any, Any, T]], *, progress: bool = True) -> T:
    """Run a flow coroutine, turning any failure into a one-line reason and a non-zero exit code.

    The reason is printed as plain text (server text may hold brackets that look like markup) and never
    wrapped, whatever the terminal's width.
    """
    quiet_console_tracebacks()
    try:
        with progress_bars(progress and sys.stderr.isatty()):
            return asyncio.run(work())
    except ConfigurationError as error:
        fail("configuration error", error, EXIT_USAGE)
    except (PostflowsError, ValueError, OSError) as error:
        fail("failed", error, getattr(error, "exit_code", EXIT_FAILED))
    except KeyboardInterrupt:
        console.print(Text("cancelled", style="yellow"))
        raise typer.Exit(EXIT_INTERRUPTED) from None
    except Exception as error:  # noqa: BLE001 - the CLI promises one line, never a traceback
        fail("failed", error, EXIT_FAILED, name=True)


def fail(label: str, error: BaseException, code: int, *, name: bool = False) -> NoReturn:
    """Print ``label: reason`` on one plain line and exit with ``code``."""
    reason = one_line(error)
    if name:
        reason = f"{type(error).__name__}: {reason}"
    console.print(Text.assemble((f"{label}:", "red"), " ", reason), soft_wrap=True, overflow="ignore")
    raise typer.Exit(code) from None


def say(text: str, *, style: str | None = None) -> None:
    """One plain line on stderr, never read as markup, never wrapped."""
    console.print(Text(text, style=style or ""), soft_wrap=True, overflow="ignore")


def one_line(error: BaseException) -> str:
    """An error's text on one line, cut at :data:`MAX_REASON` characters."""
    text = " ".join(str(error).split()) or type(error).__name__
    return text if len(text) <= MAX_REASON else text[: MAX_REASON - 1] + "…"


def print_summary(summary: dict[str, Any]) -> None:
    """The run summary as JSON on stdout (progress and messages go to stderr), so it can be piped."""
    typer.echo(json.dumps(summary, default=str, indent=2, ensure_ascii=False))
