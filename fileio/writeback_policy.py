"""Which of a service's corrections a write-back applies to the customer's own file."""

from __future__ import annotations

from typing import Literal

Policy = Literal["corrections", "moves", "all", "none"]
"""``corrections``: the spelling, postcode and town corrections of hits; ``moves``: the new address of a
person who moved; ``all``: both; ``none``: nothing (an unchanged copy)."""
