"""A Prefect Block holding the services' credentials and the run history's database password, for
deployments whose workers have no environment of ours: ``POSTFLOWS_CREDENTIALS_BLOCK=<name>`` fills every
credential the environment leaves unset. ``postflows deploy`` saves the secrets it is given here
(:func:`save_credentials`) and names the block in the deployments' job variables.
"""

from __future__ import annotations

from typing import Any

from prefect.blocks.core import Block
from pydantic import Field, SecretStr

from runtime.settings.apis import CREDENTIAL_FIELDS


class PostflowsCredentials(Block):
    """Credentials of the postal APIs (secrets are stored encrypted by Prefect and shown masked)."""

    _block_type_name = "Postflows Credentials"
    _block_type_slug = "postflows-credentials"

    address_service_user: str | None = Field(
        default=None, description="Technical user of the address web service"
    )
    address_service_password: SecretStr | None = Field(default=None, description="Its password")
    newspaper_client_id: str | None = Field(default=None, description="OAuth client id of the newspaper API")
    newspaper_client_secret: SecretStr | None = Field(default=None, description="OAuth client secret")
    commerce_client_id: str | None = Field(default=None, description="OAuth client id of the commerce API")
    commerce_client_secret: SecretStr | None = Field(default=None, description="Its client secret")
    database_password: SecretStr | None = Field(
        default=None, description="Password of the run history's database (POSTFLOWS_DATABASE_URL names none)"
    )


def load_credentials(name: str) -> dict[str, Any]:
    """The non-empty credential values of the block ``name``."""
    # `_sync` forces the blocking variant even inside a running event loop (flows are async).
    block = PostflowsCredentials.load(name, _sync=True)  # type: ignore[call-arg]
    values = {field: getattr(block, field) for field in CREDENTIAL_FIELDS}
    return {field: value for field, value in values.items() if value not in (None, "")}


def save_credentials(name: str, given: dict[str, Any]) -> None:
    """Save ``given`` (credential fields: their values) into the block ``name``, over what it holds."""
    try:
        block = PostflowsCredentials.load(name, _sync=True)  # type: ignore[call-arg]
    except ValueError:  # no block of that name yet
        block = PostflowsCredentials()
    for field, value in given.items():
        setattr(block, field, value)
    block.save(name, overwrite=True, _sync=True)  # type: ignore[union-attr]
