"""Newspaper master data: newspaper summaries, distribution lists and details, black list entries, change log.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-23
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Frozen copies of the types used at the time of this migration; later model changes must not alter it.
Timestamp = sa.DateTime(timezone=True)


def _run_fk(table: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        ["run_id"], ["runs.id"], name=op.f(f"fk_{table}_run_id_runs"), ondelete="SET NULL"
    )


def upgrade() -> None:
    op.create_table(
        "newspaper_summaries",
        sa.Column("newspaper_number", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("newspaper_id", sa.Integer(), nullable=True),
        sa.Column("title", sa.String(length=200), nullable=True),
        sa.Column("publisher_name", sa.String(length=200), nullable=True),
        sa.Column("data", sa.JSON(), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("created_at", Timestamp, nullable=False),
        sa.Column("updated_at", Timestamp, nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=True),
        _run_fk("newspaper_summaries"),
        sa.PrimaryKeyConstraint("newspaper_number", name=op.f("pk_newspaper_summaries")),
    )
    op.create_table(
        "distribution_lists",
        sa.Column("newspaper_number", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("data", sa.JSON(), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("created_at", Timestamp, nullable=False),
        sa.Column("updated_at", Timestamp, nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=True),
        _run_fk("distribution_lists"),
        sa.PrimaryKeyConstraint("newspaper_number", name=op.f("pk_distribution_lists")),
    )
    op.create_table(
        "distribution_list_details",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("newspaper_number", sa.Integer(), nullable=False),
        sa.Column("zip_code", sa.Integer(), nullable=False),
        sa.Column("distribution_type", sa.String(length=64), nullable=False),
        sa.Column("city", sa.String(length=200), nullable=True),
        sa.Column("location_category", sa.String(length=8), nullable=True),
        sa.Column("count", sa.Integer(), nullable=True),
        sa.Column("data", sa.JSON(), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("created_at", Timestamp, nullable=False),
        sa.Column("updated_at", Timestamp, nullable=False),
        sa.Column("removed_at", Timestamp, nullable=True),
        sa.Column("run_id", sa.Integer(), nullable=True),
        _run_fk("distribution_list_details"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_distribution_list_details")),
        sa.UniqueConstraint(
            "newspaper_number",
            "zip_code",
            "distribution_type",
            name=op.f("uq_distribution_list_details_natural_key"),
        ),
    )
    op.create_index(
        op.f("ix_distribution_list_details_newspaper_number"),
        "distribution_list_details",
        ["newspaper_number"],
    )
    op.create_table(
        "black_list_entries",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("newspaper_number", sa.Integer(), nullable=False),
        sa.Column("entry_key", sa.String(length=64), nullable=False),
        sa.Column("data", sa.JSON(), nullable=False),
        sa.Column("created_at", Timestamp, nullable=False),
        sa.Column("updated_at", Timestamp, nullable=False),
        sa.Column("removed_at", Timestamp, nullable=True),
        sa.Column("run_id", sa.Integer(), nullable=True),
        _run_fk("black_list_entries"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_black_list_entries")),
        sa.UniqueConstraint(
            "newspaper_number", "entry_key", name=op.f("uq_black_list_entries_newspaper_number_entry_key")
        ),
    )
    op.create_index(
        op.f("ix_black_list_entries_newspaper_number"), "black_list_entries", ["newspaper_number"]
    )
    op.create_table(
        "master_data_changes",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("entity", sa.String(length=64), nullable=False),
        sa.Column("entity_key", sa.String(length=200), nullable=False),
        sa.Column("change", sa.String(length=16), nullable=False),
        sa.Column("field", sa.String(length=200), nullable=True),
        sa.Column("old_value", sa.JSON(), nullable=True),
        sa.Column("new_value", sa.JSON(), nullable=True),
        sa.Column("changed_at", Timestamp, nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=True),
        _run_fk("master_data_changes"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_master_data_changes")),
    )
    op.create_index(op.f("ix_master_data_changes_entity"), "master_data_changes", ["entity"])
    op.create_index(op.f("ix_master_data_changes_entity_key"), "master_data_changes", ["entity_key"])


def downgrade() -> None:
    op.drop_table("master_data_changes")
    op.drop_table("black_list_entries")
    op.drop_table("distribution_list_details")
    op.drop_table("distribution_lists")
    op.drop_table("newspaper_summaries")
