"""What every layer may import and that imports nothing of ours: the root of the error tree
(:mod:`core.errors`), the process's one secret scrubber (:mod:`core.redaction`) and the Swiss day
(:mod:`core.swiss_time`).
"""
