"""The secret filter is put on every logger while other threads make loggers: a flow's first look at its
settings must never fail because Prefect's threads made a logger at that moment."""

from __future__ import annotations

import gc
import logging
import threading
import time
from typing import Any

from postflows.logsetup import SecretFilter, install_secret_filter


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
