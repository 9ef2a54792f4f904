"""The secret filter is put on every logger while other threads make loggers: a flow's first look at its
settings must never fail because Prefect's threads made a logger at that moment."""

from __future__ import annotations

import gc
import logging
import threading
import time
from typing import Any

from runtime.logsetup import SecretFilter, install_secret_filter, swiss_log_times


def test_the_filter_goes_on_while_another_thread_makes_loggers() -> None:
    """Each collection lets the thread that makes loggers in (as a finalizer may, in a real process): a
    look at the registry that allocates as it iterates sees it change size under it."""
    for number in range(2000):
        logging.getLogger(f"tests.logsetup.made.{number}")
    stop = threading.Event()

    def make_loggers() -> None:
        number = 0
        while not stop.is_set():
            logging.getLogger(f"tests.logsetup.racing.{number}")
            number += 1
            time.sleep(0.0002)

    def let_others_in(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            time.sleep(0.0005)

    maker = threading.Thread(target=make_loggers)
    threshold = gc.get_threshold()
    gc.set_threshold(100)
    gc.callbacks.append(let_others_in)
    maker.start()
    try:
        for _ in range(50):
            install_secret_filter()  # raised "dictionary changed size during iteration" before
    finally:
        stop.set()
        maker.join()
        gc.callbacks.remove(let_others_in)
        gc.set_threshold(*threshold)
    made = logging.getLogger("postflows.tests.logsetup")
    install_secret_filter()
    assert any(isinstance(item, SecretFilter) for item in made.filters)


class _Kept(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(logging.Formatter("%(levelname)s %(message)s").format(record))


def _logged(error: Exception, level: int) -> list[str]:
    """What a run's logger writes for ``logger.exception(...)`` of ``error`` (as Prefect's engine logs the
    exception a flow ends with), the logger at ``level``."""
    logger = logging.getLogger("tests.logsetup.prefect.flow_runs")
    logger.filters, logger.handlers, logger.propagate = [SecretFilter()], [], False
    logger.setLevel(level)
    kept = _Kept()
    logger.addHandler(kept)
    try:
        raise error
    except Exception as exc:
        logger.exception("Encountered exception during execution: %r", exc)
    return kept.lines


def test_an_expected_error_is_one_line_and_its_traceback_is_debug() -> None:
    from fileio.errors import InputError

    lines = _logged(InputError("input file not found", path="/in/missing.csv"), logging.INFO)
    assert len(lines) == 1 and lines[0].startswith("ERROR Encountered exception during execution: ")
    assert "Traceback" not in lines[0] and "input file not found" in lines[0]

    debug = _logged(InputError("input file not found", path="/in/missing.csv"), logging.DEBUG)
    assert debug[0].startswith("DEBUG the traceback of the error above") and "Traceback" in debug[0]
    assert "Traceback" not in debug[1] and debug[1].startswith("ERROR ")


def test_an_unexpected_error_keeps_its_traceback() -> None:
    [line] = _logged(ZeroDivisionError("division by zero"), logging.INFO)
    assert line.startswith("ERROR ") and "Traceback (most recent call last)" in line


_SETUPS_COUNTED = """
import logging
import prefect.logging.configuration as configuration
from prefect import flow  # Prefect configures logging as it loads
from runtime.logsetup import quiet_console_tracebacks

setups = []
real = configuration.setup_logging
configuration.setup_logging = lambda *args, **kwargs: setups.append(1) or real(*args, **kwargs)
quiet_console_tracebacks()
consoles = [h for h in logging.getLogger().handlers if isinstance(h, logging.StreamHandler)]
quiet = all(type(h.formatter).__name__ == "_NoTracebackFormatter" for h in consoles)
print(len(setups), len(consoles), quiet)
"""


def test_a_command_keeps_the_logging_prefect_configured_and_quiets_its_console() -> None:
    """In a command's process Prefect has configured logging as it loaded: it is not configured a second
    time (a third of a second per command), and its console handler still loses the tracebacks."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _SETUPS_COUNTED], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["0", "1", "True"], done.stderr


def test_log_lines_give_swiss_time_as_the_run_names_do() -> None:
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(message)s", datefmt="%Y-%m-%d %H:%M"))
    logging.getLogger().addHandler(handler)
    try:
        swiss_log_times()
        summer = logging.makeLogRecord({"msg": "x", "created": 1782907200.0})  # 2026-07-01 12:00 UTC
        winter = logging.makeLogRecord({"msg": "x", "created": 1798804800.0})  # 2027-01-01 12:00 UTC
        assert handler.format(summer) == "2026-07-01 14:00 x"  # CEST
        assert handler.format(winter) == "2027-01-01 13:00 x"  # CET
    finally:
        logging.getLogger().removeHandler(handler)
