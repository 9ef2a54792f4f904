"""``python -m bench``: run the address pipeline benchmarks, print medians and ratios, write results JSON.

Each benchmark runs its candidate and baseline alternately ``--repeats`` times in this one run, so both
see the same machine; medians and their ratio are what count on a noisy machine. A full run of every
benchmark into the default results file also rewrites the Performance table of docs/performance.md
(``--readme`` does only that, from an existing results file).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("DO_NOT_TRACK", "1")

from rich.console import Console  # noqa: E402  (after the environment above, as Prefect reads it on import)
from rich.table import Table  # noqa: E402

from bench import (  # noqa: E402
    cli,
    completion,
    flow_import,
    flow_runs,
    queries,
    queries_limited,
    readme,
    report,
    result_file,
    review_xlsx,
    table_limits,
    upload_file,
    worker_run,
    xlsx,
    xlsx_read,
)
from bench.config import FULL, QUICK, BenchConfig  # noqa: E402
from bench.measure import BenchResult  # noqa: E402

BENCHMARKS: dict[str, Callable[[BenchConfig, Path], BenchResult]] = {
    result_file.NAME: result_file.run,
    upload_file.NAME: upload_file.run,
    xlsx.NAME: xlsx.run,
    xlsx_read.NAME: xlsx_read.run,
    review_xlsx.NAME: review_xlsx.run,
    queries.NAME: queries.run,
    queries_limited.NAME: queries_limited.run,
    completion.NAME: completion.run,
    flow_runs.SMALL_BATCH: flow_runs.run_small_batch,
    flow_runs.FLOW_OVERHEAD: flow_runs.run_flow_overhead,
    worker_run.NAME: worker_run.run,
    worker_run.CPU_NAME: worker_run.run_cpu,
    flow_import.NAME: flow_import.run,
    cli.REFUSE_NAME: cli.run_refuse,
    cli.HELP_NAME: cli.run_help,
    cli.HISTORY_NAME: cli.run_history,
    table_limits.NAME: table_limits.run,
    report.NAME: report.run,
}
DEFAULT_OUT = Path("bench/results.json")
QUICK_OUT = Path("bench/results.quick.json")
README = Path("docs") / "performance.md"  # the page that holds the Performance table


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument(
        "--quick", action="store_true", help="small sizes (a minute or two, not the targets')"
    )
    parser.add_argument("--repeats", type=int, help="rounds of candidate and baseline (default 3)")
    parser.add_argument(
        "--only", action="append", choices=sorted(BENCHMARKS), help="run only this (repeatable)"
    )
    parser.add_argument("--out", type=Path, help=f"results JSON (default {DEFAULT_OUT}; quick {QUICK_OUT})")
    sizes = parser.add_argument_group("sizes (override the full or quick defaults)")
    for field in dataclasses.fields(BenchConfig):
        if field.name in ("repeats", "openpyxl_reference"):
            continue
        flag = "--" + field.name.replace("_", "-")
        if field.type in (bool, "bool"):
            sizes.add_argument(flag, action="store_true", default=None, dest=field.name)
            continue
        kinds: dict[Any, type] = {float: float, "float": float, "str | None": str}
        sizes.add_argument(flag, type=kinds.get(field.type, int), dest=field.name)
    parser.add_argument("--no-openpyxl", action="store_true", help="skip the pandas to_excel reference")
    parser.add_argument(
        "--readme",
        nargs="?",
        const=README,
        type=Path,
        help=f"run nothing: rewrite the Performance section of this page (default {README}) from the "
        "results file (--out, default as above)",
    )
    return parser.parse_args(argv)


def config_from(args: argparse.Namespace) -> BenchConfig:
    """The quick or full configuration with the command line's overrides applied."""
    base = QUICK if args.quick else FULL
    overrides: dict[str, Any] = {
        field.name: getattr(args, field.name)
        for field in dataclasses.fields(BenchConfig)
        if getattr(args, field.name, None) is not None
    }
    if args.no_openpyxl:
        overrides["openpyxl_reference"] = False
    config = dataclasses.replace(base, **overrides)
    if config.repeats < 1:
        raise SystemExit("--repeats must be at least 1")
    return config


def run_benchmarks(
    config: BenchConfig,
    names: Sequence[str],
    console: Console | None = None,
    on_result: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Run the named benchmarks in a temporary directory; returns the results document.

    ``on_result`` gets the document after each benchmark, so a run that is stopped keeps what it measured.
    """
    started = time.perf_counter()
    document: dict[str, Any] = {
        "generated_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {
            "python": platform.python_version(),
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
        },
        "config": dataclasses.asdict(config),
        "wall_s": 0.0,
        "benchmarks": {},
    }
    with tempfile.TemporaryDirectory(prefix="postflows-bench-") as directory:
        for name in names:
            if console is not None:
                console.print(f"[bold]{name}[/bold] …")
            bench_started = time.perf_counter()
            workdir = Path(directory) / name
            workdir.mkdir()
            result = BENCHMARKS[name](config, workdir).to_dict()
            result["wall_s"] = round(time.perf_counter() - bench_started, 2)
            document["benchmarks"][name] = result
            document["wall_s"] = round(time.perf_counter() - started, 2)
            if console is not None:
                console.print(_one_line(result))
            if on_result is not None:
                on_result(document)
    return document


def _one_line(result: dict[str, Any]) -> str:
    line = (
        f"  {result['name']}: candidate {_seconds(result['candidate_median_s'])} s, baseline "
        f"{_seconds(result['baseline_median_s'])} s, {result['value_label']} {result['value']:.4g} "
        f"(target {result['target']}) {'pass' if result['passed'] else 'FAIL'} in {result['wall_s']:.0f} s"
    )
    bound = result["info"].get("seconds_bound")
    if bound:  # an absolute bound besides the ratio: the candidate's own time against it
        line += f"; candidate {bound['candidate_median_s']:.2f} s against the {bound['bound_s']:g} s bound"
    return line


def results_table(document: dict[str, Any]) -> Table:
    """Medians, ratio, target and verdict per benchmark; the ratio is candidate/baseline unless it says
    speed-up (baseline/candidate); completion shows how late the end was seen, as a share of the job."""
    table = Table(title=f"postflows benchmarks ({document['wall_s']:.0f} s)")
    for heading in ("benchmark", "size", "candidate median s", "baseline median s", "measured", "target", ""):
        table.add_column(heading, justify="right" if "median" in heading else "left")
    for result in document["benchmarks"].values():
        sign = "≤" if result["comparison"] == "at_most" else "≥"
        value = result["value"]
        shown = f"{value:.2%} late" if result["name"] == completion.NAME else f"{value:.2f}×"
        if result["comparison"] == "at_least":
            shown += " speed-up"
        target = f"{result['target']:.0%}" if result["name"] == completion.NAME else f"{result['target']}×"
        table.add_row(
            result["name"],
            ", ".join(f"{key}={value}" for key, value in result["size"].items()),
            _seconds(result["candidate_median_s"]),
            _seconds(result["baseline_median_s"]),
            shown,
            f"{sign} {target}",
            "[green]pass[/green]" if result["passed"] else "[red]FAIL[/red]",
        )
    return table


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    config = config_from(args)
    names = args.only or list(BENCHMARKS)
    out: Path = args.out or (QUICK_OUT if args.quick else DEFAULT_OUT)
    console = Console(width=max(Console().width, 132))  # a log file or CI is not 80 columns of table
    if args.readme is not None:
        try:
            readme.update_readme(out, args.readme)
        except (readme.ReadmeError, OSError) as error:
            console.print(f"[red]README not updated:[/red] {error}")
            return 2
        console.print(f"{args.readme}: Performance section rewritten from {out}")
        return 0
    out.parent.mkdir(parents=True, exist_ok=True)

    def write(document: dict[str, Any]) -> None:
        document["quick"] = bool(args.quick)
        out.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")

    document = run_benchmarks(config, names, console, on_result=write)
    write(document)
    console.print(results_table(document))
    console.print(f"results written to {out} in {document['wall_s']:.0f} s")
    if out == DEFAULT_OUT and not args.quick and not args.only and README.is_file():
        try:
            readme.update_readme(out, README)
        except readme.ReadmeError as error:
            console.print(f"[yellow]README not updated:[/yellow] {error}")
        else:
            console.print(f"{README}: Performance section rewritten")
    return 0


if __name__ == "__main__":
    sys.exit(main())
