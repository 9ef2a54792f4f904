"""Prefect tasks and helpers of the newspaper API pipelines: orders, master data, statistics, purchases and
structure files.
"""
