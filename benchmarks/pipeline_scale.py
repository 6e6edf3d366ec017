"""Pipeline scale: `reuse-data build` on synthetic publishers of 10k to 10M bench measurements.

For each size, `reuse-data demo generate` writes a publisher with that many bench readings
and one product per ``READINGS_PER_PRODUCT`` readings (the editorial export is the demo's),
then in a fresh home:

- build: wall time and peak memory (the build process and every child, dbt included) of
  `reuse-data build`: ingest, every dbt model and test, snapshot, publish;
- floor: DuckDB alone reading the same raw CSV files into a table, every cell as text, the
  files grouped by delimiter and the delimiter given (the fastest bare read; the one XLSX
  workbook is left out, DuckDB cannot read it offline). The ratio build/floor is the figure
  that counts: absolute times drift on shared machines;
- snapshot: the size of the published DuckDB file;
- first byte: of ``bench.jsonl?product=…`` (one product's slots) from that snapshot, on a
  fresh `reuse-data serve`, median and worst of ``FIRST_BYTE_ROUNDS`` requests;
- publish: the publish asset's own seconds in that build (every file written: there is no
  release before it), the baseline of the next figure;
- unchanged: the publish asset materialised again on its own (`dagster asset materialize`)
  with nothing changed: its own seconds (beside the cold publish above), and the command's
  wall time, Dagster's start included;
- incremental: with a dagster-daemon running (as `make dev` runs it), one tester uploads one
  sheet through a real intake (`reuse-data upload`); the daemon's intake sensor launches the
  build: seconds from the upload to the receipt being in a published snapshot, sensor tick
  and run launch included, how many sheets that build read, and its publish's own seconds.

Targets: growth near linear (10M no more than 12 times 1M), 10M built in under
4 minutes with peak memory under 6 GB, first byte under 100 ms, incremental under a minute.
Publishing costs what changed: a publish with nothing changed under 10 s at 10M.

Generated inputs are kept under ``$REUSE_DATA_HOME/bench/pipeline/`` and reused when their
size and seed match (10M takes minutes to write); the homes are rebuilt every run.

    python -m benchmarks.pipeline_scale [--sizes 10k,100k,1M,10M] [--record]
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import duckdb

from ask.model.store import MANIFEST_FILE
from benchmarks import results
from benchmarks.load import first_byte_ms
from benchmarks.results import add_record_option, machine, markdown_table
from foundations.settings import PROJECT_ROOT, load_settings
from inputs.ask_inputs import SHIPPED_ENCODER_FOLDER
from inputs.bench_sheets import SHEET_COLUMNS, csv_separator
from intake.store import IntakeStore
from pipelines.build import latest_materialization_metadata
from release.local_store import current_version, snapshot_path
from tests.support.harness import dagster_daemon, home_environment, home_layout, measured_run, serving

READINGS_PER_PRODUCT = 100
SEED = 2026
FIRST_BYTE_ROUNDS = 20
GROWTH_TARGET, BUILD_TARGET_S, MEMORY_TARGET_MB = 12.0, 240.0, 6144.0
FIRST_BYTE_TARGET_MS, INCREMENTAL_TARGET_S = 100.0, 60.0
UNCHANGED_PUBLISH_TARGET_S = 10.0
SHEET_BUILD_SHARE_TARGET = 0.35  # at 1M, of the cold build's run
CLI = [sys.executable, "-m", "reuse_data.cli"]
PUBLISH_ASSET = ["published", "snapshot"]
MATERIALIZE_PUBLISH = [
    str(Path(sys.executable).parent / "dagster"),
    *("asset", "materialize", "-m", "pipelines.definitions", "--select", "/".join(PUBLISH_ASSET)),
]
# What dagster-daemon logs each time it evaluates the intake sensor.
SENSOR_TICK_LOG = "Checking for new runs for sensor: intake_inbox"


@dataclass
class ScaleRun:
    measurements: int
    products: int
    rows_ingested: int
    floor_s: float
    build_s: float
    peak_mb: float
    snapshot_mb: float
    release_mb: float
    cold_run_s: float  # the cold build's Dagster run, without the command's start
    incremental_run_s: float  # the Dagster run the uploaded sheet started
    first_byte_p50_ms: float
    first_byte_max_ms: float
    upload_s: float
    incremental_s: float
    incremental_sheets_read: int
    cold_publish_s: float  # the build's publish, with no release before it
    unchanged_publish_s: float  # the publish asset's own seconds, nothing changed
    unchanged_command_s: float  # the same, as `dagster asset materialize` took it
    incremental_publish_s: float  # the publish of the build the uploaded sheet started


def parse_size(text: str) -> int:
    """'10k' → 10_000, '1M' → 1_000_000, '2500' → 2500."""
    multiplier = {"k": 1_000, "m": 1_000_000}.get(text[-1].lower(), 1)
    return int(float(text[:-1] if multiplier > 1 else text) * multiplier)


def parse_sizes(text: str) -> list[int]:
    """'10k,1M' → [10_000, 1_000_000], smallest first."""
    return sorted(parse_size(size) for size in text.split(","))


def size_label(size: int) -> str:
    for unit, divisor in (("M", 1_000_000), ("k", 1_000)):
        if size >= divisor and size % divisor == 0:
            return f"{size // divisor}{unit}"
    return str(size)


def inputs_folder() -> Path:
    """Where generated publishers (and the homes built from them) are kept between runs."""
    folder = load_settings().home / "bench" / "pipeline"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def generated_inputs(folder: Path, measurements: int) -> Path:
    """The publisher of ``measurements`` readings under ``folder``, generated unless already there."""
    products = max(13, measurements // READINGS_PER_PRODUCT)
    inputs = folder / f"inputs-{size_label(measurements)}"
    stamp = inputs / "generated.json"
    # The demo's shipped encoder is copied in: inputs generated before it changed are stale.
    shipped = PROJECT_ROOT / "demo" / SHIPPED_ENCODER_FOLDER / MANIFEST_FILE
    encoder = hashlib.sha256(shipped.read_bytes()).hexdigest() if shipped.is_file() else None
    wanted = {"products": products, "measurements": measurements, "seed": SEED, "shipped_encoder": encoder}
    if stamp.exists() and json.loads(stamp.read_text()) == wanted:
        return inputs
    print(f"generating {size_label(measurements)} readings and {products} products in {inputs} …", flush=True)
    shutil.rmtree(inputs, ignore_errors=True)
    arguments = ["--products", str(products), "--measurements", str(measurements), "--seed", str(SEED)]
    subprocess.run([*CLI, "demo", "generate", *arguments, "--out", str(inputs)], cwd=PROJECT_ROOT, check=True)
    stamp.write_text(json.dumps(wanted))
    return inputs


def duckdb_floor(inputs: Path) -> tuple[float, int]:
    """Seconds for bare DuckDB to read every CSV sheet into a table, and the rows it read."""
    groups: dict[str, list[str]] = {}
    for path in sorted((inputs / "bench").glob("*.csv")):
        groups.setdefault(csv_separator(path), []).append(str(path))
    started = time.perf_counter()
    with duckdb.connect() as connection:
        for number, (separator, files) in enumerate(groups.items()):
            connection.execute(
                f"CREATE TABLE sheets_{number} AS SELECT * FROM read_csv(?, delim = ?, header = true, "
                "all_varchar = true, filename = true)",
                [files, separator],
            )
        seconds = time.perf_counter() - started
        rows = sum(connection.execute(f"SELECT count(*) FROM sheets_{n}").fetchall()[0][0] for n in range(len(groups)))
    return seconds, rows


def published_snapshot(home: Path) -> Path:
    store = home_layout(home).snapshots_dir
    return snapshot_path(store, current_version(store))


def one_new_sheet(snapshot: Path, folder: Path) -> tuple[Path, str]:
    """A sheet a tester would upload: the replicates of one pending slot, within the protocol's
    plausible range and dated today; and the tester's name."""
    with duckdb.connect(str(snapshot), read_only=True) as connection:
        [(product, protocol, unit, low, high, samples)] = connection.execute(
            "SELECT m.product_slug, m.protocol_slug, p.unit, p.plausible_min, p.plausible_max, p.sample_size "
            "FROM bench_measurements AS m JOIN protocols AS p USING (protocol_slug) "
            "ORDER BY m.status = 'pending' DESC, m.stream_position LIMIT 1"
        ).fetchall()
        [(tester,)] = connection.execute("SELECT person_name FROM people WHERE is_tester LIMIT 1").fetchall()
    today = dt.datetime.now(dt.UTC).date().isoformat()
    rows = [
        f"{product},{protocol},{n},{low + (high - low) * (0.4 + n / 100):.1f},{unit},{tester},{today},"
        for n in range(1, samples + 1)
    ]
    path = folder / "benchmark-session.csv"
    path.write_text(",".join(SHEET_COLUMNS) + "\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return path, tester


def wait_until(done: Callable[[], bool], daemon: subprocess.Popen, log: Path, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not done():
        if daemon.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"no {what} within {seconds:.0f} s; the daemon said:\n{log.read_text()[-3000:]}")
        time.sleep(0.2)


def upload_published_by_the_daemon(home: Path, env: dict[str, str], sheet: Path, tester: str) -> tuple[float, float]:
    """(seconds from the start of `reuse-data upload` until the sheet is in a published snapshot,
    seconds of the upload alone), the deployment doing the rest: a running dagster-daemon ticks
    the intake sensor, which launches the build. The daemon is up and its sensor has ticked
    once before the upload starts, as on a server that runs it all the time."""
    token = IntakeStore(home).add_tester(tester)
    log = home / "logs" / "daemon.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    with serving(home, command="intake", ready="/") as intake, dagster_daemon(env, log) as daemon:
        wait_until(lambda: SENSOR_TICK_LOG in log.read_text(), daemon, log, 300, "tick of the intake sensor")
        started = time.perf_counter()
        upload = [*CLI, "upload", str(sheet), "--url", f"http://127.0.0.1:{intake.port}", "--token", token, "--json"]
        done = subprocess.run(upload, env=env, cwd=PROJECT_ROOT, check=True, capture_output=True, text=True)
        upload_s = time.perf_counter() - started
        receipt, store = json.loads(done.stdout)["id"], IntakeStore(home)
        wait_until(lambda: store.receipt(receipt).published, daemon, log, 900, "published snapshot with the sheet")
        published_s = time.perf_counter() - started
        # The run goes on a moment after the receipt is marked (the asset's metadata): let it end.
        version = current_version(home_layout(home).snapshots_dir)
        wait_until(lambda: last_publish(home).get("version") == version, daemon, log, 60, "end of the publish run")
        return published_s, upload_s


def last_build_sheets_read(home: Path) -> int:
    """How many sheets the newest build's ingest read (from its Dagster metadata)."""
    metadata = latest_materialization_metadata(home_layout(home).dagster_home, ["raw", "bench_readings"])
    return int(metadata["sheets_read"])


def last_publish(home: Path) -> dict[str, object]:
    """The newest publish's Dagster metadata (its version, its own seconds, …)."""
    return latest_materialization_metadata(home_layout(home).dagster_home, PUBLISH_ASSET)


def last_run_seconds(home: Path) -> float:
    """How long the newest Dagster run of ``home`` took, from its start to its end."""
    from dagster import DagsterInstance

    with DagsterInstance.from_config(str(home_layout(home).dagster_home)) as instance:
        [run] = instance.get_runs(limit=1)
        stats = instance.get_run_stats(run.run_id)
    return stats.end_time - stats.start_time


def release_mb(home: Path) -> float:
    """The size of the current release: every file of its folder, linked ones included."""
    folder = published_snapshot(home).parent
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file()) / 2**20


def last_publish_seconds(home: Path) -> float:
    """The newest publish's own seconds."""
    return float(last_publish(home)["seconds"])


def publish_unchanged(home: Path, env: dict[str, str]) -> tuple[float, float]:
    """(the publish's own seconds, the command's) of the publish asset materialised alone, nothing
    having changed since the release it publishes after."""
    before = current_version(home_layout(home).snapshots_dir)
    started = time.perf_counter()
    subprocess.run(MATERIALIZE_PUBLISH, env=env, cwd=PROJECT_ROOT, check=True, capture_output=True)
    command_s = time.perf_counter() - started
    if current_version(home_layout(home).snapshots_dir) == before:
        raise RuntimeError("materialising the publish asset published nothing")
    return last_publish_seconds(home), command_s


def run_size(folder: Path, measurements: int) -> ScaleRun:
    label = size_label(measurements)
    inputs = generated_inputs(folder, measurements)
    products = json.loads((inputs / "generated.json").read_text())["products"]
    floor_s, rows = duckdb_floor(inputs)
    print(f"{label}: DuckDB reads the {rows} CSV rows in {floor_s:.1f} s; building …", flush=True)
    home = folder / f"home-{label}"
    shutil.rmtree(home, ignore_errors=True)
    env = home_environment(home, inputs)
    build = measured_run([*CLI, "build"], env)
    snapshot = published_snapshot(home)
    cold_publish_s, cold_run_s = last_publish_seconds(home), last_run_seconds(home)
    built = f"built in {build.seconds:.1f} s (publish {cold_publish_s:.1f} s), peak {build.peak_mb:.0f} MB"
    print(f"{label}: {built}", flush=True)
    with serving(home) as server:
        product = snapshot_first_product(snapshot)
        timings = first_byte_ms(server.port, f"/api/public/bench.jsonl?product={product}", FIRST_BYTE_ROUNDS)
    unchanged_s, unchanged_command_s = publish_unchanged(home, env)
    print(
        f"{label}: published again, nothing changed: {unchanged_s:.1f} s ({unchanged_command_s:.1f} s with Dagster)",
        flush=True,
    )
    sheet, tester = one_new_sheet(published_snapshot(home), folder)
    incremental_s, upload_s = upload_published_by_the_daemon(home, env, sheet, tester)
    print(f"{label}: one uploaded sheet published by the daemon in {incremental_s:.1f} s", flush=True)
    return ScaleRun(
        measurements=measurements,
        products=products,
        rows_ingested=rows,
        floor_s=floor_s,
        build_s=build.seconds,
        peak_mb=build.peak_mb,
        snapshot_mb=snapshot.stat().st_size / 2**20,
        release_mb=release_mb(home),
        cold_run_s=cold_run_s,
        incremental_run_s=last_run_seconds(home),
        first_byte_p50_ms=statistics.median(timings),
        first_byte_max_ms=max(timings),
        upload_s=upload_s,
        incremental_s=incremental_s,
        incremental_sheets_read=last_build_sheets_read(home),
        cold_publish_s=cold_publish_s,
        unchanged_publish_s=unchanged_s,
        unchanged_command_s=unchanged_command_s,
        incremental_publish_s=last_publish_seconds(home),
    )


def snapshot_first_product(snapshot: Path) -> str:
    with duckdb.connect(str(snapshot), read_only=True) as connection:
        return connection.execute("SELECT product_slug FROM products ORDER BY product_slug LIMIT 1").fetchall()[0][0]


def _growth(run: ScaleRun, previous: ScaleRun | None) -> str:
    if previous is None:
        return "—"
    return f"{run.build_s / previous.build_s:.1f}x / {run.measurements / previous.measurements:.0f}x"


# The table's columns, each heading beside the cell it heads: (heading, cell of a run and the run before it).
REPORT_COLUMNS: tuple[tuple[str, Callable[[ScaleRun, ScaleRun | None], object]], ...] = (
    ("readings", lambda run, _: size_label(run.measurements)),
    ("products", lambda run, _: run.products),
    ("DuckDB floor (s)", lambda run, _: f"{run.floor_s:.1f}"),
    ("build (s)", lambda run, _: f"{run.build_s:.1f}"),
    ("build / floor", lambda run, _: f"{run.build_s / run.floor_s:.1f}"),
    ("growth (time / size)", _growth),
    ("peak RSS (MB)", lambda run, _: f"{run.peak_mb:.0f}"),
    ("snapshot (MB)", lambda run, _: f"{run.snapshot_mb:.0f}"),
    ("release (MB)", lambda run, _: f"{run.release_mb:.0f}"),
    ("first byte p50 / max (ms)", lambda run, _: f"{run.first_byte_p50_ms:.0f} / {run.first_byte_max_ms:.0f}"),
    ("upload → published (s)", lambda run, _: f"{run.incremental_s:.1f}"),
    ("sheets re-read", lambda run, _: run.incremental_sheets_read),
    ("its publish (s)", lambda run, _: f"{run.incremental_publish_s:.1f}"),
    (
        "its build / the cold build (runs, s)",
        lambda run, _: (
            f"{run.incremental_run_s / run.cold_run_s:.2f} ({run.incremental_run_s:.0f} / {run.cold_run_s:.0f})"
        ),
    ),
    ("publish in the build (s)", lambda run, _: f"{run.cold_publish_s:.1f}"),
    (
        "publish, nothing changed (s)",
        lambda run, _: f"{run.unchanged_publish_s:.1f} ({run.unchanged_command_s:.0f} with Dagster)",
    ),
)


def report(runs: list[ScaleRun]) -> str:
    rows = [
        [cell(run, runs[index - 1] if index else None) for _, cell in REPORT_COLUMNS] for index, run in enumerate(runs)
    ]
    header = [heading for heading, _ in REPORT_COLUMNS]
    return markdown_table(header, rows, text_columns=1) + "\n\n" + verdicts(runs)


def verdicts(runs: list[ScaleRun]) -> str:
    """Each target of the issue against the largest run that bears on it."""
    by_size = {run.measurements: run for run in runs}
    largest = runs[-1]
    lines = []
    if 1_000_000 in by_size and 10_000_000 in by_size:
        growth = by_size[10_000_000].build_s / by_size[1_000_000].build_s
        lines.append(f"- 10M / 1M build time: {growth:.1f}x (target at most {GROWTH_TARGET:.0f}x)")
    if million := by_size.get(1_000_000):
        share = million.incremental_run_s / million.cold_run_s
        lines.append(
            f"- 1M: one uploaded sheet's build took {share:.2f} of the cold build "
            f"(target at most {SHEET_BUILD_SHARE_TARGET:.2f})"
        )
    label = size_label(largest.measurements)
    lines += [
        f"- {label}: built in {largest.build_s:.0f} s (target for 10M: under {BUILD_TARGET_S:.0f} s), "
        f"peak {largest.peak_mb:.0f} MB (target under {MEMORY_TARGET_MB:.0f} MB)",
        f"- {label}: first byte of a filtered bench.jsonl at most {largest.first_byte_max_ms:.0f} ms "
        f"(target under {FIRST_BYTE_TARGET_MS:.0f} ms)",
        f"- {label}: one uploaded sheet published {largest.incremental_s:.0f} s after the upload began "
        f"(target under {INCREMENTAL_TARGET_S:.0f} s; through the daemon: its sensor tick and run launch included), "
        f"{largest.incremental_publish_s:.0f} s of it publishing",
        f"- {label}: a publish with nothing changed took {largest.unchanged_publish_s:.1f} s "
        f"(target under {UNCHANGED_PUBLISH_TARGET_S:.0f} s at 10M), against {largest.cold_publish_s:.1f} s "
        "for the build's publish, which had no release to take files from",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.pipeline_scale",
        description=__doc__.split("\n\n")[0],
        epilog="Sizes accept k and M suffixes. 10M needs about 10 minutes to generate the first time.",
    )
    parser.add_argument("--sizes", default="10k,100k,1M", help="bench readings per run (default 10k,100k,1M)")
    add_record_option(parser)
    args = parser.parse_args(argv)
    sizes = parse_sizes(args.sizes)
    folder = inputs_folder()
    runs = [run_size(folder, size) for size in sizes]
    body = (
        f"Machine: {machine()}. Command: `python -m benchmarks.pipeline_scale --sizes {args.sizes}`. "
        f"One product per {READINGS_PER_PRODUCT} readings.\n\n{report(runs)}\n"
    )
    results.report("Pipeline scale", body, args.record)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
