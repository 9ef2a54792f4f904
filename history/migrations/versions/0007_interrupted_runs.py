"""Runs may end INTERRUPTED: stopped by Ctrl-C or a cancellation, at any point, even while starting; the
same command takes the work up.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-26
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_BEFORE = ("RUNNING", "COMPLETED", "FAILED", "CANCELLED", "PARKED")
_AFTER = (*_BEFORE, "INTERRUPTED")


def _states(states: tuple[str, ...]) -> str:
    return "state IN (" + ", ".join(f"'{state}'" for state in states) + ")"


def upgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.drop_constraint(op.f("ck_runs_state"), type_="check")
        batch.create_check_constraint(op.f("ck_runs_state"), _states(_AFTER))


def downgrade() -> None:
    op.execute("UPDATE runs SET state = 'CANCELLED' WHERE state = 'INTERRUPTED'")
    with op.batch_alter_table("runs") as batch:
        batch.drop_constraint(op.f("ck_runs_state"), type_="check")
        batch.create_check_constraint(op.f("ck_runs_state"), _states(_BEFORE))
