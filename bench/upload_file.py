"""Benchmark 2: writing the upload file for the service, against a plain ``DataFrame.to_csv`` of the same
records in the same layout (target: at most 0.5× its time).
"""

from __future__ import annotations

from pathlib import Path

from bench.config import BenchConfig
from bench.data import write_address_file
from bench.measure import BenchResult, alternate, ratio_result
from fileio.address_service.records import read_address_file
from fileio.address_service.wire import write_upload_file

NAME = "upload_file"
TARGET = 0.5


def run(config: BenchConfig, workdir: Path) -> BenchResult:
    """Time ``write_upload_file`` against ``to_csv(sep="\\t", encoding="cp1252", lineterminator="\\r\\n")``.

    The address file is read once, outside the timing; both sides write the same accepted records.
    """
    source = write_address_file(workdir / "addresses.csv", config.upload_rows)
    addresses = read_address_file(source)
    candidate_path, baseline_path = workdir / "upload.txt", workdir / "upload-baseline.txt"

    def candidate() -> None:
        write_upload_file(addresses, candidate_path)

    def baseline() -> None:
        addresses.records.to_csv(
            baseline_path, sep="\t", encoding="cp1252", lineterminator="\r\n", index=False
        )

    timings = alternate(candidate, baseline, config.repeats)
    return ratio_result(
        NAME,
        "write_upload_file vs DataFrame.to_csv(sep='\\t', encoding='cp1252', lineterminator='\\r\\n')",
        timings,
        size={"rows": len(addresses.records), "columns": addresses.records.shape[1]},
        target=TARGET,
        comparison="at_most",
        info={
            "candidate_bytes": candidate_path.stat().st_size,
            "baseline_bytes": baseline_path.stat().st_size,
        },
    )
