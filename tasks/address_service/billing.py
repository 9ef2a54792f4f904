"""Whom the address service bills a batch or the individual queries to: the contract, or a client of it
named by its billing reference number."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Billing:
    """Whom the service bills a batch or the queries to: a client's billing reference number, with its
    identifier and name (``runbatchwithclient``, ``runquery2withclient``); none: the contract itself
    (``runbatch``, ``runquery2``).

    Attributes:
        reference: the billing reference number.
        client_identifier: the client's identifier (only with a reference).
        client_name: the client's name (only with a reference).
    """

    reference: str | None = None
    client_identifier: str | None = None
    client_name: str | None = None

    def arguments(self) -> dict[str, str | None]:
        """The billing as :meth:`AddressServiceClient.run_query` and ``run_batch`` take it."""
        return {
            "billing_reference": self.reference,
            "client_identifier": self.client_identifier,
            "client_name": self.client_name,
        }

    def fingerprint(self) -> object:
        """The billing in a query's fingerprint: the reference alone when no client is named (as answers
        kept before the client fields were sent were fingerprinted)."""
        if not (self.client_identifier or self.client_name):
            return self.reference
        return [self.reference, self.client_identifier, self.client_name]


CONTRACT = Billing()
"""Billed to the contract itself."""
