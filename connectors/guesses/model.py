"""What one registered guess says (see :mod:`connectors.guesses`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

GuessApi = Literal["address-service", "newspaper", "commerce", "every API"]


@dataclass(frozen=True)
class Guess:
    """One choice the code made where a specification shows nothing.

    Attributes:
        id: stable name, ``<api>.<subject>``; the sandbox's marks and the docs use it.
        api: the API the guess is about.
        spec: where the specification speaks of it, and its words ("not shown" where it is silent).
        assumption: what we assume: what the client sends and what it reads first.
        otherwise: what the client does when a service answers otherwise.
        setting: the setting (or option) that changes the choice; "" when every plausible answer is read as
            it is and nothing needs to be set.
        other_answer: what the sandbox answers under ``POSTFLOWS_SANDBOX_GUESSES=other``.
        live_check: what ``postflows doctor --live`` sees of it without billing anything or leaving anything
            behind; "" when it cannot be observed that way.
    """

    id: str
    api: GuessApi
    spec: str
    assumption: str
    otherwise: str
    setting: str
    other_answer: str
    live_check: str = ""

    @property
    def observable(self) -> bool:
        """Whether ``postflows doctor --live`` can observe this guess without billing."""
        return bool(self.live_check)
