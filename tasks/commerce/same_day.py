"""The same-day acceptance points of an address (§2.8: a GET carrying a JSON body, at the configured path):
the answer, one table row per product and drop-off point, the files and the readable summary.

The answer may be long (§2.8): it is read within the response limit every answer has
(``POSTFLOWS_RESPONSE_MAX_BYTES``; a longer one fails the run naming the setting), every point goes to the
files, and the summary shows the first :data:`SHOWN_POINTS`. A 404 is the service's "no results" (§7): the
run completes with no points, says ``no results (404)`` with the service's words, and notes that the path is
a guess (the spec shows none, and at a wrong path the service answers 404 as well) which ``postflows doctor
--live`` checks. A 405 (no GET at the path) fails the run naming the path's setting.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from connectors.commerce import CommerceClient, DeliveryAddress, SameDayAcceptance, SameDayRequest, Zip
from connectors.commerce.models import DeliveryHouse, DeliveryLocation, DropOff
from connectors.errors import NotFound
from connectors.paths import PATH_SETTINGS
from fileio.lazy import lazy_module
from fileio.reports import DEFAULT_CSV_STYLE, CsvStyle, markdown_table, write_csv
from fileio.sandbox_marks import with_banner
from fileio.workbooks import write_xlsx
from tasks.retrying import idempotent_step

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")

POINT_COLUMNS: tuple[str, ...] = (
    "productCode",
    "description",
    "street",
    "streetNumber",
    "zip",
    "city",
    "lastDropOffTime",
    "technicalZip",
)
SHOWN_POINTS = 50
FILE_STEM = "acceptance-points"
NO_RESULTS = "no results (404)"


@dataclass(frozen=True)
class AcceptanceAnswer:
    """What the service answered: the acceptance points, or (404) no results and its words.

    Attributes:
        answer: the answer; None when the service answered 404.
        no_results: ``no results (404)`` and the 404's text; None when there is an answer.
        path_guess: after a 404, the note that the path asked is a guess (a wrong one answers 404 too).
    """

    answer: SameDayAcceptance | None
    no_results: str | None = None
    path_guess: str | None = None

    def as_received(self) -> dict[str, Any] | None:
        """The answer's fields as the service sent them (unknown fields kept)."""
        if self.answer is None:
            return None
        return self.answer.model_dump(mode="json", by_alias=True, exclude_unset=True)


def acceptance_request(
    *, zip_code: str, city: str | None, street: str | None, house_number: str | None, day: dt.date
) -> SameDayRequest:
    """The request of §2.8 (the parts not given are left out of its body)."""
    return SameDayRequest(
        address=DeliveryAddress(
            geographic_location=DeliveryLocation(
                house=DeliveryHouse(street=street, house_number=house_number),
                zip=Zip(zip=zip_code, city=city),
            )
        ),
        delivery_date=day,
    )


@idempotent_step("commerce-same-day-acceptance-points")
async def fetch_acceptance_points(client: CommerceClient, request: SameDayRequest) -> AcceptanceAnswer:
    """Ask for the same-day acceptance points of ``request``; a 404 is no results (§7), noted as an answer
    at a guessed path.

    Raises:
        GuessedPathNotFound: the service takes no GET at the path (405).
    """
    try:
        return AcceptanceAnswer(await client.same_day_acceptance_points(request))
    except NotFound as error:
        return AcceptanceAnswer(None, f"{NO_RESULTS}: {error}", path_guess_note(client.paths.same_day))


def path_guess_note(path: str) -> str:
    """What a 404 at ``path`` leaves open: the specification shows no path, and at a wrong one the service
    answers 404 as well."""
    return (
        f"the path {path} ({PATH_SETTINGS['same_day']}) is a guess: the specification shows none, and at a "
        "wrong path the service answers 404 as well; `postflows doctor --live` checks it"
    )


def acceptance_table(answer: SameDayAcceptance | None) -> pd.DataFrame:
    """One row per product (its codes as sent: one result may hold several) and drop-off point."""
    rows: list[dict[str, Any]] = []
    for result in answer.results if answer is not None else ():
        drop_offs: list[DropOff | None] = list(result.drop_off_info) or [None]
        for drop_off in drop_offs:
            point = drop_off.drop_off_point if drop_off is not None else None
            place = point.zip if point is not None else None
            rows.append(
                {
                    "productCode": ", ".join(result.product_codes) or result.product_code,
                    "description": point.description if point else None,
                    "street": point.street if point else None,
                    "streetNumber": point.street_number if point else None,
                    "zip": place.zip if place else None,
                    "city": place.city if place else None,
                    "lastDropOffTime": drop_off.last_drop_off_time if drop_off else None,
                    "technicalZip": point.technical_zip if point else None,
                }
            )
    return pd.DataFrame(rows, columns=list(POINT_COLUMNS), dtype=object)


def write_acceptance(
    table: pd.DataFrame, output_dir: Path, *, csv_style: CsvStyle = DEFAULT_CSV_STYLE, sandbox: bool = False
) -> list[Path]:
    """Write ``acceptance-points.csv`` (in ``csv_style``) and ``acceptance-points.xlsx`` (after a
    ``sandbox`` run, its banner sheet first)."""
    return [
        write_csv(table, output_dir / f"{FILE_STEM}.csv", style=csv_style),
        write_xlsx(
            output_dir / f"{FILE_STEM}.xlsx", with_banner({"Acceptance points": table}, sandbox=sandbox)
        ),
    ]


def acceptance_markdown(title: str, found: AcceptanceAnswer, table: pd.DataFrame) -> str:
    """The answer as markdown: its quality and counts, then the first :data:`SHOWN_POINTS` rows."""
    if found.answer is None:
        note = f"\n> Note: {found.path_guess}\n" if found.path_guess else ""
        return f"# {title}\n\nNo acceptance points: {found.no_results}\n{note}"
    quality = found.answer.quality
    facts = pd.DataFrame(
        [
            ("quality", str(quality) if quality is not None else ""),
            ("products", len(found.answer.results)),
            ("drop-off points", len(table)),
        ],
        columns=["what", "count"],
    )
    report = f"# {title}\n\n{markdown_table(facts)}\n\n## Acceptance points\n\n"
    report += (markdown_table(table, max_rows=SHOWN_POINTS) if len(table) else "_none_") + "\n"
    return report
