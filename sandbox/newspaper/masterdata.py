"""Newspaper master data and gratis distribution data of the sandbox (scopes SUBMISSION_NEWSPAPERS and
SUBMISSION_DISTRIBUTION): newspaper summary, distribution list and black list.

A number the customer does not own is ``0001``, an unknown one ``0002`` and a newspaper without
distribution list (not gratis) ``0100`` — each on HTTP 400 in the message envelope.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from sandbox.newspaper.messages import NewspaperRejection, message
from sandbox.newspaper.order_rules import customer_newspaper
from sandbox.newspaper.reference import ReferenceNewspaper, black_list, distribution_list

SUBMISSION = "/logistics/newspaper/submission/v1"


def _gratis_newspaper(number: str) -> ReferenceNewspaper:
    paper = customer_newspaper(number)
    if not paper.gratis or not paper.distribution:
        raise NewspaperRejection(400, [message("0100", number)])
    return paper


def create_newspapers_router() -> APIRouter:
    """GET newspapers/{newspaperNumber}/summary."""
    router = APIRouter(prefix=SUBMISSION)

    @router.get("/newspapers/{newspaper_number}/summary")
    def newspaper_summary(newspaper_number: str) -> dict[str, Any]:
        return customer_newspaper(newspaper_number).summary()

    return router


def create_distribution_router() -> APIRouter:
    """GET distribution-list and black-list of a gratis newspaper."""
    router = APIRouter(prefix=f"{SUBMISSION}/distribution/newspapers")

    @router.get("/{newspaper_number}/distribution-list")
    def newspaper_distribution_list(newspaper_number: str) -> dict[str, Any]:
        return distribution_list(_gratis_newspaper(newspaper_number))

    @router.get("/{newspaper_number}/black-list")
    def newspaper_black_list(newspaper_number: str) -> dict[str, Any]:
        return black_list(_gratis_newspaper(newspaper_number))

    return router
