"""The Dagster code location of reuse-data: ingest, dbt models, checks, publish, schedules."""
