"""The settings of each postal API, one model per API: where it is, its credentials and how it is used.

A field's variable is ``POSTFLOWS_<API>_<FIELD>`` (``POSTFLOWS_COMMERCE_URL``) unless its
``json_schema_extra`` names another (``variable``, or ``variables`` per field of a connector's own model
such as :class:`~connectors.paths.CommercePaths`); ``POSTFLOWS_<API>__<FIELD>`` sets it too
(:mod:`runtime.settings.variables`).
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

from connectors.paths import PATH_SETTINGS, CommercePaths, CommerceScopes
from core.environment import PREFIX

DEFAULT_LOGIN_SCOPES = "openid profile email address phone DCAPI_ADDRESS_READ"
DEFAULT_LABEL_PDF_FIELD = "item.label"
# The settings a Postflows Credentials block may fill (runtime.blocks).
CREDENTIAL_FIELDS = (
    "address_service_user",
    "address_service_password",
    "newspaper_client_id",
    "newspaper_client_secret",
    "commerce_client_id",
    "commerce_client_secret",
    "database_password",
)


class AddressServiceSettings(BaseModel):
    """The address web service (``POSTFLOWS_ADDRESS_SERVICE_*``)."""

    model_config = ConfigDict(extra="ignore")

    url: str | None = Field(
        default=None, description="Base address ending in REST/v1; unset = embedded sandbox"
    )
    user: str | None = Field(
        default=None, description="Technical user of the address web service (HTTP Basic, sent pre-emptively)"
    )
    password: SecretStr | None = Field(default=None, description="Password of the technical user")
    assistant_url: str | None = Field(
        default=None,
        description="Base address of the address assistant (autocomplete, building verification), ending "
        "in REST/v1: its production address, as the assistant has no test environment; needed once "
        "POSTFLOWS_ADDRESS_SERVICE_URL is set (unset with it: the embedded sandbox)",
        json_schema_extra={"variable": "address_assistant_url"},
    )
    batch_key: str = Field(
        default="postflows_maintenance_v1",
        description="Alignment key of the batch (<service>_maintenance_v1 or _validation_v1)",
    )
    profile: str | None = Field(
        default=None,
        description="Alignment profile of the batch key: a built-in name or a YAML file (unset: as read)",
    )
    query_key: str = Field(default="postflows_maintenance_v1", description="Key of the individual queries")
    correction_marks: str = Field(
        default="234",
        pattern=r"^[-0-9A-Za-z]*$",
        description="ShortReport characters (§2.5) that make a hit's changed address field a correction to "
        "write back and highlight: 2 spelling standardized, 3 changed, 4 supplemented (the specification "
        "does not say which of them carry a value to take over)",
    )
    pstat_meanings: dict[int, str] = Field(
        default_factory=dict,
        description='What each PSTAT of building verification means (JSON, e.g. {"1": "exists as written"}); '
        "the specification does not publish its values",
        json_schema_extra={"variable": "address_pstat_meanings"},
    )
    file_retention_days: float = Field(
        default=92,
        gt=0,
        description="How long the address service keeps an uploaded file (3 months): `postflows cleanup` "
        "keeps the files of a batch job whose result is still owed until the job is this old",
    )
    rate_per_minute: int = Field(
        default=1200,
        ge=0,
        description="Rate limit 'address-service' created by setup/serve: requests per minute (0: none)",
    )
    queries_per_minute: int = Field(
        default=0,
        ge=0,
        description="The address service's limit on individual queries, assistant and building checks per "
        "minute (Status 106 beyond it): they are paced to stay just under it, shared by a process's clients "
        "(0: not paced)",
    )

    @field_validator("pstat_meanings", mode="before")
    @classmethod
    def _json_text(cls, value: Any) -> Any:
        """The variable's JSON text, read as the mapping it writes."""
        return json.loads(value) if isinstance(value, str) else value

    @property
    def is_sandbox(self) -> bool:
        return not self.url


class NewspaperSettings(BaseModel):
    """The newspaper API (``POSTFLOWS_NEWSPAPER_*``)."""

    model_config = ConfigDict(extra="ignore")

    url: str | None = Field(default=None, description="Newspaper API host; unset = embedded sandbox")
    token_url: str | None = Field(default=None, description="OAuth 2.0 token endpoint of the newspaper API")
    client_id: str | None = Field(
        default=None, description="Client id of the newspaper API, given at contract signing"
    )
    client_secret: SecretStr | None = Field(default=None, description="Client secret of the newspaper API")
    structure_file_email_field: str = Field(
        default="email",
        pattern=r"^[A-Za-z_][A-Za-z0-9_]*$",
        description="The field of the structure-file notice e-mail's body (the specification shows no body: "
        '{"<field>": "<address>"} is sent)',
    )
    rate_per_minute: int = Field(
        default=600,
        ge=0,
        description="Rate limit 'newspaper-api' created by setup/serve: requests per minute (0: none)",
    )

    @property
    def is_sandbox(self) -> bool:
        return not self.url


# What each path of the commerce API sets. Its variable is the connector's name for it (PATH_SETTINGS, which
# an error about a wrong path quotes); the defaults are CommercePaths'.
_PATH_DESCRIPTIONS = {
    "address": "Path of the address sub-API below the base address",
    "delivery": "Path of the delivery sub-API below the base address",
    "pickup": "The pickup sub-API (real: /pickpost/v1)",
    "same_day": "Path of the same-day acceptance points (the specification shows none)",
    "pickup_points": "Pickup points (path not shown by the spec); default <pickup path>/points",
    "pickup_points_method": "HTTP method of the pickup points query (the specification shows none)",
    "barcode": "Path of the address labels (the specification shows none)",
    "return_order": "Path of the return orders (the specification shows none)",
}
_PATH_VARIABLES = {
    name: (PATH_SETTINGS[name].removeprefix(PREFIX).lower(), description)
    for name, description in _PATH_DESCRIPTIONS.items()
}
_SCOPE_VARIABLES = {
    "validation": ("commerce_scope_validation", "OAuth scope asked for address validation"),
    "autocomplete": ("commerce_scope_autocomplete", "OAuth scope asked for zip, street and house look-ups"),
    "personal": ("commerce_scope_personal", "OAuth scope asked for a signed-in user's addresses"),
    "delivery": (
        "commerce_scope_delivery",
        "OAuth scope asked for deliverability and delivery reference data",
    ),
    "pickup": ("commerce_scope_pickup", "OAuth scope asked for pickup registration and pickup points"),
    "barcode": ("commerce_scope_barcode", "OAuth scope asked for address labels"),
    "return_order": ("commerce_scope_return_order", "OAuth scope asked for return orders"),
}


class CommerceSettings(BaseModel):
    """The commerce API and its authorization server (``POSTFLOWS_COMMERCE_*``)."""

    model_config = ConfigDict(extra="ignore")

    url: str | None = Field(
        default=None, description="Commerce API base address ({base_url}); unset = embedded sandbox"
    )
    auth_url: str | None = Field(
        default=None, description="Host of /OAuth/authorization and /OAuth/token ({auth_url})"
    )
    userinfo_url: str | None = Field(default=None, description="OpenID Connect userinfo address")
    client_id: str | None = Field(default=None, description="Registered client id of the commerce API")
    client_secret: SecretStr | None = Field(
        default=None, description="Registered client secret of the commerce API (sent in form bodies only)"
    )
    redirect_uri: str = Field(
        default="http://127.0.0.1:8765/callback",
        description="Registered redirect URI; a loopback one is where commerce-login listens",
    )
    login_scopes: str = Field(
        default=DEFAULT_LOGIN_SCOPES,
        description="Scopes a user is asked to consent to (space separated)",
        json_schema_extra={"variable": "commerce_scopes"},
    )
    issuer: str | None = Field(default=None, description="The iss of ID tokens (default: the auth URL)")
    jwks_url: str | None = Field(
        default=None, description="The issuer's signing keys (default: from its discovery document)"
    )
    token_store: str = Field(
        default="file",
        description="Where a user's refresh token is kept: 'file' (0600 in the data dir) or block:<name>",
    )
    scopes: CommerceScopes = Field(
        default_factory=CommerceScopes,
        description="The OAuth scope of each operation",
        json_schema_extra={"variables": _SCOPE_VARIABLES},  # type: ignore[dict-item]
    )
    paths: CommercePaths = Field(
        default_factory=CommercePaths,
        description="Where each sub-API and each endpoint the spec shows no path for lives",
        json_schema_extra={"variables": _PATH_VARIABLES},  # type: ignore[dict-item]
    )
    rate_per_minute: int = Field(
        default=1200,
        ge=0,
        description="Rate limit 'commerce-api' created by setup/serve: requests per minute (0: none)",
    )
    label_pdf_field: str = Field(
        default=DEFAULT_LABEL_PDF_FIELD,
        min_length=1,
        description="Where a JSON address-label answer carries the label as base64 (the specification shows "
        "no answer): a dotted path, a string or an array of strings (default: item.label, as public clients "
        "of the real service read it)",
    )

    @property
    def is_sandbox(self) -> bool:
        return not self.url
