"""The run history schema: runs, their steps, remote jobs with status events, documents and messages.

Every schema change ships as an Alembic migration in ``history/migrations/versions``; a test proves the
models here and the migrations agree on SQLite and PostgreSQL.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    CheckConstraint,
    DateTime,
    Dialect,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship
from sqlalchemy.types import TypeDecorator

# Stable constraint names make later migrations (and SQLite batch mode) able to address constraints.
NAMING_CONVENTION: dict[str, str] = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


def utcnow() -> datetime:
    """The current time, timezone-aware in UTC."""
    return datetime.now(UTC)


class UtcDateTime(TypeDecorator[datetime]):
    """A timestamp that is always timezone-aware UTC in Python, whatever the database keeps.

    SQLite has no timezone-aware type: values are converted to UTC before they are written and read back as
    UTC. Naive datetimes are refused so local wall-clock times never slip in unnoticed.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None or value.tzinfo.utcoffset(value) is None:
            raise ValueError(f"naive datetime {value!r}: history timestamps must be timezone-aware")
        return value.astimezone(UTC)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


class Base(DeclarativeBase):
    """Declarative base of every history table; later tables (e.g. master data) derive from it too."""

    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map = {
        datetime: UtcDateTime(),
        dict[str, Any]: JSON(),
    }


class RunState(StrEnum):
    """Where a run stands; RUNNING until ``finish_run`` records the outcome. PARKED: the run ended while its
    remote job still runs, and a follow-up run continues it. INTERRUPTED: stopped by Ctrl-C or a
    cancellation (CANCELLED: the same, recorded before INTERRUPTED existed); the same command takes it up.
    CRASHED: its process ended under it (``SystemExit``, e.g. its worker was killed), as Prefect records
    it."""

    RUNNING = "RUNNING"
    COMPLETED = "COMPLETED"
    FAILED = "FAILED"
    CANCELLED = "CANCELLED"
    PARKED = "PARKED"
    INTERRUPTED = "INTERRUPTED"
    CRASHED = "CRASHED"


class JobState(StrEnum):
    """Where a remote job stands as far as postflows knows: one set for every API and every kind of job.

    A submission starts as PENDING (its marker is committed before the request leaves). It becomes
    SUBMITTED once the service's id is recorded, NOT_SENT or REJECTED when it certainly created nothing, and
    UNCERTAIN when its outcome is unknown. What the service itself reports is kept apart, as the remote
    status.
    """

    PENDING = "PENDING"
    UNCERTAIN = "UNCERTAIN"
    NOT_SENT = "NOT_SENT"
    REJECTED = "REJECTED"
    SUPERSEDED = "SUPERSEDED"
    SUBMITTED = "SUBMITTED"
    RUNNING = "RUNNING"
    WAITING = "WAITING"
    FINISHED = "FINISHED"
    COMPLETED = "COMPLETED"
    FAILED = "FAILED"
    CANCELLED = "CANCELLED"
    DELETED = "DELETED"

    @property
    def resumable(self) -> bool:
        """The service holds the job and it may still give a result: a re-run picks it up."""
        return self in _RESUMABLE

    @property
    def final(self) -> bool:
        """Nothing more will happen to the job: a re-run with the same key starts a new one."""
        return self in _FINAL


_RESUMABLE = frozenset({JobState.SUBMITTED, JobState.RUNNING, JobState.WAITING, JobState.FINISHED})
_FINAL = frozenset(
    {
        JobState.NOT_SENT,
        JobState.REJECTED,
        JobState.SUPERSEDED,
        JobState.COMPLETED,
        JobState.FAILED,
        JobState.CANCELLED,
        JobState.DELETED,
    }
)


class MessageLevel(StrEnum):
    """Severity of a message a remote service returned alongside its answer."""

    INFO = "info"
    WARNING = "warning"
    ERROR = "error"


def _in_list(column: str, values: type[StrEnum]) -> str:
    return f"{column} IN ({', '.join(repr(member.value) for member in values)})"


class Run(Base):
    """One execution of a flow: what was asked (parameters, idempotency key) and how it ended."""

    __tablename__ = "runs"
    __table_args__ = (
        CheckConstraint(_in_list("state", RunState), name="state"),
        # The newest runs of one flow (``postflows history --flow``) without a scan of every run.
        Index("ix_runs_flow_id", "flow", "id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    flow: Mapped[str] = mapped_column(String(200))
    flow_run_id: Mapped[str | None] = mapped_column(String(64))
    idempotency_key: Mapped[str | None] = mapped_column(String(200), index=True)
    parameters: Mapped[dict[str, Any]] = mapped_column(default=dict)
    state: Mapped[str] = mapped_column(String(16), default=RunState.RUNNING.value)
    error: Mapped[str | None] = mapped_column(Text)
    summary: Mapped[dict[str, Any] | None] = mapped_column()
    started_at: Mapped[datetime] = mapped_column(default=utcnow, index=True)
    finished_at: Mapped[datetime | None] = mapped_column()

    steps: Mapped[list[Step]] = relationship(
        back_populates="run", order_by="Step.id", cascade="all, delete-orphan", passive_deletes=True
    )
    remote_jobs: Mapped[list[RemoteJob]] = relationship(
        back_populates="run", order_by="RemoteJob.id", cascade="all, delete-orphan", passive_deletes=True
    )
    documents: Mapped[list[Document]] = relationship(
        back_populates="run", order_by="Document.id", cascade="all, delete-orphan", passive_deletes=True
    )
    messages: Mapped[list[RunMessage]] = relationship(
        back_populates="run", order_by="RunMessage.id", cascade="all, delete-orphan", passive_deletes=True
    )

    @property
    def duration(self) -> timedelta | None:
        """Wall time from start to finish, or ``None`` while the run is still going."""
        if self.finished_at is None:
            return None
        return self.finished_at - self.started_at

    def __repr__(self) -> str:
        return f"Run(id={self.id!r}, flow={self.flow!r}, state={self.state!r})"


class Step(Base):
    """One remote call or task attempt inside a run, with its outcome and duration."""

    __tablename__ = "steps"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    attempt: Mapped[int] = mapped_column(Integer, default=1)
    outcome: Mapped[str] = mapped_column(String(32))
    started_at: Mapped[datetime] = mapped_column(default=utcnow)
    duration_s: Mapped[float] = mapped_column(Float)
    detail: Mapped[str | None] = mapped_column(Text)

    run: Mapped[Run] = relationship(back_populates="steps")

    def __repr__(self) -> str:
        return f"Step(id={self.id!r}, name={self.name!r}, outcome={self.outcome!r})"


class RemoteJob(Base):
    """Something a remote API holds for us: an uploaded file, a batch, an order, a purchase.

    ``remote_id`` is the service's own handle (file id, batch token, order number) so a re-run can pick the
    job up instead of submitting it again; ``idempotency_key`` ties it to the request that created it.
    ``status`` is a :class:`JobState`; ``remote_status`` is what the service last said (free text).
    """

    __tablename__ = "remote_jobs"
    __table_args__ = (UniqueConstraint("api", "kind", "remote_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), index=True)
    api: Mapped[str] = mapped_column(String(32))
    kind: Mapped[str] = mapped_column(String(32))
    remote_id: Mapped[str] = mapped_column(String(200))
    idempotency_key: Mapped[str | None] = mapped_column(String(200), index=True)
    status: Mapped[str | None] = mapped_column(String(64))
    remote_status: Mapped[str | None] = mapped_column(String(64))
    progress: Mapped[float | None] = mapped_column(Float)
    data: Mapped[dict[str, Any]] = mapped_column(default=dict)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column()
    deleted_at: Mapped[datetime | None] = mapped_column()

    run: Mapped[Run] = relationship(back_populates="remote_jobs")
    events: Mapped[list[JobEvent]] = relationship(
        back_populates="job", order_by="JobEvent.id", cascade="all, delete-orphan", passive_deletes=True
    )
    documents: Mapped[list[Document]] = relationship(back_populates="remote_job", order_by="Document.id")

    def __repr__(self) -> str:
        return (
            f"RemoteJob(id={self.id!r}, api={self.api!r}, kind={self.kind!r}, "
            f"remote_id={self.remote_id!r}, status={self.status!r})"
        )


class JobEvent(Base):
    """One observed change of a remote job's state, remote status or progress."""

    __tablename__ = "job_events"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    job_id: Mapped[int] = mapped_column(ForeignKey("remote_jobs.id", ondelete="CASCADE"), index=True)
    status: Mapped[str | None] = mapped_column(String(64))
    remote_status: Mapped[str | None] = mapped_column(String(64))
    status_date: Mapped[datetime | None] = mapped_column()
    progress: Mapped[float | None] = mapped_column(Float)
    recorded_at: Mapped[datetime] = mapped_column(default=utcnow)
    detail: Mapped[str | None] = mapped_column(Text)

    job: Mapped[RemoteJob] = relationship(back_populates="events")

    def __repr__(self) -> str:
        return f"JobEvent(id={self.id!r}, status={self.status!r}, progress={self.progress!r})"


class Document(Base):
    """A file a run downloaded or produced, identified by content hash."""

    __tablename__ = "documents"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), index=True)
    remote_job_id: Mapped[int | None] = mapped_column(
        ForeignKey("remote_jobs.id", ondelete="SET NULL"), index=True
    )
    kind: Mapped[str] = mapped_column(String(64))
    path: Mapped[str] = mapped_column(Text)
    size: Mapped[int] = mapped_column(BigInteger)
    sha256: Mapped[str] = mapped_column(String(64), index=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    run: Mapped[Run] = relationship(back_populates="documents")
    remote_job: Mapped[RemoteJob | None] = relationship(back_populates="documents")

    def __repr__(self) -> str:
        return f"Document(id={self.id!r}, kind={self.kind!r}, path={self.path!r})"


class KeyLease(Base):
    """Which run holds an idempotency key: one row per key, so one run at a time works on it.

    The holder renews ``expires_at`` while it runs; a crashed holder loses the key when it expires, or at
    once when its process is gone from the same host (``host``, ``pid`` and ``process_started`` tell).
    """

    __tablename__ = "key_leases"

    idempotency_key: Mapped[str] = mapped_column(String(200), primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), index=True)
    host: Mapped[str] = mapped_column(String(255))
    pid: Mapped[int] = mapped_column(Integer)
    process_started: Mapped[str | None] = mapped_column(String(32))
    acquired_at: Mapped[datetime] = mapped_column(default=utcnow)
    expires_at: Mapped[datetime] = mapped_column()

    def __repr__(self) -> str:
        return f"KeyLease(key={self.idempotency_key!r}, run_id={self.run_id!r}, host={self.host!r})"


class RunMessage(Base):
    """A warning, error or note a service returned during a run (e.g. a newspaper message code)."""

    __tablename__ = "run_messages"
    __table_args__ = (CheckConstraint(_in_list("level", MessageLevel), name="level"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), index=True)
    level: Mapped[str] = mapped_column(String(16))
    code: Mapped[str | None] = mapped_column(String(64))
    text: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    run: Mapped[Run] = relationship(back_populates="messages")

    def __repr__(self) -> str:
        return f"RunMessage(id={self.id!r}, level={self.level!r}, code={self.code!r})"


class HistoryIdentity(Base):
    """The history's own identity: one row (``id`` 1), its ``history_id`` a UUID made the first time it is
    asked for, so runs of two histories never share a name outside (event resources)."""

    __tablename__ = "history_identity"
    __table_args__ = (CheckConstraint("id = 1", name="one_row"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    history_id: Mapped[str] = mapped_column(String(36))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    def __repr__(self) -> str:
        return f"HistoryIdentity(history_id={self.history_id!r})"
