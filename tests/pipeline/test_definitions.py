"""The Dagster code location loads, with dbt sources mapped onto the ingest assets."""

import os

import pytest
from dagster import AssetKey

from foundations.settings import load_settings
from pipelines.ask_keys import ASK_INPUTS, ASK_WORK
from pipelines.assets.publish import ASK_STEPS, PUBLISH_STEP
from pipelines.project import dbt_project, manifest_is_stale, parsed_from, project_key, published_marts
from warehouse.contract import ASK_TABLES


@pytest.fixture(scope="module")
def defs():
    from pipelines.definitions import build_definitions

    return build_definitions(load_settings())  # parses the dbt project first: the manifest they load


def published() -> tuple[str, ...]:
    return published_marts(dbt_project(load_settings()))


def test_every_layer_is_an_asset(defs):
    keys = {key.to_user_string() for key in defs.resolve_asset_graph().get_all_asset_keys()}
    for expected in (
        "raw/bench_readings",
        "raw/products",
        "seeds/protocol_scoring",
        "staging/stg_bench_readings",
        "intermediate/int_slot_results",
        "snapshots/product_record_history",
        "marts/products",
        "published/snapshot",
    ):
        assert expected in keys


def test_dbt_sources_are_the_ingest_assets(defs):
    graph = defs.resolve_asset_graph()
    parents = graph.get(AssetKey(["staging", "stg_bench_readings"])).parent_keys
    assert AssetKey(["raw", "bench_readings"]) in parents
    # no dangling source assets: every raw/* key is materialised by an ingest asset
    raw = [k for k in graph.get_all_asset_keys() if k.path[0] == "raw"]
    assert raw and all(graph.get(k).is_materializable for k in raw)


def test_publish_waits_for_every_published_mart(defs):
    """Publish depends on every mart dbt's manifest gives an enforced contract, and on the ask
    engine's tables: no staging or intermediate model, no mart without a contract."""
    parents = defs.resolve_asset_graph().get(AssetKey(["published", "snapshot"])).parent_keys
    marts = published()
    assert {"products", "bench_measurements", "published_columns"} <= set(marts)
    assert "ask_texts" not in marts and not any(name.startswith(("stg_", "int_")) for name in marts)
    assert parents == {ASK_INPUTS, *(AssetKey(["marts", table]) for table in (*marts, *ASK_TABLES))}


def test_the_publish_waits_for_the_ask_steps_as_one_fan_in_that_the_gate_keeps_from_being_all_skipped(defs):
    """The build's plan: every ask step follows ``ask/work``, which the gate materialises only when one
    has work; the publish step fans in the ask tables with ``ask/inputs``, which the gate always
    materialises, so that skipped ask steps leave the publish to run (decision 54)."""
    from dagster._core.execution.api import create_execution_plan

    plan = create_execution_plan(defs.resolve_job_def("build_and_publish"))
    publish = plan.get_step_by_key(f"published__snapshot.{PUBLISH_STEP}")
    fanned = {handle.step_key for handle in publish.step_input_named(ASK_STEPS).get_step_output_handle_dependencies()}
    ask_steps = {f"marts__{table}" for table in ("ask_encoder", "ask_vectors", "ask_uncovered_vectors", "ask_decision")}
    assert fanned == {"ask_inputs", "ask_lexical_index", *ask_steps}
    graph = defs.resolve_asset_graph()

    def ancestors(key: AssetKey) -> set[AssetKey]:
        parents = graph.get(key).parent_keys
        return set(parents).union(*(ancestors(parent) for parent in parents))

    assert all(ASK_WORK in ancestors(AssetKey(["marts", table])) for table in ASK_TABLES)


def test_dbt_tests_are_asset_checks(defs):
    checks = {key.name for key in defs.resolve_asset_graph().asset_check_keys}
    assert "not_null_bench_measurements_status" in checks
    assert "null_exactly_when_bench_measurements_value__status_in_pending_retest_" in checks
    assert "assert_every_scenario_recommended" in checks


def test_daily_schedule_runs_the_whole_build(defs):
    schedule = defs.resolve_schedule_def("daily_build")
    assert schedule.job_name == "build_and_publish"
    assert schedule.cron_schedule == "15 4 * * *"


def test_the_encoder_training_is_a_job_apart_from_the_build_its_schedule_off_until_turned_on(defs):
    """A build never trains (it would need PyTorch and minutes): training is a job of its own, not
    in the build's selection, scheduled only where an operator turns it on."""
    from dagster import DefaultScheduleStatus

    schedule = defs.resolve_schedule_def("weekly_encoder_training")
    assert schedule.job_name == "train_ask_encoder"
    assert schedule.default_status == DefaultScheduleStatus.STOPPED
    assert defs.resolve_job_def("train_ask_encoder").graph.node_names() == ["train_ask_encoder_op"]
    assert "train_ask_encoder_op" not in defs.resolve_job_def("build_and_publish").graph.node_names()


def test_workspace_loads_like_dagster_dev_loads_it(defs, tmp_path):
    """`dagster definitions validate -w workspace.yaml` is what `dagster dev` loads, in a new process."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    from tests.conftest import PROJECT_ROOT

    dagster = Path(sys.executable).with_name("dagster")
    env = {**os.environ, "DAGSTER_HOME": str(tmp_path)}
    result = subprocess.run(
        [str(dagster), "definitions", "validate", "-w", "workspace.yaml"],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "All code locations passed validation" in result.stderr + result.stdout


def test_the_questions_asked_flow_to_the_editors_report_and_never_to_publish(defs):
    graph = defs.resolve_asset_graph()
    assert AssetKey(["raw", "asked_questions"]) in graph.get(AssetKey(["staging", "stg_asked_questions"])).parent_keys
    report = graph.get(AssetKey(["reports", "unanswered_questions"]))
    assert report.parent_keys == {AssetKey(["marts", "asked_questions"])}
    assert "asked_questions" not in published()
    assert AssetKey(["marts", "asked_questions"]) not in graph.get(AssetKey(["published", "snapshot"])).parent_keys


def test_a_manifest_parsed_from_other_project_files_is_stale_whatever_its_time(tmp_path):
    """A home copied or restored gives an old manifest a new time: staleness goes by content."""
    project = tmp_path / "sql"
    (project / "models").mkdir(parents=True)
    model = project / "models" / "example.sql"
    model.write_text("select 1 as one\n", encoding="utf-8")
    manifest = project / "target" / "manifest.json"
    manifest.parent.mkdir()
    manifest.write_text("{}", encoding="utf-8")
    assert manifest_is_stale(manifest, project)  # parsed from nobody knows what

    parsed_from(manifest).write(project_key(project))
    assert not manifest_is_stale(manifest, project)

    model.write_text("select 2 as two\n", encoding="utf-8")
    os.utime(model, (0, 0))  # the changed file looks older than the manifest, as after a copy
    assert manifest_is_stale(manifest, project)
