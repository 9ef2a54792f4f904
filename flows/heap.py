"""Prefect loaded, and its heap set aside from the cyclic garbage collector.

Every flow module imports this module before its own: Prefect makes over 100,000 objects that live as long
as the process. Once they exist they are moved out of the collector's sight (:func:`gc.freeze`), so every
full collection while the flow's own modules load, and while the run works, walks only what came after,
not Prefect's heap again: about a third of a second less to import a flow module, in a run's process (whose
engine loaded Prefect first) and in a fresh interpreter alike. The package itself imports nothing, so the
command line reading a request model loads no Prefect.
"""

import gc

import prefect.main  # noqa: F401  (what ``from prefect import flow`` loads)

gc.freeze()
