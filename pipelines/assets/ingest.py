"""Ingest assets: every raw input into a ``raw.*`` table of the build warehouse.

Rows keep their provenance (source file, its sha256, the row number a person sees, the
sheet of a workbook, when it was ingested). A file that cannot be read fails its asset with
a message naming file, row and column, and nothing downstream runs, so nothing is published.
"""

import datetime as dt

import polars as pl
from dagster import AssetExecutionContext, AssetKey, AssetsDefinition, Failure, MaterializeResult, MetadataValue, asset

from pipelines.resources import InputsResource, WarehouseResource
from reuse_data.bench_sheets import SHEET_COLUMNS, SHEET_SUFFIXES, SheetError, read_sheet
from reuse_data.editorial_export import EXPORT_TABLES, ExportError, ExportTable, read_export_table
from reuse_data.input_problems import InputProblems
from reuse_data.intake_store import IntakeStore
from reuse_data.settings import load_settings

RAW_SCHEMA = "raw"
BENCH_TABLE = "bench_readings"


def write_raw_table(warehouse: WarehouseResource, table: str, frame: pl.DataFrame) -> int:
    """Replace ``raw.<table>`` with ``frame`` plus an ``_ingested_at`` column; return the row count."""
    ingested_at = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    incoming = frame.with_columns(pl.lit(ingested_at, dtype=pl.Datetime("us")).alias("_ingested_at")).to_arrow()
    with warehouse.connect() as connection:
        connection.execute(f"CREATE SCHEMA IF NOT EXISTS {RAW_SCHEMA}")
        connection.register("incoming", incoming)
        connection.execute(f'CREATE OR REPLACE TABLE {RAW_SCHEMA}."{table}" AS SELECT * FROM incoming')
    return len(frame)


def _failure(error: InputProblems) -> Failure:
    return Failure(
        description=str(error),
        metadata={"problems": MetadataValue.json([vars(p) for p in error.problems[:200]])},
    )


@asset(
    key=AssetKey([RAW_SCHEMA, BENCH_TABLE]),
    group_name="raw",
    description="Every replicate row of every bench sheet (CSV and XLSX), as typed by the lab.",
    kinds={"python", "duckdb"},
)
def raw_bench_readings(
    context: AssetExecutionContext, inputs: InputsResource, warehouse: WarehouseResource
) -> MaterializeResult:
    bench_dir = inputs.root / "bench"
    paths = sorted(p for p in bench_dir.glob("*") if p.suffix.lower() in SHEET_SUFFIXES) if bench_dir.exists() else []
    frames: list[pl.DataFrame] = []
    problems = []
    for path in paths:
        try:
            frames.append(read_sheet(path, str(path.relative_to(inputs.root))))
        except SheetError as error:
            problems.extend(error.problems)
    # Sheets testers uploaded through the intake, withdrawn ones too (their slots become retest).
    intake = IntakeStore(load_settings().home)
    receipts = intake.receipts()
    for receipt in receipts:
        try:
            frame = read_sheet(intake.sheet_path(receipt), f"intake/{receipt.id}")
        except SheetError as error:
            problems.extend(error.problems)
            continue
        frames.append(
            frame.with_columns(
                pl.lit(receipt.id).alias("_receipt_id"), pl.lit(receipt.status == "withdrawn").alias("_withdrawn")
            )
        )
    if problems:
        raise _failure(SheetError(problems))
    empty = pl.DataFrame(
        schema={
            "_source_row": pl.Int64,
            **{c: pl.String for c in SHEET_COLUMNS},
            "_source_file": pl.String,
            "_source_sheet": pl.String,
            "_source_sha256": pl.String,
            "_receipt_id": pl.String,
            "_withdrawn": pl.Boolean,
        }
    )
    frame = pl.concat([empty, *frames], how="diagonal_relaxed") if frames else empty
    frame = frame.with_columns(pl.col("_withdrawn").fill_null(False))
    rows = write_raw_table(warehouse, BENCH_TABLE, frame)
    context.log.info(f"ingested {rows} readings from {len(paths)} sheets and {len(receipts)} intake receipts")
    return MaterializeResult(
        metadata={"dagster/row_count": rows, "sheets": len(paths), "intake_receipts": len(receipts)}
    )


def build_export_asset(spec: ExportTable) -> AssetsDefinition:
    """The ingest asset of one editorial export table."""

    @asset(
        name=spec.table,
        key_prefix=[RAW_SCHEMA],
        group_name="raw",
        description=f"Editorial export `{spec.pattern}`, one row per record.",
        kinds={"python", "duckdb"},
    )
    def _ingest(
        context: AssetExecutionContext, inputs: InputsResource, warehouse: WarehouseResource
    ) -> MaterializeResult:
        try:
            frame = read_export_table(inputs.root, spec)
        except ExportError as error:
            raise _failure(error) from error
        rows = write_raw_table(warehouse, spec.table, frame)
        files = frame.get_column("_source_file").n_unique() if rows else 0
        context.log.info(f"ingested {rows} records from {files} file(s)")
        return MaterializeResult(metadata={"dagster/row_count": rows, "files": files})

    return _ingest


raw_export_assets = [build_export_asset(spec) for spec in EXPORT_TABLES]
ingest_assets = [raw_bench_readings, *raw_export_assets]
