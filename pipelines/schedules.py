"""Jobs and schedules: one job builds and publishes everything; it runs daily."""

from dagster import AssetSelection, DefaultScheduleStatus, ScheduleDefinition, define_asset_job

build_and_publish = define_asset_job(
    name="build_and_publish",
    selection=AssetSelection.all(),
    description="Ingest every raw input, run dbt (models, snapshots, tests) and publish a snapshot.",
)

daily_build = ScheduleDefinition(
    name="daily_build",
    job=build_and_publish,
    cron_schedule="15 4 * * *",
    execution_timezone="UTC",
    default_status=DefaultScheduleStatus.RUNNING,
    description="Rebuild and publish every morning at 04:15 UTC, so the change feed stays fresh.",
)
