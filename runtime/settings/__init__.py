"""All configuration in one object, read from ``POSTFLOWS_*`` environment variables and ``.env``: the model
is :class:`runtime.settings.models.Settings`; :func:`get_settings` reads it, with the credentials a Prefect
Block holds where one is named.
"""

from __future__ import annotations

from runtime.logsetup import install_secret_filter, swiss_log_times
from runtime.settings.apis import CREDENTIAL_FIELDS as CREDENTIAL_FIELDS
from runtime.settings.apis import DEFAULT_LOGIN_SCOPES as DEFAULT_LOGIN_SCOPES
from runtime.settings.models import SANDBOX_ADDRESS_PASSWORD as SANDBOX_ADDRESS_PASSWORD
from runtime.settings.models import SANDBOX_ADDRESS_USER as SANDBOX_ADDRESS_USER
from runtime.settings.models import SANDBOX_COMMERCE_CLIENT_ID as SANDBOX_COMMERCE_CLIENT_ID
from runtime.settings.models import SANDBOX_COMMERCE_CLIENT_SECRET as SANDBOX_COMMERCE_CLIENT_SECRET
from runtime.settings.models import SANDBOX_NEWSPAPER_CLIENT_ID as SANDBOX_NEWSPAPER_CLIENT_ID
from runtime.settings.models import SANDBOX_NEWSPAPER_CLIENT_SECRET as SANDBOX_NEWSPAPER_CLIENT_SECRET
from runtime.settings.models import Settings as Settings
from runtime.settings.models import default_data_dir as default_data_dir


def get_settings() -> Settings:
    """The settings from the environment and ``.env``; credentials the environment leaves unset come from
    the Prefect Block named by ``POSTFLOWS_CREDENTIALS_BLOCK`` when one is named. Every flow starts here, so
    this is also where its process's log records are made to pass the secret filter
    (:func:`runtime.logsetup.install_secret_filter`) and its log lines to give Swiss time
    (:func:`runtime.logsetup.swiss_log_times`)."""
    install_secret_filter()
    swiss_log_times()
    settings = Settings()
    if not settings.credentials_block:
        return settings
    from runtime.blocks import load_credentials

    by_setting = {variable.setting: variable for variable in Settings.variables()}
    unset = {
        field: value
        for field, value in load_credentials(settings.credentials_block).items()
        if by_setting[field].of(settings) in (None, "")
    }
    if not unset:
        return settings
    return Settings(**unset)
