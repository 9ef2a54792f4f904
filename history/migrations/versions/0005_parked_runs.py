"""Runs may end PARKED: the run stopped waiting for its remote job and a follow-up run continues it.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-26
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_BEFORE = ("RUNNING", "COMPLETED", "FAILED", "CANCELLED")
_AFTER = (*_BEFORE, "PARKED")


def _states(states: tuple[str, ...]) -> str:
    return "state IN (" + ", ".join(f"'{state}'" for state in states) + ")"


def upgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.drop_constraint(op.f("ck_runs_state"), type_="check")
        batch.create_check_constraint(op.f("ck_runs_state"), _states(_AFTER))


def downgrade() -> None:
    # A parked run's follow-up did the rest of its work; before this revision it counts as completed.
    op.execute("UPDATE runs SET state = 'COMPLETED' WHERE state = 'PARKED'")
    with op.batch_alter_table("runs") as batch:
        batch.drop_constraint(op.f("ck_runs_state"), type_="check")
        batch.create_check_constraint(op.f("ck_runs_state"), _states(_BEFORE))
