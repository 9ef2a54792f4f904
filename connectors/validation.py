"""Checks of values any API takes, before a request is built: an e-mail address that would be refused is
named with its reason (the newspaper API's notices and purchases, the commerce API's pickup users)."""

from __future__ import annotations


def email_problem(value: str) -> str | None:
    """Why ``value`` is not a valid e-mail address, or None; no DNS lookup. (email_validator compiles
    its grammar when imported: it is loaded by the first address checked, not by every API's client.)"""
    from email_validator import EmailNotValidError, validate_email

    try:
        validate_email(value, check_deliverability=False)
    except EmailNotValidError as exc:
        return f"{value!r} is not a valid e-mail address ({exc})"
    return None
