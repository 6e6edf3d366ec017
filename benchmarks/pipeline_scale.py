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
- one sheet: with `dagster dev` running (webserver and daemon, as `make dev` runs them), one
  tester uploads one sheet through a real intake (`reuse-data upload`), which asks the webserver
  for the build as it accepts the sheet: seconds from the upload to the receipt being in a
  published snapshot, from the upload to the Dagster run's launch and to its start (and who
  launched the run), how many sheets that run read, and its ask, dbt and publish steps beside the cold
  build's; up to ``REWRITE_COMPARED_UP_TO`` readings, whether the release the sheet made is the
  release a whole rewrite makes of the same warehouse (``benchmarks.whole_rewrite``).

Targets, each a ratio within one run (the machine is noisy): one sheet costs at most 0.15 of
the cold build at 10M and 0.25 at 1M; its run starts at most 3 s after the upload is
accepted; it spends nothing on ask steps; its dbt step costs at most 0.25 of the cold build's;
a publish with nothing changed at most 0.05 of the cold publish; the sheet's release equals a
whole rewrite (checked at 1M). And growth near linear (10M
at most 12 times 1M), peak memory under 6 GB, first byte under 100 ms.

Generated inputs are kept under ``$REUSE_DATA_HOME/bench/pipeline/`` and reused when their
size and seed match (10M takes minutes to write); the homes are rebuilt every run.

    python -m benchmarks.pipeline_scale [--sizes 10k,100k,1M,10M] [--record]   (default 1M,10M)
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
from benchmarks.whole_rewrite import Comparison, compare_with_whole_rewrite
from foundations.settings import PROJECT_ROOT, load_settings
from inputs.ask_inputs import SHIPPED_ENCODER_FOLDER
from inputs.bench_sheets import SHEET_COLUMNS, csv_separator
from intake.build_request import REQUESTED_BY_TAG
from intake.store import IntakeStore
from pipelines.assets.ask_inputs import ask_inputs
from pipelines.assets.publish import PUBLISH_STEP
from pipelines.build import latest_materialization_metadata
from pipelines.project import DBT_STEP
from release.local_store import current_version, snapshot_path
from tests.support.harness import dagster_webserver, home_environment, home_layout, measured_run, serving, wait_for

READINGS_PER_PRODUCT = 100
SEED = 2026
FIRST_BYTE_ROUNDS = 20
GROWTH_TARGET, MEMORY_TARGET_MB, FIRST_BYTE_TARGET_MS = 12.0, 6144.0, 100.0
# Issue 56's targets, each a ratio to the cold build of the same run (the machine is noisy).
SHEET_SHARE_TARGETS = {10_000_000: 0.15, 1_000_000: 0.25}  # one sheet, upload to published / the cold build
SHEET_DBT_SHARE_TARGET = 0.25  # at 10M: the sheet's dbt step / the cold build's
RUN_START_TARGET_S = 3.0  # from the upload's acceptance to the run's start
REWRITE_COMPARED_UP_TO = 1_000_000  # readings: the sheet's release is compared with a whole rewrite up to this
UNCHANGED_PUBLISH_SHARE_TARGET = 0.05  # a publish with nothing changed / the cold build's publish
CLI = [sys.executable, "-m", "reuse_data.cli"]
PUBLISH_ASSET = ["published", "snapshot"]
MATERIALIZE_PUBLISH = [
    str(Path(sys.executable).parent / "dagster"),
    *("asset", "materialize", "-m", "pipelines.definitions", "--select", "/".join(PUBLISH_ASSET)),
]


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


# A pending slot of a product no recommendation picks, as most products at scale, with its
# protocol's general scoring rule (the first pending slot when there is none).
SHEET_SLOT_SQL = """
SELECT m.product_slug, m.protocol_slug, p.unit, p.plausible_min, p.plausible_max, p.sample_size,
    list_filter(p.scoring_rules, lambda rule: rule.category IS NULL)[1].zero_at AS zero_at
FROM bench_measurements AS m JOIN protocols AS p USING (protocol_slug)
ORDER BY m.status = 'pending' DESC, m.product_slug IN (SELECT product_slug FROM recommendations), m.stream_position
LIMIT 1
"""


def one_new_sheet(snapshot: Path, folder: Path) -> tuple[Path, str]:
    """A sheet a tester would upload: the replicates of one pending slot (``SHEET_SLOT_SQL``),
    dated today, and the tester's name. Its readings score 0 (the protocol's ``zero_at``, within
    the plausible range), so the product, not a pick before, is none after: the sheet moves no
    figure an ask entry quotes, and the ask steps have nothing to redo."""
    with duckdb.connect(str(snapshot), read_only=True) as connection:
        [(product, protocol, unit, low, high, samples, zero_at)] = connection.execute(SHEET_SLOT_SQL).fetchall()
        [(tester,)] = connection.execute("SELECT person_name FROM people WHERE is_tester LIMIT 1").fetchall()
    reading = min(max(zero_at if zero_at is not None else low, low), high)
    today = dt.datetime.now(dt.UTC).date().isoformat()
    rows = [f"{product},{protocol},{n},{reading:.1f},{unit},{tester},{today}," for n in range(1, samples + 1)]
    path = folder / "benchmark-session.csv"
    path.write_text(",".join(SHEET_COLUMNS) + "\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return path, tester


@dataclass
class SheetRun:
    """One uploaded sheet, from the upload to its release."""

    published_s: float  # from the start of `reuse-data upload` until the sheet is in a published snapshot
    upload_s: float  # the upload command alone: checking the sheet, keeping it, asking Dagster for the build
    # From the start of `reuse-data upload` (an upper bound on "from the upload's acceptance": the
    # command's own start and the sheet's checks come first) until the run was launched (created, on
    # Dagster's queue), and until it started (its process up, the pipeline's code loaded).
    run_created_s: float
    run_start_s: float
    requested_by: str  # who launched the run: the intake, or the sensor's tick


def upload_published_through_dagster(home: Path, env: dict[str, str], sheet: Path, tester: str) -> SheetRun:
    """One sheet uploaded with `dagster dev` running (as `make dev` runs it, webserver and daemon):
    the intake asks the webserver for the build as it accepts the sheet; the daemon starts the
    run. Dagster is up, its code location loaded (``dagster_webserver``), before the upload starts, as
    on a server that runs it all the time."""
    token = IntakeStore(home).add_tester(tester)
    log = home / "logs" / "dagster.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    with dagster_webserver(env, log) as dagster_url:
        environ = {"REUSE_DATA_DAGSTER_URL": dagster_url}
        with serving(home, command="intake", ready="/", environ=environ) as intake:
            started, started_wall = time.perf_counter(), time.time()
            upload = [*CLI, "upload", str(sheet), "--url", f"http://127.0.0.1:{intake.port}", "--token", token]
            done = subprocess.run([*upload, "--json"], env=env, cwd=PROJECT_ROOT, check=True, capture_output=True)
            upload_s = time.perf_counter() - started
            receipt, store = json.loads(done.stdout)["id"], IntakeStore(home)
            published = "a published snapshot with the sheet"
            wait_for(published, lambda: store.receipt(receipt).published, 900, log, poll=0.1)
            published_s = time.perf_counter() - started
            # The run goes on a moment after the receipt is marked (the asset's metadata): let it end.
            version = current_version(home_layout(home).snapshots_dir)
            ended = "the end of the publish run"
            wait_for(ended, lambda: last_publish(home).get("version") == version, 60, log, poll=0.1)
    run = last_run(home)
    requested_by = run.tags.get(REQUESTED_BY_TAG, "sensor")
    return SheetRun(published_s, upload_s, run.created_time - started_wall, run.start_time - started_wall, requested_by)


def last_build_sheets_read(home: Path) -> int:
    """How many sheets the newest build's ingest read (from its Dagster metadata)."""
    metadata = latest_materialization_metadata(home_layout(home).dagster_home, ["raw", "bench_readings"])
    return int(metadata["sheets_read"])


def last_publish(home: Path) -> dict[str, object]:
    """The newest publish's Dagster metadata (its version, its own seconds, …)."""
    return latest_materialization_metadata(home_layout(home).dagster_home, PUBLISH_ASSET)


@dataclass
class RunTimes:
    """The newest Dagster run of a home: when it started, how long it and its kinds of steps took."""

    created_time: float  # Unix time the run was launched
    start_time: float  # Unix time it started
    seconds: float
    step_seconds: dict[str, float]  # STEP_KINDS -> the seconds of its steps
    tags: dict[str, str]


ASK_GATE_STEP = ask_inputs.op.name
# Which steps of a run are which part of the pipeline, by step key.
STEP_KINDS: dict[str, Callable[[str], bool]] = {
    "ask": lambda key: "ask" in key and key != ASK_GATE_STEP,
    "ask gate": lambda key: key == ASK_GATE_STEP,  # finds whether an ask step has work to do
    "dbt": lambda key: key == DBT_STEP,
    "publish": lambda key: key == f"{'__'.join(PUBLISH_ASSET)}.{PUBLISH_STEP}",
}


def last_run(home: Path) -> RunTimes:
    """The newest Dagster run of ``home``, timed from its start to its end, step by step."""
    from dagster import DagsterInstance

    with DagsterInstance.from_config(str(home_layout(home).dagster_home)) as instance:
        [record] = instance.get_run_records(limit=1)
        run = record.dagster_run
        stats = instance.get_run_stats(run.run_id)
        steps = instance.get_run_step_stats(run.run_id)
    step_seconds = {  # a skipped step never started: it took no time
        kind: sum(
            step.end_time - step.start_time
            for step in steps
            if is_kind(step.step_key) and step.start_time and step.end_time
        )
        for kind, is_kind in STEP_KINDS.items()
    }
    created = record.create_timestamp.timestamp()
    return RunTimes(created, stats.start_time, stats.end_time - stats.start_time, step_seconds, dict(run.tags))


def release_mb(home: Path) -> float:
    """The size of the current release: every file of its folder, linked ones included."""
    folder = published_snapshot(home).parent
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file()) / 2**20


def publish_unchanged(home: Path, env: dict[str, str]) -> tuple[float, float]:
    """(the publish's own seconds, the command's) of the publish asset materialised alone, nothing
    having changed since the release it publishes after."""
    before = current_version(home_layout(home).snapshots_dir)
    started = time.perf_counter()
    subprocess.run(MATERIALIZE_PUBLISH, env=env, cwd=PROJECT_ROOT, check=True, capture_output=True)
    command_s = time.perf_counter() - started
    if current_version(home_layout(home).snapshots_dir) == before:
        raise RuntimeError("materialising the publish asset published nothing")
    return float(last_publish(home)["seconds"]), command_s


@dataclass
class ScaleRun:
    measurements: int
    products: int
    rows_ingested: int
    floor_s: float
    build_s: float  # `reuse-data build`, cold: its command's wall time
    peak_mb: float
    snapshot_mb: float
    release_mb: float
    cold: RunTimes  # the cold build's Dagster run
    first_byte_p50_ms: float
    first_byte_max_ms: float
    unchanged_publish_s: float  # the publish asset's own seconds, nothing changed
    unchanged_command_s: float  # the same, as `dagster asset materialize` took it
    sheet: SheetRun  # one uploaded sheet, upload to release
    sheet_build: RunTimes  # the Dagster run that built it
    sheets_read: int  # how many sheets that run's ingest read
    # The sheet's release against a whole rewrite of the same warehouse (None: not compared, past
    # ``REWRITE_COMPARED_UP_TO`` readings, where a whole publish takes minutes).
    rewrite: Comparison | None = None


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
    cold = last_run(home)
    built = f"built in {build.seconds:.1f} s (dbt {cold.step_seconds['dbt']:.1f} s, publish "
    print(f"{label}: {built}{cold.step_seconds['publish']:.1f} s), peak {build.peak_mb:.0f} MB", flush=True)
    with serving(home) as server:
        product = snapshot_first_product(snapshot)
        timings = first_byte_ms(server.port, f"/api/public/bench.jsonl?product={product}", FIRST_BYTE_ROUNDS)
    unchanged_s, unchanged_command_s = publish_unchanged(home, env)
    print(
        f"{label}: published again, nothing changed: {unchanged_s:.1f} s ({unchanged_command_s:.1f} s with Dagster)",
        flush=True,
    )
    sheet_file, tester = one_new_sheet(published_snapshot(home), folder)
    sheet = upload_published_through_dagster(home, env, sheet_file, tester)
    print(f"{label}: one uploaded sheet published in {sheet.published_s:.1f} s", flush=True)
    publish = last_publish(home)
    stages = {name.removeprefix("seconds/"): value for name, value in publish.items() if name.startswith("seconds/")}
    print(f"{label}: its publish, by stage: " + ", ".join(f"{k} {v:.1f} s" for k, v in stages.items()), flush=True)
    return ScaleRun(
        measurements=measurements,
        products=products,
        rows_ingested=rows,
        floor_s=floor_s,
        build_s=build.seconds,
        peak_mb=build.peak_mb,
        snapshot_mb=snapshot.stat().st_size / 2**20,
        release_mb=release_mb(home),
        cold=cold,
        first_byte_p50_ms=statistics.median(timings),
        first_byte_max_ms=max(timings),
        unchanged_publish_s=unchanged_s,
        unchanged_command_s=unchanged_command_s,
        sheet=sheet,
        sheet_build=last_run(home),
        sheets_read=last_build_sheets_read(home),
        rewrite=rewritten(home, measurements),
    )


def rewritten(home: Path, measurements: int) -> Comparison | None:
    """The current release of ``home`` against a whole rewrite at the same moment, up to
    ``REWRITE_COMPARED_UP_TO`` readings (said as it is compared)."""
    if measurements > REWRITE_COMPARED_UP_TO:
        return None
    layout = home_layout(home)
    release = published_snapshot(home).parent
    comparison = compare_with_whole_rewrite(release, layout.warehouse_path, load_settings().duckdb_memory_limit)
    said = f"{size_label(measurements)}: the sheet's release against a whole rewrite: {comparison.summary()}"
    print(said, flush=True)
    return comparison


def snapshot_first_product(snapshot: Path) -> str:
    with duckdb.connect(str(snapshot), read_only=True) as connection:
        return connection.execute("SELECT product_slug FROM products ORDER BY product_slug LIMIT 1").fetchall()[0][0]


def _growth(run: ScaleRun, previous: ScaleRun | None) -> str:
    if previous is None:
        return "—"
    return f"{run.build_s / previous.build_s:.1f}x / {run.measurements / previous.measurements:.0f}x"


def _beside(part: float, whole: float) -> str:
    """``part`` as a share of ``whole``, with both: '0.12 (5.0 / 41.3)'."""
    return f"{part / whole:.2f} ({part:.1f} / {whole:.1f})"


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
    ("sheet: upload → published / build (s)", lambda run, _: _beside(run.sheet.published_s, run.build_s)),
    (
        "sheet: upload → run launched / started (s)",
        lambda run, _: f"{run.sheet.run_created_s:.1f} / {run.sheet.run_start_s:.1f} ({run.sheet.requested_by})",
    ),
    ("sheet: sheets re-read", lambda run, _: run.sheets_read),
    ("sheet: ask steps (s)", lambda run, _: f"{run.sheet_build.step_seconds['ask']:.1f}"),
    ("sheet: ask gate (s)", lambda run, _: f"{run.sheet_build.step_seconds['ask gate']:.1f}"),
    (
        "sheet: dbt / cold dbt (s)",
        lambda run, _: _beside(run.sheet_build.step_seconds["dbt"], run.cold.step_seconds["dbt"]),
    ),
    (
        "sheet: publish / cold publish (s)",
        lambda run, _: _beside(run.sheet_build.step_seconds["publish"], run.cold.step_seconds["publish"]),
    ),
    ("sheet: release = a whole rewrite", lambda run, _: rewrite_cell(run.rewrite)),
    (
        "nothing changed: publish / cold publish (s)",
        lambda run, _: (
            _beside(run.unchanged_publish_s, run.cold.step_seconds["publish"])
            + f", {run.unchanged_command_s:.0f} with Dagster"
        ),
    ),
)


def rewrite_cell(comparison: Comparison | None) -> str:
    if comparison is None:
        return "not compared"
    same = f"{len(comparison.same_bytes)} same bytes, {len(comparison.same_rows)} same rows"
    return same if not comparison.different else f"**no**: {len(comparison.different)} differ; {same}"


def report(runs: list[ScaleRun]) -> str:
    rows = [
        [cell(run, runs[index - 1] if index else None) for _, cell in REPORT_COLUMNS] for index, run in enumerate(runs)
    ]
    header = [heading for heading, _ in REPORT_COLUMNS]
    return markdown_table(header, rows, text_columns=1) + "\n\n" + verdicts(runs)


def verdicts(runs: list[ScaleRun]) -> str:
    """Each target against the runs that bear on it, met or not."""
    by_size = {run.measurements: run for run in runs}
    largest = runs[-1]
    label = size_label(largest.measurements)

    def line(met: bool, text: str) -> str:
        return f"- {'met' if met else '**not met**'}: {text}"

    lines = []
    if 1_000_000 in by_size and 10_000_000 in by_size:
        growth = by_size[10_000_000].build_s / by_size[1_000_000].build_s
        lines.append(line(growth <= GROWTH_TARGET, f"10M / 1M build time {growth:.1f}x (at most {GROWTH_TARGET:.0f}x)"))
    for size, target in SHEET_SHARE_TARGETS.items():
        if run := by_size.get(size):
            share = run.sheet.published_s / run.build_s
            said = (
                f"{size_label(size)}: one sheet, upload to published, {share:.2f} of the cold build (at most {target})"
            )
            lines.append(line(share <= target, said))
    for run in runs:
        if run.rewrite is not None:
            said = f"{size_label(run.measurements)}: the sheet's release is a whole rewrite's: {run.rewrite.summary()}"
            lines.append(line(not run.rewrite.different, said))
    dbt_share = largest.sheet_build.step_seconds["dbt"] / largest.cold.step_seconds["dbt"]
    unchanged_share = largest.unchanged_publish_s / largest.cold.step_seconds["publish"]
    ask_s = largest.sheet_build.step_seconds["ask"]
    lines += [
        line(
            largest.sheet.run_start_s <= RUN_START_TARGET_S,
            f"{label}: the run started {largest.sheet.run_start_s:.1f} s after the upload began "
            f"(at most {RUN_START_TARGET_S:.0f} s after its acceptance); it was launched, by the "
            f"{largest.sheet.requested_by}, {largest.sheet.run_created_s:.1f} s after the upload began",
        ),
        line(
            ask_s == 0,
            f"{label}: the sheet's build spent {ask_s:.1f} s on ask steps (target 0), after "
            f"{largest.sheet_build.step_seconds['ask gate']:.1f} s finding whether they had work to do",
        ),
        line(
            dbt_share <= SHEET_DBT_SHARE_TARGET,
            f"{label}: the sheet's dbt step took {dbt_share:.2f} of the cold build's "
            f"(at most {SHEET_DBT_SHARE_TARGET})",
        ),
        line(
            unchanged_share <= UNCHANGED_PUBLISH_SHARE_TARGET,
            f"{label}: a publish with nothing changed took {unchanged_share:.3f} of the cold build's publish "
            f"(at most {UNCHANGED_PUBLISH_SHARE_TARGET})",
        ),
        line(
            largest.peak_mb <= MEMORY_TARGET_MB,
            f"{label}: the cold build's peak memory {largest.peak_mb:.0f} MB (under {MEMORY_TARGET_MB:.0f} MB); "
            f"build / floor {largest.build_s / largest.floor_s:.1f}",
        ),
        line(
            largest.first_byte_max_ms <= FIRST_BYTE_TARGET_MS,
            f"{label}: first byte of a filtered bench.jsonl at most {largest.first_byte_max_ms:.0f} ms "
            f"(under {FIRST_BYTE_TARGET_MS:.0f} ms)",
        ),
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.pipeline_scale",
        description=__doc__.split("\n\n")[0],
        epilog="Sizes accept k and M suffixes. 10M needs about 10 minutes to generate the first time.",
    )
    parser.add_argument("--sizes", default="1M,10M", help="bench readings per run (default 1M,10M)")
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
