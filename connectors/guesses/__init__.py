"""The register of guesses: every place where a specification shows nothing, or is ambiguous, and the code had
to choose. Each entry says what the specification says, what we assume, what the client does when a service
answers otherwise (always the safe side: uncertain rather than final, an error naming the setting rather than
"no results"), the setting that changes it, what the sandbox answers when asked for the other plausible way
(``POSTFLOWS_SANDBOX_GUESSES=other``) and what ``postflows doctor --live`` observes of it without billing.

The sandbox marks every answer it invents with the ids of the entries it plays (header
:data:`GUESS_HEADER`); it knows the ids only as text, as the other side of the wire must. The docs page
"Guesses" is generated from :data:`GUESSES`.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from connectors.guesses.address_service import ADDRESS_SERVICE
from connectors.guesses.commerce import COMMERCE
from connectors.guesses.http import EVERY_API
from connectors.guesses.model import Guess, GuessApi
from connectors.guesses.newspaper import NEWSPAPER

GUESS_HEADER = "X-Sandbox-Guess"
"""The response header a sandbox answer carries: the ids of the guesses it plays, separated by commas."""

GUESSES: tuple[Guess, ...] = (*ADDRESS_SERVICE, *NEWSPAPER, *COMMERCE, *EVERY_API)
"""Every registered guess, by API."""

BY_ID: Mapping[str, Guess] = MappingProxyType({guess.id: guess for guess in GUESSES})


def guess(guess_id: str) -> Guess:
    """The registered guess ``guess_id``.

    Raises:
        KeyError: no guess of that id is registered.
    """
    return BY_ID[guess_id]


__all__ = ["BY_ID", "GUESSES", "GUESS_HEADER", "Guess", "GuessApi", "guess"]
