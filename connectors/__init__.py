"""Clients for the three postal APIs and the HTTP core they share.

Nothing in this package imports Prefect, the run history or the file layer: a connector speaks the wire
protocol of its API and raises the typed errors of :mod:`connectors.errors`.
"""
