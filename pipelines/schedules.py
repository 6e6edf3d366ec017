"""Jobs and schedules: one job builds and publishes everything, daily; another trains the ask
encoder, weekly once an operator turns its schedule on (where PyTorch is installed)."""

from dagster import AssetSelection, DefaultScheduleStatus, ScheduleDefinition, define_asset_job

from pipelines.encoder_training import train_ask_encoder

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

weekly_encoder_training = ScheduleDefinition(
    name="weekly_encoder_training",
    job=train_ask_encoder,
    cron_schedule="30 2 * * 0",
    execution_timezone="UTC",
    default_status=DefaultScheduleStatus.STOPPED,
    description="Train the ask encoder on the last build's library every Sunday at 02:30 UTC, before the daily "
    "build, which then serves it. Off until turned on: it needs PyTorch (make setup installs it).",
)
