"""flow_import's ratios (bench/flow_import.py) compare each flow's import with the baseline imported beside
it: a machine that slows down between rounds moves both sides of a pair, not the ratio. No timing is
asserted; the figures are made up."""

from __future__ import annotations

import pytest

from bench.flow_import import Pair, flow_figures


def test_a_flow_is_compared_with_its_own_pairs_baseline() -> None:
    # The machine halves its pace in the last round: both imports of that pair take twice as long.
    measured = [
        Pair(flow=(1.05, 110_000), baseline=(0.70, 80_000)),
        Pair(flow=(1.02, 110_000), baseline=(0.68, 80_000)),
        Pair(flow=(2.10, 112_000), baseline=(1.40, 80_000)),
    ]
    figures = flow_figures(measured)
    assert figures["time"] == pytest.approx(1.5)
    assert figures["rss"] == pytest.approx(110_000 / 80_000)
    assert figures["median_s"] == pytest.approx(1.05)
    assert figures["peak_rss_mib"] == pytest.approx(110_000 / 1024)


def test_the_median_round_decides_not_an_outlier() -> None:
    measured = [
        Pair(flow=(1.40, 100_000), baseline=(1.00, 80_000)),
        Pair(flow=(3.00, 100_000), baseline=(1.00, 80_000)),  # something else ran beside the flow's import
        Pair(flow=(1.42, 100_000), baseline=(1.00, 80_000)),
    ]
    assert flow_figures(measured)["time"] == pytest.approx(1.42)
