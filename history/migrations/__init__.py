"""Alembic migrations of the run history (scripts live in ``versions/``)."""
