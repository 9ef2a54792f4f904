"""Runs may end CRASHED: their process ended under them (``SystemExit``, e.g. their worker was killed), as
Prefect records such a run.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-29
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_BEFORE = ("RUNNING", "COMPLETED", "FAILED", "CANCELLED", "PARKED", "INTERRUPTED")
_AFTER = (*_BEFORE, "CRASHED")


def _states(states: tuple[str, ...]) -> str:
    return "state IN (" + ", ".join(f"'{state}'" for state in states) + ")"


def upgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.drop_constraint(op.f("ck_runs_state"), type_="check")
        batch.create_check_constraint(op.f("ck_runs_state"), _states(_AFTER))


def downgrade() -> None:
    op.execute("UPDATE runs SET state = 'FAILED' WHERE state = 'CRASHED'")
    with op.batch_alter_table("runs") as batch:
        batch.drop_constraint(op.f("ck_runs_state"), type_="check")
        batch.create_check_constraint(op.f("ck_runs_state"), _states(_BEFORE))
