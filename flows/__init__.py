"""Prefect flows: one process per module, one request model each.

The package imports nothing: the command line reads a request model (:mod:`flows.requests`) without loading
Prefect. A flow module loads Prefect through :mod:`flows.heap`.
"""
