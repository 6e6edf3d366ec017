"""Ingest assets: every raw input into a ``raw.*`` table of the build warehouse.

Rows keep their provenance (source file, its sha256, the row number a person sees, the
sheet of a workbook, when it was ingested). A file that cannot be read fails its asset with
a message naming file, row and column, and nothing downstream runs, so nothing is published.
"""

import datetime as dt

import polars as pl
from dagster import AssetExecutionContext, AssetKey, AssetsDefinition, Failure, MaterializeResult, MetadataValue, asset

from foundations.content_keys import value_key
from foundations.input_problems import InputProblems
from inputs.bench_sheets import SHEET_SUFFIXES, SheetError
from inputs.editorial_export import (
    EXPORT_TABLES,
    ExportError,
    ExportTable,
    export_files,
    export_schema,
    read_export_table,
)
from intake.store import IntakeStore, iso_utc
from pipelines.kept_work import kept, keyed_result
from pipelines.resources import InputsResource, SettingsResource, WarehouseResource
from warehouse.catalog import RAW_SCHEMA, column_names
from warehouse.raw_bench import BENCH_TABLE, SheetSource, folder_sources, load_bench_sheets


def write_raw_table(warehouse: WarehouseResource, table: str, frame: pl.DataFrame) -> int:
    """Replace ``raw.<table>`` with ``frame`` plus an ``_ingested_at`` column; return the row count."""
    ingested_at = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    incoming = frame.with_columns(pl.lit(ingested_at, dtype=pl.Datetime("us")).alias("_ingested_at")).to_arrow()
    with warehouse.connect() as connection:
        connection.execute(f"CREATE SCHEMA IF NOT EXISTS {RAW_SCHEMA}")
        connection.register("incoming", incoming)
        connection.execute(f'CREATE OR REPLACE TABLE {RAW_SCHEMA}."{table}" AS SELECT * FROM incoming')
    return len(frame)


def held_export_rows(warehouse: WarehouseResource, spec: ExportTable, digests: dict[str, str]) -> int | None:
    """The row count of ``raw.<table>`` when it already holds exactly these files (by sha256)
    with today's columns, so reading them again would change nothing; otherwise None."""
    with warehouse.connect() as connection:
        if column_names(connection, RAW_SCHEMA, spec.table) != [*export_schema(spec), "_ingested_at"]:
            return None
        held = connection.execute(
            f'SELECT _source_file, any_value(_source_sha256), count(*) FROM {RAW_SCHEMA}."{spec.table}" GROUP BY 1'
        ).fetchall()
    if {file: digest for file, digest, _ in held} != digests:
        return None
    return sum(rows for _, _, rows in held)


def _failure(error: InputProblems) -> Failure:
    return Failure(
        description=str(error),
        metadata={"problems": MetadataValue.json([vars(p) for p in error.problems[:200]])},
    )


def record_build_on_receipts(context: AssetExecutionContext, intake: IntakeStore) -> None:
    """Tell each unpublished receipt which run builds it and when that run started, so a tester
    sees it whether the intake or the sensor asked for the run."""
    run = context.instance.get_run_record_by_id(context.run_id)
    if run is None or not (pending := intake.unpublished()):
        return
    started = dt.datetime.fromtimestamp(run.start_time, dt.UTC) if run.start_time else dt.datetime.now(dt.UTC)
    intake.record_build(pending, context.run_id, iso_utc(run.create_timestamp), iso_utc(started))


@asset(
    key=AssetKey([RAW_SCHEMA, BENCH_TABLE]),
    group_name="raw",
    description="Every replicate row of every bench sheet (CSV and XLSX), as typed by the lab. "
    "Only new or changed sheets are read; rows of sheets that left the inputs are dropped.",
    kinds={"python", "duckdb"},
)
def raw_bench_readings(
    context: AssetExecutionContext, inputs: InputsResource, warehouse: WarehouseResource, settings: SettingsResource
) -> MaterializeResult:
    resolved = settings.settings
    sources = folder_sources(inputs.root / "bench", inputs.root, SHEET_SUFFIXES, resolved.bench_digests_path)
    # Sheets testers uploaded through the intake, withdrawn ones too (their slots become retest).
    intake = IntakeStore(resolved.home)
    receipts = intake.receipts()
    record_build_on_receipts(context, intake)
    sources += [
        SheetSource(intake.sheet_path(r), f"intake/{r.id}", r.sha256, r.id, r.status == "withdrawn") for r in receipts
    ]
    try:
        with warehouse.connect() as connection:
            outcome = load_bench_sheets(connection, sources, progress=context.log.info)
    except SheetError as error:
        raise _failure(error) from error
    context.log.info(
        f"{outcome.rows} readings from {outcome.sheets} sheets ({len(receipts)} from the intake): "
        f"{outcome.sheets_read} read, {outcome.sheets_dropped} dropped, {outcome.rows_added} rows added"
    )
    return MaterializeResult(
        metadata={
            "dagster/row_count": outcome.rows,
            "sheets": outcome.sheets,
            "intake_receipts": len(receipts),
            "sheets_read": outcome.sheets_read,
            "sheets_dropped": outcome.sheets_dropped,
            "rows_added": outcome.rows_added,
        }
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
            files = export_files(inputs.root, spec)
            held = held_export_rows(warehouse, spec, {display: digest for display, (_, digest) in files.items()})
            key = value_key({display: digest for display, (_, digest) in files.items()})
            if held is not None:
                return kept(
                    context.log.info,
                    f"{held} records from {len(files)} file(s)",
                    key,
                    {"dagster/row_count": held, "files": len(files)},
                )[0]
            frame = read_export_table(inputs.root, spec, files)
        except ExportError as error:
            raise _failure(error) from error
        rows = write_raw_table(warehouse, spec.table, frame)
        context.log.info(f"ingested {rows} records from {len(files)} file(s)")
        return keyed_result(key, False, {"dagster/row_count": rows, "files": len(files)})

    return _ingest


raw_export_assets = [build_export_asset(spec) for spec in EXPORT_TABLES]
ingest_assets = [raw_bench_readings, *raw_export_assets]
