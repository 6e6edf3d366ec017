"""The publish asset: the marts into a new immutable snapshot, then ``CURRENT`` switches."""

import hashlib
import time

from dagster import AssetExecutionContext, AssetKey, AssetsDefinition, MaterializeResult, MetadataValue, asset

from intake.store import IntakeStore
from pipelines.resources import SettingsResource, WarehouseResource
from publish.new_release import publish_release
from release.object_store import ReleaseStore
from warehouse.asked_questions import ASKED_QUESTIONS_TABLE
from warehouse.catalog import RAW_SCHEMA, table_names
from warehouse.contract import ASK_TABLES, MARTS_SCHEMA
from warehouse.raw_bench import QUALIFIED_TABLE

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


def published_snapshot_asset(published_marts: tuple[str, ...]) -> AssetsDefinition:
    """The publish asset, after every mart dbt's manifest publishes (``published_marts``) and the ask
    engine's tables."""

    @asset(
        key=AssetKey(["published", "snapshot"]),
        group_name="publish",
        deps=[AssetKey([MARTS_SCHEMA, table]) for table in (*published_marts, *ASK_TABLES)],
        description=(
            "Copies the published marts into a new read-only release (snapshot, documents, distributions, "
            "manifest), uploads it to the object store when REUSE_DATA_PUBLISH_TO names one, and switches "
            "CURRENT (the store's, then the local one) to it."
        ),
        kinds={"duckdb"},
    )
    def published_snapshot(
        context: AssetExecutionContext, warehouse: WarehouseResource, settings: SettingsResource
    ) -> MaterializeResult:
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
            f"from the release before, {len(info.patched_tables)} patched by row"
        )
        # The intake's sensor stops asking for a build once each receipt's status is published.
        IntakeStore(resolved.home).mark_published(published_receipts(warehouse))
        return MaterializeResult(
            metadata={
                "version": info.version,
                "path": MetadataValue.path(str(info.path)),
                "store": store.url if store else "local disk only",
                "size_bytes": info.size_bytes,
                "seconds": seconds,
                "written_bytes": info.size_bytes - shared_bytes,
                "shared_files": len(info.shared_files),
                "kept_tables": len(info.kept_tables),
                "patched_tables": ", ".join(info.patched_tables),
                **{f"rows/{table}": count for table, count in info.row_counts.items()},
            }
        )

    return published_snapshot
