"""A watch on the guesses the sandbox plays during the suite: every answer it invents is marked with the ids
of the guesses it plays (``sandbox.guesses``), and each process of the suite, the commands and servers it
starts included, appends them to one log (``POSTFLOWS_SANDBOX_GUESS_LOG``). At the end every id seen must be
one of the register's (``connectors.guesses``): an answer the sandbox invents without a registered guess
fails the run."""

from __future__ import annotations

import tempfile
from collections import Counter
from pathlib import Path

from sandbox.guesses import GUESS_LOG_VARIABLE

LOG = Path(tempfile.mkdtemp(prefix="postflows-guesses-")) / "played.log"


def environment() -> dict[str, str]:
    """The variable that makes every sandbox of this process and its children log the guesses it plays."""
    return {GUESS_LOG_VARIABLE: str(LOG)}


def played() -> Counter[str]:
    """How often each guess id was played so far."""
    if not LOG.is_file():
        return Counter()
    return Counter(line.strip() for line in LOG.read_text(encoding="utf-8").splitlines() if line.strip())


def unregistered(ids: Counter[str]) -> list[str]:
    """The ids among ``ids`` that the register of guesses does not hold."""
    from connectors.guesses import BY_ID

    return sorted(guess_id for guess_id in ids if guess_id not in BY_ID)
