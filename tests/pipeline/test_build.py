"""Real builds of the demo through `reuse-data build`: contents, idempotency, change detection,
failures that publish nothing, and rollback.

One module-scoped history of three builds: the demo (the suite's shared first build, into an
empty home), then, on a copy of that home, the demo again unchanged and the demo with one bench
sheet edited. The failure tests then run against the same home and check that the published
snapshot did not move.
"""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import math
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest
from openpyxl import load_workbook

from foundations.settings import load_settings
from pipelines.build import latest_materialization_metadata
from pipelines.project import write_profile
from release.local_store import current_version, open_snapshot, snapshot_path, versions
from tests.conftest import PROJECT_ROOT, copy_demo, demo_build_output, run_cli
from tests.support.harness import copy_home, edit_sheet_readings, start_build
from warehouse.reference_data import dbt_vars
from warehouse.relation_keys import held_key

SEEDS = PROJECT_ROOT / "sql" / "seeds"
EDITED_PRODUCT = "copperleaf-pouch-1000-ml"
EDITED_PROTOCOL = "leak-loss"


@dataclass
class History:
    home: Path
    inputs: Path
    outputs: list[str]
    versions: list[str]
    edited_sheets: list[Path]

    def snapshot(self, index: int) -> Path:
        return snapshot_path(self.home / "snapshots", self.versions[index])

    def query(self, index: int, sql: str) -> list[tuple]:
        with open_snapshot(self.snapshot(index)) as connection:
            return connection.execute(sql).fetchall()


def build(home: Path, inputs: Path) -> str:
    # The inputs as a tester's shell would name them, by the option: the edited sheet is read only if it is handed on.
    result = run_cli("build", "--inputs", str(inputs), home=home)
    assert result.returncode == 0, result.output[-4000:]
    return result.output


def kill_build_during_dbt(home: Path, inputs: Path) -> None:
    """Start a build and SIGKILL it (and dbt under it) while dbt is running the models."""
    process = start_build(home, inputs)
    try:
        for line in process.stdout:
            if "▸ dbt_models" in line:
                time.sleep(3)
                break
        else:
            pytest.fail("the build ended before dbt started")
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


@pytest.fixture(scope="module")
def history(tmp_path_factory, demo_home: Path) -> History:
    """Builds: the demo; the demo unchanged; a build killed during dbt; the demo with one sheet edited.

    The first is the suite's demo build (``demo_home``: `reuse-data build` of demo/ into an empty
    home, the same inputs as the copy here); the others run on a copy of its home, whose Dagster
    instance starts empty: nothing below may lean on what Dagster recorded of the first build.
    """
    root = tmp_path_factory.mktemp("pipeline")
    inputs = copy_demo(root / "inputs")
    home = copy_home(demo_home, root / "home")
    outputs, published = [demo_build_output(demo_home)], [current_version(home / "snapshots")]
    for step in ("unchanged", "killed", "one sheet edited"):
        if step == "killed":
            kill_build_during_dbt(home, inputs)
            assert current_version(home / "snapshots") == published[-1]
            continue
        if step == "one sheet edited":
            edited = edit_sheet_readings(inputs, EDITED_PRODUCT, EDITED_PROTOCOL, delta=-2.0)
        outputs.append(build(home, inputs))
        published.append(current_version(home / "snapshots"))
    return History(home=home, inputs=inputs, outputs=outputs, versions=published, edited_sheets=edited)


# --- the first build --------------------------------------------------------------------


def test_build_reports_progress_per_asset_and_a_summary(history: History):
    output = history.outputs[0]
    for asset in (
        "raw/bench_readings",
        "raw/products",
        "staging/stg_bench_readings",
        "marts/products",
        "snapshots/product_record_history",
        "published/snapshot",
    ):
        assert f"✓ {asset}" in output
    assert f"published snapshot {history.versions[0]}" in output.splitlines()[-1]


def test_demo_marts_have_the_promised_size(history: History):
    stats = dict(
        zip(
            [
                "products",
                "categories",
                "protocols",
                "planned",
                "measured",
                "pending",
                "readings",
                "recommendations",
                "answers",
                "editorial_items",
                "pages",
            ],
            history.query(
                0,
                "SELECT products, categories, protocols, planned_slots, measured_slots, pending_slots, "
                "readings, recommendations, answers, editorial_items, pages FROM dataset_statistics",
            )[0],
            strict=True,
        )
    )
    assert stats["products"] >= 80 and stats["categories"] >= 10 and stats["protocols"] >= 12
    assert stats["readings"] >= 2000
    assert stats["pending"] / stats["planned"] >= 0.05
    assert stats["recommendations"] >= 40 and stats["answers"] >= 120 and stats["editorial_items"] >= 60
    assert stats["pages"] == stats["editorial_items"] + stats["products"]
    by_type = dict(history.query(0, "SELECT content_type, count(*) FROM content GROUP BY ALL"))
    assert set(by_type) == {"guide", "comparison", "review", "post"}


def test_untested_slots_are_null_and_pending_never_estimated(history: History):
    rows = history.query(
        0,
        "SELECT status, value IS NULL, sub_score IS NULL, sample_size, count(*) "
        "FROM bench_measurements GROUP BY ALL ORDER BY ALL",
    )
    assert {(status, value_null, score_null) for status, value_null, score_null, _, _ in rows} == {
        ("measured", False, False),
        ("pending", True, True),
    }
    assert all(sample_size == 0 for status, _, _, sample_size, _ in rows if status == "pending")


def test_every_scenario_has_a_recommendation_in_every_language(history: History):
    scenarios = history.query(0, "SELECT count(*) FROM recommendations")[0][0]
    assert scenarios >= 40
    for lang in ("en", "zh", "el", "vi", "ar", "pa"):
        missing = history.query(
            0,
            f"SELECT count(*) FROM recommendations WHERE answer.{lang} IS NULL "
            f"OR answer.{lang} LIKE '%{{%' OR evidence.{lang} IS NULL",
        )
        assert missing == [(0,)], lang


def read_demo_readings(inputs: Path) -> list[dict]:
    """Every reading of every sheet, read with csv/openpyxl directly (not the project's readers)."""
    rows: list[dict] = []
    for path in sorted((inputs / "bench").iterdir()):
        if path.suffix == ".csv":
            text = path.read_text(encoding="utf-8")
            delimiter = ";" if text.splitlines()[0].count(";") > 1 else ","
            rows.extend(csv.DictReader(text.splitlines(), delimiter=delimiter))
        else:
            for sheet in load_workbook(path, read_only=True).worksheets:
                values = list(sheet.values)
                rows.extend(dict(zip(values[0], row, strict=True)) for row in values[1:])
    return rows


def recompute_overall_ratings(inputs: Path) -> dict[str, float]:
    """The overall rating of every tested product, recomputed by hand from the sheets and seeds."""
    replicates: dict[tuple, float] = {}
    for row in read_demo_readings(inputs):
        reading = float(str(row["reading"]).strip().replace(",", "."))
        if str(row["unit"]).strip() == "°F":
            reading = (reading - 32) * 5 / 9
        date = row["date"].date().isoformat() if isinstance(row["date"], dt.datetime) else row["date"].strip()
        key = (
            row["product"].strip().lower(),
            row["protocol"].strip(),
            int(row["sample"]),
            date,
            " ".join(row["tester"].split()),
        )
        replicates[key] = reading  # a session exported twice lands on the same key
    per_slot: dict[tuple[str, str], list[float]] = defaultdict(list)
    for (product, protocol, *_), reading in replicates.items():
        per_slot[(product, protocol)].append(reading)
    category = {}
    for line in (inputs / "editorial" / "products.jsonl").read_text(encoding="utf-8").splitlines():
        import json

        record = json.loads(line)
        category[record["slug"]] = record["category"]
    rules = {}
    with (SEEDS / "protocol_scoring.csv").open(encoding="utf-8") as handle:
        for rule in csv.DictReader(handle):
            rules[(rule["protocol"], rule["category"] or None)] = rule
    weighted: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for (product, protocol), readings in per_slot.items():
        rule = rules.get((protocol, category[product])) or rules[(protocol, None)]
        # As the warehouse does: each reading to 6 decimals, summed exactly.
        mean = float(sum(Decimal(r).quantize(Decimal("0.000001")) for r in readings) / len(readings))
        zero_at, full_at = float(rule["zero_at"]), float(rule["full_at"])
        score = round_half_up(100 * max(0.0, min(1.0, (mean - zero_at) / (full_at - zero_at))))
        weighted[product].append((score, float(rule["weight"])))
    return {
        product: round_half_up(
            float(sum(Decimal(str(s)) * Decimal(str(w)) for s, w in pairs) / sum(Decimal(str(w)) for _, w in pairs))
        )
        for product, pairs in weighted.items()
    }


def round_half_up(value: float) -> float:
    """One decimal, halves away from zero, as SQL's round() does (Python's round() goes to even)."""
    return math.floor(value * 10 + 0.5) / 10


def test_scores_recomputed_by_hand_from_the_sheets_match(history: History):
    expected = recompute_overall_ratings(PROJECT_ROOT / "demo")
    published = dict(history.query(0, "SELECT product_slug, overall_rating FROM products"))
    assert EDITED_PRODUCT in expected
    assert published[EDITED_PRODUCT] == pytest.approx(expected[EDITED_PRODUCT], abs=0.051)
    mismatched = {p: (published[p], r) for p, r in expected.items() if abs(published[p] - r) > 0.051}
    assert mismatched == {}


def test_dirty_inputs_are_normalised(history: History):
    with duckdb.connect(str(history.home / "warehouse" / "build.duckdb"), read_only=True) as connection:
        raw_rows = connection.execute("SELECT count(*) FROM raw.bench_readings").fetchone()[0]
        doubled = connection.execute(
            "SELECT count(*) FROM raw.bench_readings WHERE _source_file LIKE '%(exported again)%'"
        ).fetchone()[0]
        clean_rows = connection.execute("SELECT count(*) FROM staging.stg_bench_readings").fetchone()[0]
        fahrenheit = connection.execute(
            "SELECT raw_reading, reading, unit FROM staging.stg_bench_readings WHERE raw_unit = '°F' LIMIT 1"
        ).fetchone()
        comma = connection.execute(
            "SELECT b.reading, s.reading FROM raw.bench_readings b JOIN staging.stg_bench_readings s "
            "ON s.source_file = b._source_file AND s.source_row = b._source_row WHERE b.reading LIKE '%,%' LIMIT 1"
        ).fetchone()
        messy = connection.execute(
            "SELECT count(*) FROM staging.stg_bench_readings WHERE product_slug <> trim(lower(product_slug)) "
            "OR tester_name <> trim(tester_name) OR unit NOT IN (SELECT unit FROM staging.stg_protocols)"
        ).fetchone()[0]
        padded_raw = connection.execute(
            "SELECT count(*) FROM raw.bench_readings WHERE product <> trim(product) OR product <> lower(product)"
        ).fetchone()[0]
    assert doubled > 0 and clean_rows == raw_rows - doubled
    assert fahrenheit[2] == "°C" and fahrenheit[1] == pytest.approx((fahrenheit[0] - 32) * 5 / 9)
    assert float(comma[0].replace(",", ".")) == pytest.approx(comma[1])
    assert padded_raw > 0 and messy == 0


# --- rebuilds ---------------------------------------------------------------------------


def test_rebuild_with_unchanged_inputs_moves_no_changed_at(history: History):
    assert history.versions[0] != history.versions[1]
    sql = "SELECT url, changed_at FROM changes ORDER BY url"
    assert history.query(0, sql) == history.query(1, sql)


def test_rebuilds_keep_unchanged_inputs_without_reading_them_again(history: History):
    # The last build changed one sheet (and its copies): it read those alone, and no editorial export.
    dagster_home = load_settings({"REUSE_DATA_HOME": str(history.home)}).dagster_home
    bench = latest_materialization_metadata(dagster_home, ["raw", "bench_readings"])
    assert bench["sheets_read"] == len(history.edited_sheets) and bench["rows_added"] > 0
    for table in ("products", "answers", "content"):
        export = latest_materialization_metadata(dagster_home, ["raw", table])
        assert export["unchanged"] is True and export["dagster/row_count"] > 0, table


def test_editing_one_sheet_moves_exactly_the_affected_product(history: History):
    before = dict(history.query(1, "SELECT url, changed_at FROM changes"))
    after = dict(history.query(2, "SELECT url, changed_at FROM changes"))
    moved = {url for url in after if after[url] != before.get(url)}
    assert moved == {f"http://127.0.0.1:8000/products/{EDITED_PRODUCT}"}
    sql = f"SELECT value FROM bench_measurements WHERE measurement_id = '{EDITED_PRODUCT}:{EDITED_PROTOCOL}'"
    assert history.query(2, sql)[0][0] < history.query(1, sql)[0][0]
    expected = recompute_overall_ratings(history.inputs)[EDITED_PRODUCT]
    rating = history.query(2, f"SELECT overall_rating FROM products WHERE product_slug = '{EDITED_PRODUCT}'")[0][0]
    assert rating == pytest.approx(expected, abs=0.051)


INCREMENTAL_MODELS = ("stg_bench_readings", "int_slot_readings", "int_slot_results")
# Incremental by the groups of rows that changed (macros/changed_groups.sql): their schemas and keys.
CHANGED_GROUP_MODELS = {
    "int_product_records": ("intermediate", "product_slug"),
    "bench_measurements": ("marts", "measurement_id"),
    "products": ("marts", "product_slug"),
    "pages": ("marts", "path"),
    "corpus_documents": ("marts", "path"),
}


def run_dbt(home: Path, *args: str) -> None:
    """A bare `dbt run` of the models the bench readings feed on the warehouse of ``home``, with
    the profile a build writes."""
    settings = load_settings({"REUSE_DATA_HOME": str(home)})
    dbt = [str(Path(sys.executable).with_name("dbt")), "run", *args, "--select", "stg_bench_readings+"]
    dbt += ["--project-dir", str(PROJECT_ROOT / "sql"), "--profiles-dir", str(write_profile(settings))]
    dbt += ["--target-path", str(home / "target"), *dbt_vars(settings.base_url)]  # the history's builds' variables
    done = subprocess.run(dbt, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-3000:]


def held_staging_keys(warehouse: Path) -> tuple[str | None, str | None]:
    """The keys the staged readings and the slots aggregated from them hold."""
    with duckdb.connect(str(warehouse), read_only=True) as connection:
        return (
            held_key(connection, "staging", "stg_bench_readings"),
            held_key(connection, "intermediate", "int_slot_readings"),
        )


def change_raw_sheets(warehouse: Path) -> dict[str, str]:
    """Remove one sheet and withdraw another (each the only sheet of some slot) and change a
    reading of a third, straight in the raw table, as ingest would record them."""
    with duckdb.connect(str(warehouse)) as connection:
        only_sheets = connection.execute(
            "SELECT DISTINCT min(_source_file) FROM raw.bench_readings "
            "GROUP BY lower(trim(product)), lower(trim(protocol)) HAVING count(DISTINCT _source_file) = 1 ORDER BY 1"
        ).fetchall()
        removed, withdrawn = only_sheets[0][0], only_sheets[1][0]
        changed = connection.execute(
            "SELECT min(_source_file) FROM raw.bench_readings WHERE _source_file NOT IN (?, ?)", [removed, withdrawn]
        ).fetchall()[0][0]
        connection.execute("DELETE FROM raw.bench_readings WHERE _source_file = ?", [removed])
        connection.execute("UPDATE raw.bench_readings SET _withdrawn = true WHERE _source_file = ?", [withdrawn])
        first_row = "(SELECT min(_source_row) FROM raw.bench_readings WHERE _source_file = $sheet)"
        connection.execute(
            f"UPDATE raw.bench_readings SET _source_sha256 = 'changed', "
            f"reading = CASE WHEN _source_row = {first_row} THEN '1' ELSE reading END WHERE _source_file = $sheet",
            {"sheet": changed},
        )
    return {"removed": removed, "withdrawn": withdrawn, "changed": changed}


def test_incremental_models_equal_a_full_refresh(history: History, tmp_path: Path):
    """With sheets removed, withdrawn and changed since the last build, the incremental models
    built incrementally agree row for row with the same models rebuilt from scratch, and those
    incremental by changed groups rewrote those groups alone."""
    built = load_settings({"REUSE_DATA_HOME": str(history.home)}).warehouse_path
    homes = {name: tmp_path / name for name in ("incremental", "full")}
    incremental, full = (load_settings({"REUSE_DATA_HOME": str(home)}).warehouse_path for home in homes.values())
    incremental.parent.mkdir(parents=True)
    full.parent.mkdir(parents=True)
    shutil.copy(built, incremental)
    changes = change_raw_sheets(incremental)
    shutil.copy(incremental, full)
    before = {
        model: stored_rows(incremental, f"{schema}.{model}", key)
        for model, (schema, key) in CHANGED_GROUP_MODELS.items()
    }
    keys = [held_staging_keys(incremental)]
    run_dbt(homes["incremental"])
    keys.append(held_staging_keys(incremental))
    run_dbt(homes["incremental"])  # nothing changed since
    keys.append(held_staging_keys(incremental))
    run_dbt(homes["full"], "--full-refresh")
    keys.append(held_staging_keys(full))
    # The staged readings and slots hold the keys of their rows (macros/held_keys.sql), which
    # publish keys them by: each moves with every change of their rows and holds while they hold.
    for held in zip(*keys, strict=True):
        assert None not in held and held[1] == held[2] and len({held[0], held[1], held[3]}) == 3, keys
    with duckdb.connect(str(full)) as connection:
        connection.execute(f"ATTACH '{incremental}' AS incremental (READ_ONLY)")
        schemas = {model: "staging" if model.startswith("stg_") else "intermediate" for model in INCREMENTAL_MODELS}
        schemas.update({model: schema for model, (schema, _) in CHANGED_GROUP_MODELS.items()})
        for model, schema in schemas.items():
            columns = "* EXCLUDE (staged_at)" if model in ("stg_bench_readings", "int_slot_readings") else "*"
            ours, theirs = f"{schema}.{model}", f"incremental.{schema}.{model}"
            rows, differing = connection.execute(
                f"SELECT (SELECT count(*) FROM {ours}), count(*) FROM ("
                f"(SELECT {columns} FROM {ours} EXCEPT ALL SELECT {columns} FROM {theirs}) UNION ALL "
                f"(SELECT {columns} FROM {theirs} EXCEPT ALL SELECT {columns} FROM {ours}))"
            ).fetchall()[0]
            assert rows > 50 and differing == 0, model
        statuses = dict(
            connection.execute("SELECT status, count(*) FROM intermediate.int_slot_results GROUP BY ALL").fetchall()
        )
        left = connection.execute(
            "SELECT count(*) FROM staging.stg_bench_readings WHERE source_file = ?", [changes["removed"]]
        ).fetchall()[0][0]
    assert statuses.get("retest", 0) > 0 and left == 0, (statuses, changes)
    for model, (schema, key) in CHANGED_GROUP_MODELS.items():
        # The changed groups' rows were deleted and appended; the others lie where they lay, in the
        # same order (a table written whole would lie in the order its query made).
        after = stored_rows(incremental, f"{schema}.{model}", key)
        changed = [group for group, row in after.items() if before[model].get(group) != row]
        unchanged = [group for group in before[model] if group in after and group not in changed]
        assert 0 < len(changed) < len(after) / 4, (model, changed)
        assert list(after)[: -len(changed)] == unchanged and set(list(after)[-len(changed) :]) == set(changed), model


def stored_rows(warehouse: Path, relation: str, key: str) -> dict[str, tuple]:
    """The rows of ``relation`` by their ``key`` (unique), in the order DuckDB stores them."""
    with duckdb.connect(str(warehouse), read_only=True) as connection:
        rows = connection.execute(f"SELECT {key}, * FROM {relation} ORDER BY rowid").fetchall()
    return {row[0]: row[1:] for row in rows}


# --- failures publish nothing -----------------------------------------------------------


def test_a_build_killed_during_dbt_left_the_snapshot_and_the_next_build_worked(history: History):
    # The history killed a build between its second and third builds: the third still published,
    # exactly three snapshots exist, and nothing half-written is left beside them.
    assert versions(history.home / "snapshots") == history.versions
    assert not list((history.home / "snapshots").glob(".staging-*"))


def failing_build(history: History, tmp_path: Path, edit: Callable[[Path], None]) -> str:
    """Build a copy of the inputs changed by ``edit``: it must fail and publish nothing."""
    inputs = tmp_path / "inputs"
    shutil.copytree(history.inputs, inputs)
    edit(inputs)
    before = (current_version(history.home / "snapshots"), versions(history.home / "snapshots"))
    result = run_cli("build", home=history.home, inputs=inputs)
    assert result.returncode == 1, result.output[-3000:]
    assert (current_version(history.home / "snapshots"), versions(history.home / "snapshots")) == before
    assert not list((history.home / "snapshots").glob(".staging-*"))
    assert "nothing was published" in result.output
    return result.output


def add_sheet(sheet_name: str, rows: list[str]) -> Callable[[Path], None]:
    header = "product,protocol,sample,reading,unit,tester,date,notes\n"
    return lambda inputs: (inputs / "bench" / sheet_name).write_text(
        header + "".join(r + "\n" for r in rows), encoding="utf-8"
    )


def test_malformed_sheet_fails_naming_file_row_and_column(history: History, tmp_path: Path):
    output = failing_build(
        history,
        tmp_path,
        add_sheet(
            "2026-11-01_leak-loss_session-99.csv",
            [
                f"{EDITED_PRODUCT},leak-loss,1,2.5,ml,Jordan Ellis,2026-11-01,",
                f"{EDITED_PRODUCT},leak-loss,2,two and a half,ml,Jordan Ellis,2026-11-01,",
            ],
        ),
    )
    assert "bench/2026-11-01_leak-loss_session-99.csv, row 3, column 'reading': not a number" in output
    # The closing line names the step that stopped the build and the cause, not Dagster's wrapper of it.
    (closing,) = [line for line in output.splitlines() if line.endswith("then run `reuse-data build` again")]
    assert closing.startswith("  step raw__bench_readings failed: ") and "row 3, column 'reading'" in closing
    assert output.index("nothing was published") < output.index(closing)


def test_reading_of_an_unknown_product_fails_a_blocking_check(history: History, tmp_path: Path):
    output = failing_build(
        history,
        tmp_path,
        add_sheet(
            "2026-11-02_leak-loss_session-98.csv", ["no-such-bottle,leak-loss,1,2.5,ml,Jordan Ellis,2026-11-02,"]
        ),
    )
    assert "check failed: staging/stg_bench_readings:relationships_stg_bench_readings_product_slug" in output


# --- snapshots --------------------------------------------------------------------------


def test_snapshots_list_and_rollback(history: History):
    listing = run_cli("snapshots", "list", home=history.home)
    assert listing.returncode == 0
    lines = listing.output.splitlines()
    assert lines[1].startswith(f"* {history.versions[2]}")
    assert all(any(v in line for line in lines) for v in history.versions)

    rolled = run_cli("snapshots", "rollback", history.versions[0], home=history.home)
    assert rolled.returncode == 0, rolled.output
    assert current_version(history.home / "snapshots") == history.versions[0]
    assert f"* {history.versions[0]}" in run_cli("snapshots", "list", home=history.home).output

    unknown = run_cli("snapshots", "rollback", "20000101T000000000Z", home=history.home)
    assert unknown.returncode == 2 and "no snapshot 20000101T000000000Z" in unknown.output
    assert current_version(history.home / "snapshots") == history.versions[0]
    run_cli("snapshots", "rollback", history.versions[2], home=history.home)


def test_a_missing_translation_fails_a_check_naming_the_entry_and_language(history: History, tmp_path: Path):
    greek = '    el: "Τι διαφορά έχει το ανοξείδωτο ατσάλι 18/8 από το 316 σε ένα παγούρι;"\n'

    def drop_greek_question(inputs: Path) -> None:
        answers = inputs / "editorial" / "answers.yml"
        text = answers.read_text(encoding="utf-8")
        assert greek in text
        answers.write_text(text.replace(greek, ""), encoding="utf-8")

    output = failing_build(history, tmp_path, drop_greek_question)
    assert "check failed: marts/answers:translations_complete (insulated-bottles-02 question: el)" in output


# --- the ask engine's vectors -------------------------------------------------------------


def test_the_ask_vectors_embed_only_what_the_vector_cache_has_not_seen(history: History, tmp_path: Path):
    dagster_home = history.home / "dagster"
    # The demo built again: its texts are those embedded before, and the ask gate skips every ask step.
    assert "kept marts.ask_vectors: made from the same inputs before" in history.outputs[1]
    assert "Skipping step marts__ask_vectors" in history.outputs[1]

    english = '    en: "Is Reuse Lab Reviews sponsored by the brands it reviews?"\n'
    reworded = f"Do brands pay Reuse Lab Reviews for its reviews? ({uuid.uuid4().hex})"  # never seen before
    inputs = tmp_path / "inputs"
    shutil.copytree(history.inputs, inputs)
    answers = inputs / "editorial" / "answers.yml"
    text = answers.read_text(encoding="utf-8")
    assert english in text
    answers.write_text(text.replace(english, f'    en: "{reworded}"\n'), encoding="utf-8")
    # A build never trains: the same encoder embeds the reworded question, and the build says the
    # model lags by it (tests/pipeline/test_ask_training.py trains one).
    result = run_cli("build", home=history.home, inputs=inputs)
    assert result.returncode == 0, result.output[-4000:]
    assert "trained before 1 question of this library and on 1 question since removed" in result.output

    assert latest_materialization_metadata(dagster_home, ["marts", "ask_vectors"])["embedded"] == 1
    store = history.home / "snapshots"
    with open_snapshot(snapshot_path(store, current_version(store))) as db:
        rows = db.execute(
            "SELECT text_sha256, len(vector) FROM ask_vectors WHERE entry_id = 'general-03' AND field = 'question' "
            "AND language = 'en'"
        ).fetchall()
    assert rows == [(hashlib.sha256(reworded.encode()).hexdigest(), 384)]
