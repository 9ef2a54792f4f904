"""The settings model: all configuration in one object, read from ``POSTFLOWS_*`` environment variables and
``.env`` (:mod:`runtime.settings` reads it, with the credentials block).

Each API's settings are one model (:mod:`runtime.settings.apis`), named in the environment as users
always named them (:mod:`runtime.settings.variables`). An unset service URL means the embedded sandbox;
secrets are ``SecretStr`` and unwrapped only where a client is built. Every settings object registers its
secrets with the process's secret scrubber and its data dir as private (:mod:`runtime.privacy`) as it is
made.
"""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from core.locations import default_data_dir as default_data_dir  # re-exported
from core.locations import sqlite_history_url
from fileio.limits import (
    TABLE_MAX_CELLS,
    TABLE_MAX_COLUMNS,
    TABLE_MAX_LINE_BYTES,
    TABLE_MAX_ROWS,
    WORKBOOK_MAX_PART_BYTES,
    WORKBOOK_MAX_PARTS,
    WORKBOOK_MAX_RATIO,
    WORKBOOK_MAX_SHARED_STRINGS,
    WORKBOOK_MAX_SHEETS,
    TableLimits,
)
from fileio.reports import CsvDialect, CsvStyle
from runtime.privacy import register_settings
from runtime.settings.apis import CREDENTIAL_FIELDS as CREDENTIAL_FIELDS
from runtime.settings.apis import DEFAULT_LOGIN_SCOPES as DEFAULT_LOGIN_SCOPES
from runtime.settings.apis import AddressServiceSettings, CommerceSettings, NewspaperSettings
from runtime.settings.variables import PostflowsEnvironment, Variable, fold, variables_of

SANDBOX_ADDRESS_USER = "sandbox-user"
SANDBOX_ADDRESS_PASSWORD = "sandbox-password"  # noqa: S105 - the sandbox's published test account
SANDBOX_NEWSPAPER_CLIENT_ID = "sandbox-client"
SANDBOX_NEWSPAPER_CLIENT_SECRET = "sandbox-secret"  # noqa: S105
SANDBOX_COMMERCE_CLIENT_ID = "sandbox-commerce-client"
SANDBOX_COMMERCE_CLIENT_SECRET = "sandbox-commerce-secret"  # noqa: S105


class Settings(BaseSettings):
    """postflows configuration; every variable is listed by :meth:`variables`."""

    model_config = SettingsConfigDict(
        env_prefix="POSTFLOWS_",
        env_file=".env",
        env_file_encoding="utf-8",
        env_nested_delimiter="__",
        extra="ignore",
    )

    data_dir: Path = Field(
        default_factory=default_data_dir,
        description="Working directory for the SQLite history, the local Prefect server and default outputs",
    )
    database_url: str | None = Field(
        default=None, description="SQLAlchemy URL of the run history; default SQLite in the data dir"
    )
    database_password: SecretStr | None = Field(
        default=None,
        description="Password of the run history's database, used when POSTFLOWS_DATABASE_URL names a user "
        "but no password (`postflows deploy` keeps it in the credentials block, not in the deployments)",
    )

    server_database_url: SecretStr | None = Field(
        default=None,
        description="SQLAlchemy URL of the database of the local Prefect server (`postflows server start`), "
        "e.g. postgresql://user:password@host/prefect (run through asyncpg); default SQLite in the data dir",
    )

    address_service: AddressServiceSettings = Field(
        default_factory=AddressServiceSettings, description="The address web service"
    )
    newspaper: NewspaperSettings = Field(default_factory=NewspaperSettings, description="The newspaper API")
    commerce: CommerceSettings = Field(default_factory=CommerceSettings, description="The commerce API")

    credentials_block: str | None = Field(
        default=None, description="Name of a Postflows Credentials block filling unset credentials"
    )
    crash_silence_s: int = Field(
        default=90,
        ge=45,
        description="Seconds without a heartbeat after which a running deployment run is marked Crashed by "
        "the automation `postflows setup` makes (runs beat every 30 s)",
    )
    notify_block: str | None = Field(
        default=None,
        description="The Prefect notification block (type/name, e.g. slack-webhook/operations) that "
        "announces failed and crashed runs; `postflows setup` makes the automation. Unset: no announcement",
    )

    http_timeout_s: float = Field(
        default=30.0,
        gt=0,
        description="Timeout of each read of an HTTP answer and of connecting (s); the request as a whole "
        "has POSTFLOWS_HTTP_DEADLINE_S",
    )
    http_max_attempts: int = Field(
        default=4,
        ge=1,
        description="Attempts for transient failures (connection, 5xx, 429); a request that changes "
        "something is sent again only when it certainly never left",
    )
    http_429_not_processed: bool = Field(
        default=True,
        description="Whether HTTP 429 certainly means 'not processed' (a rate limiter answered before the "
        "service did any work; the specifications show no rate limits): a submission answered 429 is then "
        "sent again after Retry-After; false: it is uncertain until --resubmit",
    )
    http_deadline_s: float | None = Field(
        default=None,
        gt=0,
        description="Deadline of every request, downloads included: from sending it to the last byte of its "
        "answer, beside the timeout of each read (s); unset: 600 for a request that moves a file (a "
        "download, a document, an upload), 120 for any other",
        json_schema_extra={
            "limit": "a request over its deadline fails as a transport failure: a read is tried again, a "
            "submission's outcome is unknown"
        },
    )
    response_max_bytes: int = Field(
        default=16 << 20,
        gt=0,
        description="Largest answer read whole from a service (JSON, an error or token answer, an address "
        "label's answer, PDF or JSON), in bytes; counted while it streams (newspaper documents: 4/3 of "
        "POSTFLOWS_DOWNLOAD_MAX_BYTES, for base64)",
        json_schema_extra={
            "limit": "a larger answer is refused as unreadable before more of it is read: a read is tried "
            "again, a submission's outcome is unknown"
        },
    )
    allow_http: bool = Field(
        default=False,
        description="Accept service addresses with http:// off loopback (credentials would travel "
        "unencrypted); http:// to 127.0.0.0/8, ::1 or localhost is always accepted",
        json_schema_extra={
            "limit": "an http:// service address that is not on loopback is refused before anything is sent"
        },
    )

    task_retries: int = Field(
        default=5,
        ge=0,
        description="Prefect retries of an idempotent step (status check, download, report, delete) after a "
        "transient failure the HTTP retries did not overcome",
    )
    task_retry_delay_s: float = Field(
        default=10.0, ge=0, description="Wait before the first task retry, doubled for each further one (s)"
    )
    task_retry_jitter: float = Field(
        default=0.5, ge=0, description="Random spread of a task retry's wait, as a fraction of it"
    )

    park_after_s: float = Field(
        default=600.0,
        gt=0,
        description="A deployment run waiting longer than this for a remote job ends and schedules its "
        "follow-up run instead (seconds)",
    )

    lease_ttl_s: float = Field(
        default=60.0, gt=0, description="How long a run's hold on its key lasts unless renewed (seconds)"
    )
    lease_wait_s: float = Field(
        default=600.0, ge=0, description="How long a run waits for another live run holding its key (seconds)"
    )
    download_max_bytes: int = Field(
        default=1 << 30,
        gt=0,
        description="Largest download, document or unpacked ZIP content accepted from a service, in bytes",
        json_schema_extra={
            "limit": "a larger download is refused and nothing of it is kept; a larger ZIP content stops the "
            "unpacking"
        },
    )
    zip_max_ratio: float = Field(
        default=100.0,
        ge=1.0,
        description="Largest ratio of unpacked to compressed size accepted in a downloaded ZIP",
        json_schema_extra={"limit": "a ZIP that inflates further is refused as damaged or hostile"},
    )
    # Limits on the shape of every table file read, the users' inputs and the services' results alike; each
    # is judged before the reader allocates for it. "limit" says what a refusal says (the Limits table).
    table_max_columns: int = Field(
        default=TABLE_MAX_COLUMNS,
        gt=0,
        description="Most columns in one row of a table file (fields of a line, columns of a worksheet)",
        json_schema_extra={
            "limit": "a row (a line's fields, a worksheet's columns) has more columns than this: an input is "
            "refused, a result kept unread"
        },
    )
    table_max_line_bytes: int = Field(
        default=TABLE_MAX_LINE_BYTES,
        gt=0,
        description="Longest line of a text table file, in bytes without its line ending",
        json_schema_extra={
            "limit": "a line of a text file is longer than this: refused before the file is read"
        },
    )
    table_max_cells: int = Field(
        default=TABLE_MAX_CELLS,
        gt=0,
        description="Most cells of a worksheet (rows × columns from A1), by its declared dimension and by "
        "its farthest cell",
        json_schema_extra={
            "limit": "a worksheet declares or reaches more cells than this: refused before its grid is built"
        },
    )
    table_max_rows: int = Field(
        default=TABLE_MAX_ROWS,
        gt=0,
        description="Most rows after the header of a table file",
        json_schema_extra={
            "limit": "a file has more rows after the header than this: refused before it is parsed"
        },
    )
    # Limits on a workbook's package (.xlsx), judged part by part as it is unpacked, before a reader opens it.
    workbook_max_part_bytes: int = Field(
        default=WORKBOOK_MAX_PART_BYTES,
        gt=0,
        description="Largest part of a workbook (a sheet, its shared strings, its styles) unpacked, in bytes",
        json_schema_extra={"limit": "a workbook with a larger part is refused before it is read"},
    )
    workbook_max_ratio: float = Field(
        default=WORKBOOK_MAX_RATIO,
        ge=1.0,
        description="Largest ratio of unpacked to compressed size of a workbook's part (past 1 MiB) and of "
        "the whole workbook",
        json_schema_extra={"limit": "a workbook that unpacks further is refused before it is read"},
    )
    workbook_max_shared_strings: int = Field(
        default=WORKBOOK_MAX_SHARED_STRINGS,
        gt=0,
        description="Most shared strings (distinct texts of all its sheets) of a workbook",
        json_schema_extra={"limit": "a workbook with more is refused before it is read"},
    )
    workbook_max_sheets: int = Field(
        default=WORKBOOK_MAX_SHEETS,
        gt=0,
        description="Most sheets of a workbook",
        json_schema_extra={"limit": "a workbook with more is refused before it is read"},
    )
    workbook_max_parts: int = Field(
        default=WORKBOOK_MAX_PARTS,
        gt=0,
        description="Most parts (members of its ZIP package) of a workbook",
        json_schema_extra={"limit": "a workbook with more is refused before its package is read"},
    )

    task_runner: str = Field(
        default="default",
        pattern=r"^(default|dask|dask:\S+)$",
        description="Where the row fan-outs (address queries, validations, deliverability checks) run: "
        "'default' (threads of the flow's process), 'dask' (a local Dask cluster) or "
        "'dask:<scheduler address>'",
    )

    csv_formula_guard: bool = Field(
        default=True,
        description="Write a leading ' before CSV cells from input or service text that start like a formula",
    )
    csv_dialect: CsvDialect = Field(
        default="excel",
        description="How the CSV files for people are written: 'excel' (UTF-8 with BOM, ';'-separated: Excel "
        "with a Swiss locale opens them in columns, umlauts right) or 'rfc4180' (UTF-8 without BOM, "
        "','-separated); `postflows --csv-dialect` sets it for one command",
    )

    sandbox: bool | None = Field(
        default=None,
        description="Whether the embedded sandbox stands in for a service whose URL is unset: true lets it "
        "(`postflows deploy --sandbox` and `postflows serve --sandbox` set it for their runs), false "
        "refuses it everywhere; unset: on the command line it does, in a run of a deployment (a worker's, "
        "`postflows serve`'s) it does not, and the run fails at its start naming the URL to set",
        json_schema_extra={
            "limit": "a deployment run without the service's URL and without POSTFLOWS_SANDBOX=true fails at "
            "its start, writing nothing"
        },
    )
    sandbox_faults: str | None = Field(
        default=None, description="Fault plan for the embedded sandbox: JSON text or a file path"
    )
    sandbox_job_seconds: float = Field(
        default=3.0, description="How long a sandbox batch job or purchase takes"
    )
    sandbox_order_statuses: str | None = Field(
        default=None,
        description="Statuses a sandbox newspaper order goes through over its job time, comma-separated "
        "(e.g. LOADED,CONTROL,DONE); unset: it stays LOADED",
    )
    sandbox_guesses: Literal["ours", "other"] = Field(
        default="ours",
        description="How the sandbox answers where a specification shows nothing: 'ours' (as the client "
        "guesses) or 'other' (every registered guess the other plausible way; see docs/guesses.md)",
    )
    sandbox_alignments: str | None = Field(
        default=None,
        description="Alignments the embedded sandbox holds: KEY=FILE[,KEY=FILE] (profile YAML files)",
    )
    sandbox_ping_answer: Literal["status", "empty-json", "empty-text"] = Field(
        default="status",
        description="What the sandbox's address-service /ping answers with its HTTP 200: 'status' "
        "(a JSON Status 0), 'empty-json' or 'empty-text' (an empty body with a JSON or a text content type)",
    )
    sandbox_request_log: Path | None = Field(
        default=None,
        description="A file a served sandbox appends every API request to, one JSON line each (time, "
        "method, path, API, status, fault); unset: no log",
    )
    sandbox_control_token: SecretStr | None = Field(
        default=None,
        description="Token a served sandbox not on loopback asks for on its /_sandbox control endpoints "
        "(header X-Sandbox-Control-Token); without it they are refused there",
    )

    tracebacks: bool = Field(
        default=False, description="Print a failed command's traceback on the console besides its one line"
    )

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """The keyword arguments, then the environment over ``.env`` (one reader,
        :func:`core.environment.variables`), then secret files."""
        env_file = getattr(dotenv_settings, "env_file", None)
        return (
            init_settings,
            PostflowsEnvironment(settings_cls, Path(env_file) if isinstance(env_file, str | Path) else None),
            file_secret_settings,
        )

    @model_validator(mode="before")
    @classmethod
    def _flat_names(cls, data: Any) -> Any:
        """An API setting given by its variable's name (``commerce_url=...``) set in its API's model."""
        if not isinstance(data, dict):
            return data
        return fold(cls, data, dict(data))

    @classmethod
    def variables(cls) -> tuple[Variable, ...]:
        """Every environment variable of the settings, in the order of the fields."""
        return variables_of(cls)

    def model_post_init(self, context: Any, /) -> None:
        register_settings(self)

    @property
    def csv_style(self) -> CsvStyle:
        """How the flows write their CSV files: the dialect and the formula guard, as the writers take them
        together."""
        return CsvStyle(guard=self.csv_formula_guard, dialect=self.csv_dialect)

    @property
    def table_limits(self) -> TableLimits:
        """The limits on a table file's shape, as the flows pass them to the readers."""
        return TableLimits(
            max_columns=self.table_max_columns,
            max_line_bytes=self.table_max_line_bytes,
            max_cells=self.table_max_cells,
            max_rows=self.table_max_rows,
            max_part_bytes=self.workbook_max_part_bytes,
            max_workbook_ratio=self.workbook_max_ratio,
            max_shared_strings=self.workbook_max_shared_strings,
            max_sheets=self.workbook_max_sheets,
            max_parts=self.workbook_max_parts,
        )

    @cached_property
    def effective_database_url(self) -> str:
        """The run history's URL: POSTFLOWS_DATABASE_URL (with POSTFLOWS_DATABASE_PASSWORD when it names a
        user and no password), else SQLite in the data dir."""
        if not self.database_url:
            return sqlite_history_url(self.data_dir)
        if self.database_password is None:
            return self.database_url
        from sqlalchemy.engine import make_url

        url = make_url(self.database_url)
        if not url.username or url.password:
            return self.database_url
        return url.set(password=self.database_password.get_secret_value()).render_as_string(
            hide_password=False
        )
