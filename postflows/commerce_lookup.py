"""Quick look-ups of the commerce API for the CLI: zips, streets and house numbers, the signed-in user's
addresses and profile, printed as tables or JSON; and the assistant, which queries as the user types.

The assistant honours the spec's advice for auto-completion (§8): it waits until the input has been still
for 300 ms before it asks, and shows an answer only if it belongs to the latest input (answers that arrive
out of order are dropped).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterable, Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from core.json_text import json_text

if TYPE_CHECKING:
    # Imported where used: ``postflows --help`` imports this module for DEBOUNCE_S.
    from pydantic import BaseModel
    from rich.console import Console

T = TypeVar("T")

DEBOUNCE_S = 0.3


class LatestOnly(Generic[T]):
    """Debounced queries: :meth:`typed` restarts a ``delay`` timer; when it runs out the query runs, and
    its answer reaches ``show`` only if no newer input arrived meanwhile."""

    def __init__(
        self,
        query: Callable[[str], Awaitable[T]],
        show: Callable[[str, T], None],
        *,
        delay: float = DEBOUNCE_S,
    ) -> None:
        self._query = query
        self._show = show
        self.delay = delay
        self._generation = 0
        self._pending: asyncio.Task[None] | None = None
        self.sent: list[str] = []

    def typed(self, text: str) -> None:
        self._generation += 1
        if self._pending is not None:
            self._pending.cancel()
        self._pending = asyncio.create_task(self._later(text, self._generation))

    async def settle(self) -> None:
        """Wait for the last input's query (if it is still due)."""
        while self._pending is not None and not self._pending.done():
            await asyncio.gather(self._pending, return_exceptions=True)

    async def _later(self, text: str, generation: int) -> None:
        await asyncio.sleep(self.delay)
        self.sent.append(text)
        answer = await self._query(text)
        if generation == self._generation:
            self._show(text, answer)


async def assist(
    lines: AsyncIterable[str],
    query: Callable[[str], Awaitable[T]],
    show: Callable[[str, T], None],
    *,
    delay: float = DEBOUNCE_S,
) -> list[str]:
    """Feed each input line (the text typed so far) to a :class:`LatestOnly`; the terms actually sent."""
    latest: LatestOnly[T] = LatestOnly(query, show, delay=delay)
    async for line in lines:
        text = line.strip()
        if text:
            latest.typed(text)
    await latest.settle()
    return latest.sent


def render_strings(
    title: str, values: Sequence[str], *, as_json: bool, console: Console | None = None
) -> None:
    from rich.table import Table

    from postflows.console import output_console

    console = console or output_console()
    if as_json:
        console.print_json(json_text(list(values)))
        return
    table = Table(title=f"{len(values)} {title}")
    table.add_column(title.rstrip("s"), no_wrap=True)
    for value in values:
        table.add_row(value)
    console.print(table)


def render_models(
    title: str,
    items: Sequence[BaseModel],
    columns: Sequence[tuple[str, Callable[[Any], object]]],
    *,
    as_json: bool,
    console: Console | None = None,
) -> None:
    from rich.table import Table

    from postflows.console import output_console

    console = console or output_console()
    if as_json:
        console.print_json(
            json_text([item.model_dump(mode="json", by_alias=True, exclude_none=True) for item in items])
        )
        return
    table = Table(title=f"{len(items)} {title}")
    for name, _ in columns:
        table.add_column(name, no_wrap=True)
    for item in items:
        table.add_row(*("" if (value := get(item)) is None else str(value) for _, get in columns))
    console.print(table)
