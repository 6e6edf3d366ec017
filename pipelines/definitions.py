"""The code location: every asset, check, job, schedule and sensor of reuse-data.

``build_definitions`` makes them for one ``Settings``: `reuse-data build` passes its own. Dagster's
tools (`dagster dev`, the daemon's code server, `dagster asset materialize -m pipelines.definitions`)
load ``defs``, which reads the settings from the environment of the process loading it, once, when
it is loaded: importing this module does nothing else.
"""

from collections.abc import Callable

from dagster import Definitions, definitions, in_process_executor

from foundations.settings import Settings, load_settings
from pipelines.assets.ask_decision import ask_decision
from pipelines.assets.ask_encoder import ask_encoder
from pipelines.assets.ask_index import ask_lexical_index
from pipelines.assets.ask_inputs import ask_inputs
from pipelines.assets.ask_uncovered import ask_uncovered_vectors
from pipelines.assets.ask_vectors import ask_entry_vectors
from pipelines.assets.asked_questions import raw_asked_questions, unanswered_questions_report
from pipelines.assets.dbt import dbt_models_asset
from pipelines.assets.ingest import ingest_assets
from pipelines.assets.publish import published_snapshot_asset
from pipelines.checks import translation_checks
from pipelines.encoder_training import train_ask_encoder
from pipelines.project import dbt_project, published_marts
from pipelines.resources import build_resources
from pipelines.schedules import build_and_publish, daily_build, weekly_encoder_training
from pipelines.sensors import intake_inbox


def build_definitions(settings: Settings, report: Callable[[str], None] = print) -> Definitions:
    """Every definition, for ``settings`` (the dbt project parsed first when it changed, said through ``report``)."""
    project = dbt_project(settings, report)
    return Definitions(
        assets=[
            *ingest_assets,
            dbt_models_asset(project),
            ask_inputs,
            ask_encoder,
            ask_lexical_index,
            ask_entry_vectors,
            ask_uncovered_vectors,
            ask_decision,
            published_snapshot_asset(published_marts(project)),
            raw_asked_questions,
            unanswered_questions_report,
        ],
        asset_checks=translation_checks,
        jobs=[build_and_publish, train_ask_encoder],
        schedules=[daily_build, weekly_encoder_training],
        sensors=[intake_inbox],
        resources=build_resources(settings, project),
        # One DuckDB file takes one writer at a time: run steps one after another.
        executor=in_process_executor,
    )


@definitions
def defs() -> Definitions:
    """The definitions for the settings of the process loading them (its environment)."""
    return build_definitions(load_settings())
