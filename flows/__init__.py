"""Prefect flows: one process per module, one request model each.

In a run's process Prefect's engine is loaded before the flow's module. Importing this package there moves
what Prefect made (over 100,000 objects that live as long as the process) out of the cyclic garbage
collector's sight (:func:`gc.freeze`): every full collection while the flow's own modules load, and while
the run works, walks only what came after, not Prefect's heap again. Elsewhere (the command line reading a
request model) the package imports nothing and freezes nothing.
"""

import gc
import sys

if "prefect.main" in sys.modules:
    gc.freeze()
