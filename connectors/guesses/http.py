"""The registered guesses of the HTTP layer every API shares (see :mod:`connectors.guesses`)."""

from __future__ import annotations

from connectors.guesses.model import Guess

EVERY_API: tuple[Guess, ...] = (
    Guess(
        id="http.429-not-processed",
        api="every API",
        spec='Rate limits: "not shown" in all three specifications',
        assumption="HTTP 429 comes from a rate limiter in front of the service, before any work (RFC 6585)",
        otherwise="429 is retried after Retry-After and a submission sent again",
        setting="`POSTFLOWS_HTTP_429_NOT_PROCESSED`",
        other_answer="429 without Retry-After",
    ),
)
