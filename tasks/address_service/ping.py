"""The ping that opens every batch and query run: one ``GET /ping`` before anything is uploaded or asked, so
a wrong address or wrong credentials end the run in a line instead of at the upload."""

from __future__ import annotations

from connectors.address_service import AddressServiceClient
from connectors.address_service.errors import AuthenticationStatusError
from connectors.errors import ApiError, AuthFailed
from core.errors import PostflowsError

CREDENTIAL_STATUSES = frozenset({101, 102, 103, 104})
"""The §7 Statuses of a ping that say our credentials are refused (user or key unknown, no role)."""


class PingFailed(PostflowsError):
    """The address web service did not answer its ping: nothing was uploaded or asked.

    ``exit_code`` is 2 when the service refused our credentials (HTTP 401 or 403, Status 101-104): the
    settings must change before a run can go on. Anything else (the service unreachable, another answer)
    exits 1.
    """

    def __init__(self, cause: ApiError) -> None:
        super().__init__(f"the address web service did not answer its ping: {cause}; nothing was sent")
        self.credentials_refused = isinstance(cause, AuthFailed) or (
            isinstance(cause, AuthenticationStatusError) and cause.status in CREDENTIAL_STATUSES
        )
        self.exit_code = 2 if self.credentials_refused else 1


async def ping_service(client: AddressServiceClient) -> None:
    """``GET /ping`` once (the connector retries a transient failure itself). A plain call, not a task run:
    it has no retries of its own to give, and a failure ends the flow run with the ping's message.

    An HTTP 200 is the answer whatever its body (§4.1 shows nothing more); a JSON body with a Status other
    than 0 is the service's refusal.

    Raises:
        PingFailed: the service did not answer the ping with HTTP 200, or its body named a Status other
            than 0.
    """
    try:
        await client.ping()
    except ApiError as error:
        raise PingFailed(error) from error
