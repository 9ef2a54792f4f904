"""Initial run history: runs, steps, remote jobs, job events, documents, run messages.

Revision ID: 0001
Revises:
Create Date: 2026-11-22
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Frozen copies of the types used at the time of this migration; later model changes must not alter it.
Timestamp = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "runs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("flow", sa.String(length=200), nullable=False),
        sa.Column("flow_run_id", sa.String(length=64), nullable=True),
        sa.Column("idempotency_key", sa.String(length=200), nullable=True),
        sa.Column("parameters", sa.JSON(), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("summary", sa.JSON(), nullable=True),
        sa.Column("started_at", Timestamp, nullable=False),
        sa.Column("finished_at", Timestamp, nullable=True),
        sa.CheckConstraint(
            "state IN ('RUNNING', 'COMPLETED', 'FAILED', 'CANCELLED')", name=op.f("ck_runs_state")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_runs")),
    )
    op.create_index(op.f("ix_runs_idempotency_key"), "runs", ["idempotency_key"])
    op.create_index(op.f("ix_runs_started_at"), "runs", ["started_at"])

    op.create_table(
        "steps",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("outcome", sa.String(length=32), nullable=False),
        sa.Column("started_at", Timestamp, nullable=False),
        sa.Column("duration_s", sa.Float(), nullable=False),
        sa.Column("detail", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.id"], name=op.f("fk_steps_run_id_runs"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_steps")),
    )
    op.create_index(op.f("ix_steps_run_id"), "steps", ["run_id"])

    op.create_table(
        "remote_jobs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("api", sa.String(length=32), nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("remote_id", sa.String(length=200), nullable=False),
        sa.Column("idempotency_key", sa.String(length=200), nullable=True),
        sa.Column("status", sa.String(length=64), nullable=True),
        sa.Column("progress", sa.Float(), nullable=True),
        sa.Column("data", sa.JSON(), nullable=False),
        sa.Column("created_at", Timestamp, nullable=False),
        sa.Column("updated_at", Timestamp, nullable=False),
        sa.Column("finished_at", Timestamp, nullable=True),
        sa.Column("deleted_at", Timestamp, nullable=True),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.id"], name=op.f("fk_remote_jobs_run_id_runs"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_remote_jobs")),
        sa.UniqueConstraint("api", "kind", "remote_id", name=op.f("uq_remote_jobs_api_kind_remote_id")),
    )
    op.create_index(op.f("ix_remote_jobs_idempotency_key"), "remote_jobs", ["idempotency_key"])
    op.create_index(op.f("ix_remote_jobs_run_id"), "remote_jobs", ["run_id"])

    op.create_table(
        "job_events",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("job_id", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=64), nullable=True),
        sa.Column("status_date", Timestamp, nullable=True),
        sa.Column("progress", sa.Float(), nullable=True),
        sa.Column("recorded_at", Timestamp, nullable=False),
        sa.Column("detail", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(
            ["job_id"], ["remote_jobs.id"], name=op.f("fk_job_events_job_id_remote_jobs"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_job_events")),
    )
    op.create_index(op.f("ix_job_events_job_id"), "job_events", ["job_id"])

    op.create_table(
        "documents",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("remote_job_id", sa.Integer(), nullable=True),
        sa.Column("kind", sa.String(length=64), nullable=False),
        sa.Column("path", sa.Text(), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("created_at", Timestamp, nullable=False),
        sa.ForeignKeyConstraint(
            ["remote_job_id"],
            ["remote_jobs.id"],
            name=op.f("fk_documents_remote_job_id_remote_jobs"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.id"], name=op.f("fk_documents_run_id_runs"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_documents")),
    )
    op.create_index(op.f("ix_documents_remote_job_id"), "documents", ["remote_job_id"])
    op.create_index(op.f("ix_documents_run_id"), "documents", ["run_id"])
    op.create_index(op.f("ix_documents_sha256"), "documents", ["sha256"])

    op.create_table(
        "run_messages",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("level", sa.String(length=16), nullable=False),
        sa.Column("code", sa.String(length=64), nullable=True),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("created_at", Timestamp, nullable=False),
        sa.CheckConstraint("level IN ('info', 'warning', 'error')", name=op.f("ck_run_messages_level")),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.id"], name=op.f("fk_run_messages_run_id_runs"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_run_messages")),
    )
    op.create_index(op.f("ix_run_messages_run_id"), "run_messages", ["run_id"])


def downgrade() -> None:
    op.drop_table("run_messages")
    op.drop_table("documents")
    op.drop_table("job_events")
    op.drop_table("remote_jobs")
    op.drop_table("steps")
    op.drop_table("runs")
