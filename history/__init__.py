"""Run history in SQL: every run, step, remote job and downloaded document, so a re-run resumes.

SQLite by default, PostgreSQL in production; the schema is migrated with Alembic on first use::

    factory = session_factory(settings.effective_database_url)
    with factory.begin() as session:
        run = start_run(session, flow="purchase-newspapers", idempotency_key=key, parameters=params)
"""

# The names are those of __init__.pyi: each module is imported when one of its names is first looked up,
# so a flow that records its run does not load the reference data's tables of every API.
import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
