"""An index on runs (flow, id): the newest runs of one flow are read from it, not found by scanning every run.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-23
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index(op.f("ix_runs_flow_id"), "runs", ["flow", "id"])


def downgrade() -> None:
    op.drop_index(op.f("ix_runs_flow_id"), table_name="runs")
