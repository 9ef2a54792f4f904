"""Every history has an identity of its own (a UUID in a one-row table, made on first use), so the events
of runs of two histories never name the same run.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-29
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "history_identity",
        sa.Column("id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("history_id", sa.String(length=36), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("id = 1", name=op.f("ck_history_identity_one_row")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_history_identity")),
    )


def downgrade() -> None:
    op.drop_table("history_identity")
