"""The code location: every asset, check, job, schedule and sensor of reuse-data."""

from dagster import Definitions, in_process_executor

from pipelines.assets.ask_decision import ask_decision
from pipelines.assets.ask_encoder import ask_encoder
from pipelines.assets.ask_index import ask_lexical_index
from pipelines.assets.ask_uncovered import ask_uncovered_vectors
from pipelines.assets.ask_vectors import ask_entry_vectors
from pipelines.assets.asked_questions import raw_asked_questions, unanswered_questions_report
from pipelines.assets.dbt import dbt_models
from pipelines.assets.ingest import ingest_assets
from pipelines.assets.publish import published_snapshot
from pipelines.checks import translation_checks
from pipelines.resources import build_resources
from pipelines.schedules import build_and_publish, daily_build
from pipelines.sensors import intake_inbox

defs = Definitions(
    assets=[
        *ingest_assets,
        dbt_models,
        ask_encoder,
        ask_lexical_index,
        ask_entry_vectors,
        ask_uncovered_vectors,
        ask_decision,
        published_snapshot,
        raw_asked_questions,
        unanswered_questions_report,
    ],
    asset_checks=translation_checks,
    jobs=[build_and_publish],
    schedules=[daily_build],
    sensors=[intake_inbox],
    resources=build_resources(),
    # One DuckDB file takes one writer at a time: run steps one after another.
    executor=in_process_executor,
)
