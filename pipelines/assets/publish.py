"""The publish asset: the marts into a new immutable snapshot, then ``CURRENT`` switches."""

import hashlib
import time

from dagster import (
    AssetIn,
    AssetKey,
    AssetsDefinition,
    In,
    MetadataValue,
    Nothing,
    OpExecutionContext,
    Out,
    graph_asset,
    op,
)

from intake.store import IntakeStore
from pipelines.ask_keys import ASK_INPUTS
from pipelines.resources import SettingsResource, WarehouseResource
from publish.new_release import publish_release
from release.object_store import ReleaseStore
from warehouse.asked_questions import ASKED_QUESTIONS_TABLE
from warehouse.catalog import RAW_SCHEMA, table_names
from warehouse.contract import ASK_TABLES, MARTS_SCHEMA
from warehouse.raw_bench import QUALIFIED_TABLE

PUBLISHED_SNAPSHOT = AssetKey(["published", "snapshot"])
PUBLISH_STEP = "publish"  # the step's key: published__snapshot.publish
ASK_STEPS = "ask_tables"  # the publish step's one input that every ask table fans into
RAW_FINGERPRINT_SQL = f"SELECT DISTINCT _source_file, _source_sha256 FROM {RAW_SCHEMA}.{{table}} ORDER BY ALL"


def inputs_fingerprint(warehouse: WarehouseResource) -> str:
    """One hash over the sha256 of every raw input file the build read. The questions asked
    (``raw.asked_questions``) are no input of a release: nothing of them is published."""
    digest = hashlib.sha256()
    with warehouse.connect() as connection:
        for table in table_names(connection, RAW_SCHEMA):
            if table == ASKED_QUESTIONS_TABLE:
                continue
            for file, sha in connection.execute(RAW_FINGERPRINT_SQL.format(table=table)).fetchall():
                digest.update(f"{file}\0{sha}\n".encode())
    return digest.hexdigest()


def published_receipts(warehouse: WarehouseResource) -> dict[str, str]:
    """Intake receipt -> the status (accepted or withdrawn) this build ingested it with."""
    with warehouse.connect() as connection:
        rows = connection.execute(
            f"SELECT DISTINCT _receipt_id, _withdrawn FROM {QUALIFIED_TABLE} WHERE _receipt_id IS NOT NULL"
        ).fetchall()
    return {receipt: "withdrawn" if withdrawn else "accepted" for receipt, withdrawn in rows}


def publish(context: OpExecutionContext, warehouse: WarehouseResource, settings: SettingsResource) -> None:
    """Publish the warehouse's marts as a new release (the publish asset's one step)."""
    resolved = settings.settings
    # Opened before anything is written, so that a malformed address fails the build at once.
    store = ReleaseStore.configured(resolved.publish_to)
    started = time.perf_counter()  # the whole publish: fingerprint, release, upload
    info = publish_release(
        resolved.snapshots_dir,
        resolved.warehouse_path,
        inputs_fingerprint=inputs_fingerprint(warehouse),
        before_switch=(lambda folder: store.publish(folder, context.log.info)) if store else None,
        memory_limit=resolved.duckdb_memory_limit,
    )
    seconds = time.perf_counter() - started
    shared_bytes = sum((info.path / path).stat().st_size for path in info.shared_files)
    context.log.info(
        f"published snapshot {info.version} ({info.size_bytes / 1e6:.1f} MB) in {seconds:.1f} s: "
        f"{(info.size_bytes - shared_bytes) / 1e6:.1f} MB written, {len(info.shared_files)} files "
        f"({shared_bytes / 1e6:.1f} MB) and {len(info.kept_tables)} of {len(info.tables)} tables kept "
        f"from the release before, {len(info.patched_tables)} patched by row; "
        + ", ".join(f"{stage} {spent:.1f} s" for stage, spent in info.stage_seconds.items())
    )
    # The intake's sensor stops asking for a build once each receipt's status is published.
    IntakeStore(resolved.home).mark_published(published_receipts(warehouse))
    context.add_output_metadata(
        {
            "version": info.version,
            "path": MetadataValue.path(str(info.path)),
            "store": store.url if store else "local disk only",
            "size_bytes": info.size_bytes,
            "seconds": seconds,
            "written_bytes": info.size_bytes - shared_bytes,
            "shared_files": len(info.shared_files),
            "kept_tables": len(info.kept_tables),
            "patched_tables": ", ".join(info.patched_tables),
            **{f"seconds/{stage}": spent for stage, spent in info.stage_seconds.items()},
            **{f"rows/{table}": count for table, count in info.row_counts.items()},
        }
    )


def published_snapshot_asset(published_marts: tuple[str, ...]) -> AssetsDefinition:
    """The publish asset, after every mart dbt's manifest publishes (``published_marts``) and the ask
    engine's tables.

    It waits for each mart, and for the ask tables and ``ask/inputs`` as one fan-in (``ASK_STEPS``),
    which Dagster skips only when every step it fans in was skipped: when the ask gate
    (``pipelines/assets/ask_inputs.py``) skips the ask steps, ``ask/inputs`` is still there, so the
    publish runs and publishes the ask tables the warehouse holds. A failed step is no skipped one: the publish is then
    abandoned, as after any failure. (The marts cannot fan in too: their blocking dbt checks already
    make each a fan-in of its own, and Dagster nests none.)"""
    marts = {f"{MARTS_SCHEMA}__{table}": AssetKey([MARTS_SCHEMA, table]) for table in published_marts}
    ask_tables = {
        "__".join(key.path): key for key in (ASK_INPUTS, *(AssetKey([MARTS_SCHEMA, table]) for table in ASK_TABLES))
    }
    step = op(
        name=PUBLISH_STEP, ins={**{name: In(Nothing) for name in marts}, ASK_STEPS: In(Nothing)}, out=Out(Nothing)
    )(publish)

    @graph_asset(
        key=PUBLISHED_SNAPSHOT,
        ins={name: AssetIn(key=key, dagster_type=Nothing) for name, key in {**marts, **ask_tables}.items()},
        group_name="publish",
        description="Copies the published marts into a new read-only release (snapshot, documents, distributions, "
        "manifest), uploads it to the object store when REUSE_DATA_PUBLISH_TO names one, and switches CURRENT (the "
        "store's, then the local one) to it.",
        kinds={"duckdb"},
    )
    def published_snapshot(**after):
        return step(**{name: after[name] for name in marts}, **{ASK_STEPS: [after[name] for name in ask_tables]})

    return published_snapshot
