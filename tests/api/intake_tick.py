"""One tick of the intake sensor, as the Dagster daemon runs it, for the tests (run in its own process).

    python -m tests.api.intake_tick [--launch]

Prints one JSON line: whether the sensor asked for a build, its skip reason or tags and asset
selection; with --launch, it then runs the requested build (the daemon's job, that selection)
and reports whether it published.
"""

from __future__ import annotations

import json
import sys

from foundations.settings import load_settings


def main() -> None:
    from pipelines.build import prepare_dagster_home

    settings = load_settings()
    prepare_dagster_home(settings)
    from dagster import DagsterInstance, RunRequest, build_sensor_context

    from pipelines.build import run_build
    from pipelines.definitions import build_definitions
    from pipelines.sensors import intake_inbox

    defs = build_definitions(settings)

    with (
        DagsterInstance.get() as instance,
        build_sensor_context(
            instance=instance, definitions=defs, resources={"settings": defs.resources["settings"]}
        ) as context,
    ):
        result = intake_inbox(context)
    report: dict[str, object] = {"requested": isinstance(result, RunRequest)}
    if isinstance(result, RunRequest):
        report["tags"] = result.tags
        selection = result.asset_selection
        report["selection"] = None if selection is None else [key.to_user_string() for key in selection]
        if "--launch" in sys.argv:
            outcome = run_build(settings, report=lambda line: None, tags=result.tags, asset_selection=selection)
            report["published"] = outcome.published_version
            report["errors"] = outcome.errors
    else:
        report["skip"] = result.skip_message
    print(json.dumps(report))


if __name__ == "__main__":
    main()
