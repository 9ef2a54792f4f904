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


def quiet_console_tracebacks() -> None:
    """Strip tracebacks from the root console handlers that Prefect installs."""
    if os.environ.get("POSTFLOWS_TRACEBACKS") == "1":
        return
    from prefect.logging.configuration import setup_logging

    setup_logging()
    logging.getLogger("httpx").setLevel(logging.WARNING)
    for handler in logging.getLogger().handlers:
        if isinstance(handler, logging.StreamHandler) and not isinstance(
            handler.formatter, _NoTracebackFormatter
        ):
            handler.setFormatter(_NoTracebackFormatter(handler.formatter))
