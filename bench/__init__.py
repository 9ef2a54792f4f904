"""Benchmarks of the address pipeline (``make bench``): each runs a candidate and its baseline alternately and
reports medians, the ratio and the target; results go to ``bench/results.json``.
"""
