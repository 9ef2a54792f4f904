"""The message codes of the newspaper API (§7): what each means, which of them do not say that nothing was
kept, and where a code stands in a message's text.
"""

from __future__ import annotations

import re

MESSAGE_CODES: dict[str, str] = {
    "0000": "function not available yet",
    "0001": "user has no authorization for the newspaper number",
    "0002": "newspaper number not found",
    "0003": "newspaper uses no sort file and cannot be transmitted via the API",
    "0004": "cash payment required for this issue before processing",
    "0005": "invalid date format or issue date in the past",
    "0006": "postcode not permitted as acceptance point; permitted list given",
    "0007": "issue number previously used for another issue",
    "0008": "wrong issue number: 'Issue number to' must be greater than the issue number",
    "0009": "issue number not permitted",
    "0020": "district bundles not possible for this newspaper",
    "0021": "locality bundles not possible for this newspaper",
    "0022": "other bundles not possible for this newspaper",
    "0023": "unaddressed copies not possible",
    "0024": "military copies not possible",
    "0030": "permitted weight range (grams) violated for district bundles",
    "0031": "permitted weight range (grams) violated for locality bundles",
    "0032": "permitted weight range (grams) violated for other bundles",
    "0033": "permitted weight range (grams) violated for unaddressed copies",
    "0034": "permitted weight range (grams) violated for military copies",
    "0040": "Monday-Friday large print run not possible",
    "0041": "Saturday large print run not possible",
    "0042": "weight range violated for Monday-Friday large print runs",
    "0043": "weight range violated for Saturday large print runs",
    "0050": "number of inserts greater than number of newspaper copies",
    "0051": "insert description too long (maximum characters given)",
    "0052": "insert lighter than newspaper not possible",
    "0053": "insert heavier than newspaper not possible",
    "0054": "weight range violated for inserts lighter than the newspaper",
    "0055": "weight range violated for inserts heavier than the newspaper",
    "0070": "unsorted copies not possible",
    "0071": "unsorted military copies not possible",
    "0072": "weight range violated for unsorted copies",
    "0073": "weight range violated for unsorted military copies",
    "0100": "no distribution list available for this newspaper",
    "0101": "distribution list invalid",
    "0102": "gratis newspaper of location category A not possible",
    "0103": "gratis newspaper of location category B not possible",
    "0104": "gratis newspaper of location category C not possible",
    "0105": "weight range violated for gratis location category A",
    "0106": "weight range violated for gratis location category B",
    "0107": "weight range violated for gratis location category C",
    "0110": "gratis insert lighter than newspaper not possible",
    "0111": "gratis insert heavier than newspaper not possible",
    "0150": "not a valid international product",
    "0151": "no country found for ISO code",
    "0152": "comment too long (maximum characters given)",
    "0153": "category/tariff group and ISO code with a dynamically defined message",
    "0170": "no list price for Economy product permitted for the country",
    "0171": "no list price for Priority product permitted for the country",
    "0172": "no contract price for Economy product permitted for the country",
    "0173": "no contract price for Priority product permitted for the country",
    "0174": "weight range violated for international Economy (list price)",
    "0175": "weight range violated for international Priority (list price)",
    "0176": "weight range violated for international Economy (contract price)",
    "0177": "weight range violated for international Priority (contract price)",
    "0200": "statistics cannot be processed",
}

UNCERTAIN_CODES: dict[str, str] = {
    "0004": "cash payment required before processing: the order may wait for its payment",
    "0007": "issue number previously used for another issue: that issue may be this order, sent before",
}
"""The §7 codes on the list of refusals that do not say that nothing was kept, with why."""

NOT_PROCESSED_CODES = frozenset(MESSAGE_CODES) - frozenset(UNCERTAIN_CODES)
"""The message codes that mean the service refused a request without processing it: every code of §7 but
those of :data:`UNCERTAIN_CODES`."""

# A §7 code stands in a message's text as a word of four digits, not as part of a longer number (12345,
# 1.0030, 2'0030).
_CODE_IN_TEXT = re.compile(r"(?<!\w)(?<!\d[.,'])(\d{4})(?!\w)(?![.,']\d)")


def meaning_of(code: str | None) -> str:
    """The §7 meaning of a message code, or "" for an unknown or missing code."""
    return MESSAGE_CODES.get(code or "", "")


def codes_in_text(text: str) -> tuple[str, ...]:
    """The §7 codes a message's text carries, wherever they stand, in order: each a word of four digits
    that is no part of a longer number and is in the §7 table ("Error 0030: weight", "weight range
    violated (code 0030)", "0030 weight"); other four-digit numbers (a year, a weight) are not codes."""
    found = (match.group(1) for match in _CODE_IN_TEXT.finditer(text))
    return tuple(dict.fromkeys(code for code in found if code in MESSAGE_CODES))
