"""Wall time and peak memory of `reuse-data build`, side by side with a baseline in the same run.

Runs, each in a fresh REUSE_DATA_HOME:

1. baseline: `dbt build` alone on a warehouse whose raw tables are already ingested, i.e. the
   SQL work without Dagster, ingest or publish (the floor of this stack);
2. the demo: `reuse-data build` on demo/ (ingest + dbt + snapshot + publish, all through Dagster);
3. the demo again, unchanged (what the daily schedule usually does);
4. a synthetic publisher `--scale` times the demo's size, to see how the build grows (none with
   ``--scale 0``).

Peak memory is the largest resident set of the build process or any of its children
(dbt runs as a child process). Prints a Markdown table; `--record` appends it to RESULTS.md.

    python benchmarks/build_demo.py [--scale 4] [--record]
"""

from __future__ import annotations

import argparse
import resource
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from benchmarks.results import add_record_option, machine, record  # noqa: E402
from foundations.settings import load_settings  # noqa: E402
from pipelines.project import write_profile  # noqa: E402
from tests.support.harness import home_environment, measured_run  # noqa: E402
from warehouse.reference_data import dbt_vars  # noqa: E402

DEMO_PRODUCTS, DEMO_MEASUREMENTS = 96, 2400


@dataclass
class Measurement:
    label: str
    seconds: float
    peak_mb: float
    note: str = ""


def measure(label: str, command: list[str], env: dict[str, str], note: str = "") -> Measurement:
    run = measured_run(command, env)
    return Measurement(label, run.seconds, run.peak_mb, note)


def run(scale: int) -> list[Measurement]:
    cli = [sys.executable, "-m", "reuse_data.cli"]
    dbt = str(Path(sys.executable).with_name("dbt"))
    results: list[Measurement] = []
    with tempfile.TemporaryDirectory(prefix="reuse-data-bench-") as scratch:
        scratch_dir = Path(scratch)
        demo_env = home_environment(scratch_dir / "demo", ROOT / "demo")
        results.append(
            measure(
                "reuse-data build, demo (first)", [*cli, "build"], demo_env, "ingest + dbt build + snapshot + publish"
            )
        )
        results.append(
            measure(
                "reuse-data build, demo (unchanged)", [*cli, "build"], demo_env, "what the daily schedule usually does"
            )
        )
        dbt_args = [
            "build",
            "--project-dir",
            str(ROOT / "sql"),
            "--profiles-dir",
            str(write_profile(load_settings(demo_env))),  # the profile a build writes
            "--target-path",
            str(scratch_dir / "demo" / "dbt" / "baseline"),
            *dbt_vars(load_settings(demo_env).base_url),  # the variables a build passes, the base URL among them
        ]
        results.insert(
            0,
            measure(
                "baseline: dbt build alone, demo",
                [dbt, *dbt_args],
                demo_env,
                "same SQL, no Dagster, no ingest, no publish",
            ),
        )
        if scale == 0:
            return results
        big_inputs = scratch_dir / "big-inputs"
        subprocess.run(
            [
                *cli,
                "demo",
                "generate",
                "--products",
                str(DEMO_PRODUCTS * scale),
                "--measurements",
                str(DEMO_MEASUREMENTS * scale),
                "--out",
                str(big_inputs),
            ],
            cwd=ROOT,
            check=True,
            stdout=subprocess.DEVNULL,
        )
        results.append(
            measure(
                f"reuse-data build, {scale}x demo",
                [*cli, "build"],
                home_environment(scratch_dir / "big", big_inputs),
                f"{DEMO_PRODUCTS * scale} products, ~{DEMO_MEASUREMENTS * scale} readings",
            )
        )
        shutil.rmtree(scratch_dir / "big", ignore_errors=True)
    return results


def table(results: list[Measurement]) -> str:
    baseline = results[0]
    lines = [
        "| run | wall time (s) | vs baseline | peak RSS (MB) | note |",
        "|---|---:|---:|---:|---|",
    ]
    for m in results:
        lines.append(
            f"| {m.label} | {m.seconds:.1f} | {m.seconds / baseline.seconds:.2f}x | {m.peak_mb:.0f} | {m.note} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", type=int, default=4, help="size of the synthetic run, in demos (default 4; 0: none)")
    add_record_option(parser)
    args = parser.parse_args()
    results = run(args.scale)
    report = (
        f"Machine: {machine()}. Command: `python benchmarks/build_demo.py --scale {args.scale}`.\n\n{table(results)}\n"
    )
    print(report)
    if args.record:
        print(f"appended to {record('Build: wall time and peak memory', report)}", file=sys.stderr)


if __name__ == "__main__":
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    main()
