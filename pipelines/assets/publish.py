"""The publish asset: the marts into a new immutable snapshot, then ``CURRENT`` switches."""

import hashlib

from dagster import AssetExecutionContext, AssetKey, MaterializeResult, MetadataValue, asset

from pipelines.resources import WarehouseResource
from reuse_data.settings import load_settings
from warehouse.contract import MARTS_SCHEMA, PUBLISHED_TABLES
from warehouse.snapshots import publish

RAW_FINGERPRINT_SQL = "SELECT DISTINCT _source_file, _source_sha256 FROM raw.{table} ORDER BY ALL"


def inputs_fingerprint(warehouse: WarehouseResource) -> str:
    """One hash over the sha256 of every raw input file the build read."""
    digest = hashlib.sha256()
    with warehouse.connect() as connection:
        tables = [
            row[0]
            for row in connection.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = 'raw' ORDER BY table_name"
            ).fetchall()
        ]
        for table in tables:
            for file, sha in connection.execute(RAW_FINGERPRINT_SQL.format(table=table)).fetchall():
                digest.update(f"{file}\0{sha}\n".encode())
    return digest.hexdigest()


@asset(
    key=AssetKey(["published", "snapshot"]),
    group_name="publish",
    deps=[AssetKey([MARTS_SCHEMA, table]) for table in PUBLISHED_TABLES],
    description="Copies the published marts into a new read-only snapshot file and switches CURRENT to it.",
    kinds={"duckdb"},
)
def published_snapshot(context: AssetExecutionContext, warehouse: WarehouseResource) -> MaterializeResult:
    settings = load_settings()
    info = publish(settings.snapshots_dir, settings.warehouse_path, inputs_fingerprint=inputs_fingerprint(warehouse))
    context.log.info(f"published snapshot {info.version} ({info.size_bytes / 1e6:.1f} MB)")
    return MaterializeResult(
        metadata={
            "version": info.version,
            "path": MetadataValue.path(str(info.path)),
            "size_bytes": info.size_bytes,
            **{f"rows/{table}": count for table, count in info.row_counts.items()},
        }
    )
