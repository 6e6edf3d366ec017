"""The questions people asked, for the editors: the servers' records into the warehouse, and the
unanswered ones of the week as a table on the asset and a CSV.

``raw/asked_questions`` reads every record file under the home's questions folder, first
mirroring into it the day files the replicas uploaded to the object store the build publishes to
(``release.question_store``) and deleting the days older than the retention, here and in the
store; a file that reached it twice is read once. dbt makes the ``asked_questions`` mart of
them, which is not published (it has no contract: questions may hold what a person typed about
themselves).
``reports/unanswered_questions`` lists the most-asked questions of the last ``REPORT_DAYS``
whose latest asking got no answer.
"""

import datetime as dt

from dagster import AssetExecutionContext, AssetKey, MaterializeResult, MetadataValue, asset

from foundations.durable_files import replace_durably
from pipelines.resources import SettingsResource, WarehouseResource
from release.object_store import ReleaseStore
from release.question_store import MIRROR_FOLDER, QuestionStore
from warehouse.asked_questions import (
    ASKED_QUESTIONS_TABLE,
    distinct_files,
    drop_expired,
    load_asked_questions,
    most_asked_unanswered,
    report_csv,
    report_markdown,
)
from warehouse.catalog import RAW_SCHEMA
from warehouse.contract import MARTS_SCHEMA

REPORT_DAYS = 7
REPORT_ROWS = 50
REPORT_FILE = "unanswered-questions.csv"  # under the home's reports folder


@asset(
    key=AssetKey([RAW_SCHEMA, ASKED_QUESTIONS_TABLE]),
    group_name="raw",
    description="The questions asked of ask.json, one row per answer, answered or not, without who asked: "
    "the servers' day files under the home's questions folder, with the replicas' mirrored from the object "
    "store first (when the build publishes to one). Days older than the retention are deleted first, "
    "in the store too.",
    kinds={"python", "duckdb"},
)
def raw_asked_questions(
    context: AssetExecutionContext, warehouse: WarehouseResource, settings: SettingsResource
) -> MaterializeResult:
    resolved = settings.settings
    folder, today = resolved.questions_dir, dt.datetime.now(dt.UTC).date()
    store = ReleaseStore.configured(resolved.publish_to)
    metadata: dict[str, int] = {}
    if store is not None:
        mirrored = QuestionStore(store).mirror(folder / MIRROR_FOLDER, resolved.question_retention_days, today)
        context.log.info(
            f"the replicas' questions in {store.url}: {mirrored.files} day files, {mirrored.downloaded} new or "
            f"grown downloaded, {mirrored.expired} past the retention deleted from the store"
        )
        metadata = {
            "files from the store": mirrored.files,
            "downloaded (new or grown)": mirrored.downloaded,
            "deleted from the store (older than the retention)": mirrored.expired,
        }
    before = len(list(folder.rglob("*.jsonl"))) if folder.is_dir() else 0
    kept = drop_expired(folder, resolved.question_retention_days, today)
    files = distinct_files(kept, folder / MIRROR_FOLDER)
    with warehouse.connect() as connection:
        rows = load_asked_questions(connection, folder, files)
    context.log.info(f"{rows} questions asked, from {len(files)} day files under {folder}")
    return MaterializeResult(
        metadata={
            "dagster/row_count": rows,
            "files": len(files),
            "files dropped (older than the retention)": before - len(kept),
            "copies read once": len(kept) - len(files),
            **metadata,
            "retention (days)": resolved.question_retention_days,
            "folder": MetadataValue.path(str(folder)),
        }
    )


@asset(
    key=AssetKey(["reports", "unanswered_questions"]),
    group_name="questions",
    deps=[AssetKey([MARTS_SCHEMA, ASKED_QUESTIONS_TABLE])],
    description=f"The most-asked questions of the last {REPORT_DAYS} days whose latest asking got no answer: "
    "a table in this asset's metadata and a CSV under the home's reports folder. Each is a guide to write "
    "or a phrasing to add to the ask_phrasings seed.",
    kinds={"python", "csv"},
)
def unanswered_questions_report(
    context: AssetExecutionContext, warehouse: WarehouseResource, settings: SettingsResource
) -> MaterializeResult:
    resolved = settings.settings
    with warehouse.connect() as connection:
        rows = most_asked_unanswered(connection, MARTS_SCHEMA, REPORT_DAYS, REPORT_ROWS, dt.datetime.now(dt.UTC))
    path = resolved.reports_dir / REPORT_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    replace_durably(path, report_csv(rows), path.with_name(f".{REPORT_FILE}.writing"))
    context.log.info(f"{len(rows)} unanswered questions of the last {REPORT_DAYS} days, in {path}")
    return MaterializeResult(
        metadata={
            "dagster/row_count": len(rows),
            "unanswered questions": MetadataValue.md(report_markdown(rows, REPORT_DAYS)),
            "csv": MetadataValue.path(str(path)),
        }
    )
