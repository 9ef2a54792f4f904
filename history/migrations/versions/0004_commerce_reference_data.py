"""Commerce delivery reference data and the source of each master data change.

Holidays, additional services and delivery instructions get their tables; every change logged so far came
from the newspaper master data sync, so its source is ``newspaper``.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-24
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Frozen copies of the types used at the time of this migration; later model changes must not alter it.
Timestamp = sa.DateTime(timezone=True)


def _record_columns(table: str) -> list[sa.Column | sa.ForeignKeyConstraint]:
    """The columns every reference table has beside its own (names, JSON, hash, times, run)."""
    return [
        sa.Column("name_de", sa.Text(), nullable=True),
        sa.Column("name_fr", sa.Text(), nullable=True),
        sa.Column("name_it", sa.Text(), nullable=True),
        sa.Column("name_en", sa.Text(), nullable=True),
        sa.Column("data", sa.JSON(), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("created_at", Timestamp, nullable=False),
        sa.Column("updated_at", Timestamp, nullable=False),
        sa.Column("removed_at", Timestamp, nullable=True),
        sa.Column("run_id", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.id"], name=op.f(f"fk_{table}_run_id_runs"), ondelete="SET NULL"
        ),
    ]


def upgrade() -> None:
    # Every change logged so far came from the newspaper master data sync.
    with op.batch_alter_table("master_data_changes") as batch:
        batch.add_column(
            sa.Column("source", sa.String(length=32), nullable=False, server_default="newspaper")
        )
    with op.batch_alter_table("master_data_changes") as batch:
        batch.alter_column("source", server_default=None)
        batch.create_index(op.f("ix_master_data_changes_source"), ["source"])

    op.create_table(
        "delivery_holidays",
        sa.Column("holiday_date", sa.Date(), nullable=False),
        *_record_columns("delivery_holidays"),
        sa.PrimaryKeyConstraint("holiday_date", name=op.f("pk_delivery_holidays")),
    )
    op.create_table(
        "delivery_additional_services",
        sa.Column("code", sa.String(length=100), nullable=False),
        sa.Column("barcode", sa.String(length=100), nullable=True),
        *_record_columns("delivery_additional_services"),
        sa.PrimaryKeyConstraint("code", name=op.f("pk_delivery_additional_services")),
    )
    op.create_table(
        "delivery_instructions",
        sa.Column("code", sa.String(length=100), nullable=False),
        sa.Column("barcode", sa.String(length=100), nullable=True),
        sa.Column("editable", sa.Boolean(), nullable=True),
        sa.Column("place_holder_names", sa.JSON(), nullable=False),
        sa.Column("option_names", sa.JSON(), nullable=False),
        *_record_columns("delivery_instructions"),
        sa.PrimaryKeyConstraint("code", name=op.f("pk_delivery_instructions")),
    )


def downgrade() -> None:
    op.drop_table("delivery_instructions")
    op.drop_table("delivery_additional_services")
    op.drop_table("delivery_holidays")
    with op.batch_alter_table("master_data_changes") as batch:
        batch.drop_index(op.f("ix_master_data_changes_source"))
        batch.drop_column("source")
