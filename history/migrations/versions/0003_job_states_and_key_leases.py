"""Job states as one set, the service's own status beside them, and leases on idempotency keys.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-23
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

Timestamp = sa.DateTime(timezone=True)

# Statuses written before job states existed, and the state each one means.
_OLD_STATUS_STATES = {
    "SUBMITTING": "UNCERTAIN",
    "STARTED": "SUBMITTED",
    "UPLOADED": "SUBMITTED",
    "CREATED": "SUBMITTED",
    "DOWNLOADED": "COMPLETED",
    "READY": "COMPLETED",
}
_KEPT_STATES = ("NOT_SENT", "REJECTED", "SUPERSEDED", "SUBMITTED", "FAILED", "DELETED")


def upgrade() -> None:
    with op.batch_alter_table("remote_jobs") as batch:
        batch.add_column(sa.Column("remote_status", sa.String(length=64), nullable=True))
    with op.batch_alter_table("job_events") as batch:
        batch.add_column(sa.Column("remote_status", sa.String(length=64), nullable=True))
    op.create_table(
        "key_leases",
        sa.Column("idempotency_key", sa.String(length=200), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("host", sa.String(length=255), nullable=False),
        sa.Column("pid", sa.Integer(), nullable=False),
        sa.Column("process_started", sa.String(length=32), nullable=True),
        sa.Column("acquired_at", Timestamp, nullable=False),
        sa.Column("expires_at", Timestamp, nullable=False),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.id"], name=op.f("fk_key_leases_run_id_runs"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("idempotency_key", name=op.f("pk_key_leases")),
    )
    op.create_index(op.f("ix_key_leases_run_id"), "key_leases", ["run_id"], unique=False)

    jobs = sa.table(
        "remote_jobs",
        sa.column("status", sa.String),
        sa.column("remote_status", sa.String),
        sa.column("finished_at", Timestamp),
        sa.column("deleted_at", Timestamp),
    )
    known = (*_OLD_STATUS_STATES, *_KEPT_STATES)
    # What the service reported was kept in status before; it moves to remote_status.
    op.execute(
        jobs.update()
        .where(jobs.c.status.is_not(None), jobs.c.status.not_in(known))
        .values(
            remote_status=jobs.c.status,
            status=sa.case((jobs.c.finished_at.is_(None), "RUNNING"), else_="COMPLETED"),
        )
    )
    for old, state in _OLD_STATUS_STATES.items():
        op.execute(jobs.update().where(jobs.c.status == old).values(status=state))
    op.execute(
        jobs.update()
        .where(jobs.c.deleted_at.is_not(None), jobs.c.status == "SUBMITTED")
        .values(status="DELETED")
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_key_leases_run_id"), table_name="key_leases")
    op.drop_table("key_leases")
    with op.batch_alter_table("job_events") as batch:
        batch.drop_column("remote_status")
    with op.batch_alter_table("remote_jobs") as batch:
        batch.drop_column("remote_status")
