"""The Dagster code location of reuse-data: the dbt project (``project``), the assets (``assets``),
checks, resources, schedules and sensors, assembled in ``definitions``; a build in-process
(``build``), one at a time (``build_lock``)."""
