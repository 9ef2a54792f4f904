"""Migration scripts, one per schema change, applied in order by ``history.db.migrate``."""
