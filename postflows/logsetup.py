"""Console logging for CLI runs: Prefect's log lines stay, tracebacks go only to the Prefect API log (and to
the console when ``POSTFLOWS_TRACEBACKS=1``), so a failed command ends with its one-line reason.
"""

from __future__ import annotations

import logging
import os


class _NoTracebackFormatter(logging.Formatter):
    def __init__(self, inner: logging.Formatter | None) -> None:
        super().__init__()
        self._inner = inner or logging.Formatter()

    def format(self, record: logging.LogRecord) -> str:
        saved = record.exc_info, record.exc_text, record.stack_info
        record.exc_info, record.exc_text, record.stack_info = None, None, None
        try:
            return self._inner.format(record)
        finally:
            record.exc_info, record.exc_text, record.stack_info = saved


class _NoCancellationCrash(logging.Filter):
    """Drops, from the console, Prefect's report of a flow run cancelled under it ("Crash detected!
    Execution was cancelled by the runtime environment"): after Ctrl-C the command says in one line what was
    recorded and how to resume. The Prefect API log keeps the report."""

    def filter(self, record: logging.LogRecord) -> bool:
        return CANCELLED_BY_RUNTIME not in record.getMessage()


CANCELLED_BY_RUNTIME = "cancelled by the runtime environment"


def quiet_console_tracebacks() -> None:
    """Strip tracebacks from the root console handlers that Prefect installs, and its report of a run
    cancelled by Ctrl-C."""
    from prefect.logging.configuration import setup_logging

    setup_logging()
    logging.getLogger("httpx").setLevel(logging.WARNING)
    for handler in logging.getLogger().handlers:
        if not isinstance(handler, logging.StreamHandler):
            continue
        if not any(isinstance(existing, _NoCancellationCrash) for existing in handler.filters):
            handler.addFilter(_NoCancellationCrash())
        if os.environ.get("POSTFLOWS_TRACEBACKS") != "1" and not isinstance(
            handler.formatter, _NoTracebackFormatter
        ):
            handler.setFormatter(_NoTracebackFormatter(handler.formatter))
