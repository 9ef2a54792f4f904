"""Logging for postflows processes: no log record carries a registered secret (:class:`SecretFilter`, on
the postflows and Prefect loggers and on every handler, the one that ships logs to the Prefect API
included); an expected error (one of ours, whose message says what went wrong and what to do) is logged in
one line, its traceback at DEBUG, wherever the run's log goes (the Prefect UI included); and for CLI runs
Prefect's log lines stay while tracebacks go only to the Prefect API log (and to the console when
``POSTFLOWS_TRACEBACKS=1``), so a failed command ends with its one-line reason.
"""

from __future__ import annotations

import datetime as dt
import logging
import time

from core import environment
from core.errors import PostflowsError
from core.redaction import redact
from core.swiss_time import SWISS_ZONE

# The loggers whose records are scrubbed where they are made, whatever handler takes them later.
SCRUBBED_LOGGERS = ("postflows", "prefect", "httpx", "distributed")


class SecretFilter(logging.Filter):
    """Scrubs every registered secret (:mod:`core.redaction`) from a record's message and traceback
    text, in place, so every handler after it sees the scrubbed record; never drops a record."""

    def filter(self, record: logging.LogRecord) -> bool:
        _brief_if_expected(record)
        try:
            message = record.getMessage()
            scrubbed = redact(message)
            if scrubbed != message:
                record.msg, record.args = scrubbed, None
            if record.exc_info and not record.exc_text:
                record.exc_text = logging.Formatter().formatException(record.exc_info)
            if record.exc_text:
                record.exc_text = redact(record.exc_text)
            if record.stack_info:
                record.stack_info = redact(record.stack_info)
        except Exception:  # noqa: BLE001 - a record that cannot be formatted is the handler's to report
            pass
        return True


_FILTER = SecretFilter()
TRACEBACK_NOTE = "the traceback of the error above"


def _brief_if_expected(record: logging.LogRecord) -> None:
    """An error record whose exception is one of ours loses its traceback, which goes to a DEBUG record of
    the same logger instead (written only where DEBUG is enabled); any other exception keeps it."""
    if record.levelno < logging.ERROR or not record.exc_info:
        return
    error = record.exc_info[1]
    if not isinstance(error, PostflowsError):
        return
    logger = logging.getLogger(record.name)
    if logger.isEnabledFor(logging.DEBUG):
        debug = logging.makeLogRecord(record.__dict__)
        debug.levelno, debug.levelname = logging.DEBUG, logging.getLevelName(logging.DEBUG)
        debug.msg, debug.args = TRACEBACK_NOTE, None
        logger.handle(debug)
    record.exc_info, record.exc_text = None, None


def install_secret_filter() -> None:
    """Put the :class:`SecretFilter` on every handler configured now (Prefect's console and API log handlers
    among them) and on the postflows, Prefect, httpx and Dask loggers and their children; a second call adds
    it where logging was configured anew since."""
    loggers = [logging.getLogger(), *(logging.getLogger(name) for name in SCRUBBED_LOGGERS), *_made_loggers()]
    for logger in loggers:
        if logger.name.split(".")[0] in SCRUBBED_LOGGERS and _FILTER not in logger.filters:
            logger.addFilter(_FILTER)
        for handler in logger.handlers:
            if _FILTER not in handler.filters:
                handler.addFilter(_FILTER)


def swiss_time_tuple(seconds: float | None) -> time.struct_time:
    """A moment as Swiss local time: the clock of the log lines, as the run names and reports read it."""
    return dt.datetime.fromtimestamp(time.time() if seconds is None else seconds, SWISS_ZONE).timetuple()


def swiss_log_times() -> None:
    """Write the time of every log line (the console's, a worker's) in Swiss time, the zone of the run
    names, whatever the machine's zone is."""
    loggers = [logging.getLogger(), *(logging.getLogger(name) for name in SCRUBBED_LOGGERS), *_made_loggers()]
    for handler in (handler for logger in loggers for handler in logger.handlers):
        formatter = handler.formatter
        if isinstance(formatter, _NoTracebackFormatter):
            formatter = formatter.inner
        if formatter is not None:
            formatter.converter = swiss_time_tuple


def _made_loggers() -> list[logging.Logger]:
    """Every logger made so far in this process.

    Any thread may make a logger at any moment (Prefect's do as a run starts), adding it to the logging
    module's registry. Iterating the registry (even ``list(registry.items())``) allocates as it goes, and an
    allocation may run the garbage collector and let another thread in: the registry then changes size
    under the iteration. ``dict.copy`` takes the whole registry in one step that runs no Python code and
    allocates no collected object, so no other thread gets in.
    """
    registry = logging.Logger.manager.loggerDict.copy()
    return [logger for logger in registry.values() if isinstance(logger, logging.Logger)]


class _NoTracebackFormatter(logging.Formatter):
    def __init__(self, inner: logging.Formatter | None) -> None:
        super().__init__()
        self.inner = inner or logging.Formatter()

    def format(self, record: logging.LogRecord) -> str:
        saved = record.exc_info, record.exc_text, record.stack_info
        record.exc_info, record.exc_text, record.stack_info = None, None, None
        try:
            return self.inner.format(record)
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
    """Scrub secrets from every log record, strip tracebacks from the root console handlers that Prefect
    installs, and drop its report of a run cancelled by Ctrl-C. Prefect's logging is configured where it
    is not yet (Prefect configures it as it loads; configuring it again costs a third of a second and keeps
    every handler as it is: a second configuration is incremental)."""
    from prefect.logging.configuration import ensure_logging_setup

    ensure_logging_setup()
    install_secret_filter()
    logging.getLogger("httpx").setLevel(logging.WARNING)
    tracebacks = environment.flag("tracebacks")
    for handler in logging.getLogger().handlers:
        if not isinstance(handler, logging.StreamHandler):
            continue
        if not any(isinstance(existing, _NoCancellationCrash) for existing in handler.filters):
            handler.addFilter(_NoCancellationCrash())
        if not tracebacks and not isinstance(handler.formatter, _NoTracebackFormatter):
            handler.setFormatter(_NoTracebackFormatter(handler.formatter))
    swiss_log_times()
