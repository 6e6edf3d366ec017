"""Asking Dagster for a sheet's build the moment the intake accepts (or withdraws) it.

The intake stands before the pipeline in the flow and cannot import it, so it asks the Dagster
webserver over its GraphQL API (``REUSE_DATA_DAGSTER_URL``; by default the one `make dev` serves):

1. it has the pipeline's intake sensor evaluated (a dry run), so the sensor alone decides whether
   a build is due, and of which assets, exactly as it does on its own ticks;
2. it launches the run that evaluation requests, tagged as asked for by the intake. The run goes
   on Dagster's queue, which the daemon reads every second.

A run is launched only when the sensor's request carries this home's own digest of what is
unpublished (``intake.store.unpublished_state``): a webserver over another home, or a change that
came in meanwhile, launches nothing here. Whatever is not launched here (Dagster unreachable or
slower than ``REQUEST_BUDGET_S``, a build already running, a request refused) the sensor's next
tick launches: the sensor is the safety net, and a sheet is never lost for want of a launch. The
one race left, a tick launching between the dry run and the launch, costs a second build that
finds nothing to change.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from dataclasses import dataclass

from intake.store import IntakeStore, now_iso, unpublished_state

INTAKE_SENSOR = "intake_inbox"
"""The pipeline's sensor that builds what the intake accepted (``pipelines.sensors``)."""
INTAKE_STATE_TAG = "reuse-data/intake-state"
"""The run tag holding ``unpublished_state`` as it was when the build was asked for."""
REQUESTED_BY_TAG = "reuse-data/requested-by"
IN_FLIGHT = ["QUEUED", "NOT_STARTED", "STARTING", "STARTED"]  # Dagster's run statuses before an end
REQUEST_BUDGET_S = 10.0
"""How long asking Dagster may take, all its calls together, before the sheet is left to the
sensor's next tick (the tester's upload waits that long at worst; a launch takes 1 to 2 s, most of
it Dagster planning the run)."""
LATE_LOOKUP_S = 3.0
"""How long the intake looks for a run whose launch outlived ``REQUEST_BUDGET_S``."""

SENSORS_QUERY = """
query IntakeSensor {
  workspaceOrError {
    __typename
    ... on Workspace { locationEntries { name locationOrLoadError { __typename
      ... on RepositoryLocation { repositories { name sensors { name targets { pipelineName } } } }
    } } }
    ... on PythonError { message }
  }
}
"""
DRY_RUN_MUTATION = """
mutation IntakeSensorDryRun($selector: SensorSelector!, $cursor: String) {
  sensorDryRun(selectorData: $selector, cursor: $cursor) {
    __typename
    ... on DryRunInstigationTick { evaluationResult {
      skipReason error { message }
      runRequests { tags { key value } runConfigYaml assetSelection { path } assetChecks { name assetKey { path } } }
    } }
    ... on Error { message }
  }
}
"""
RUNS_QUERY = """
query IntakeBuildRuns($filter: RunsFilter!) {
  runsOrError(filter: $filter, limit: 1) { __typename ... on Runs { results { runId } } ... on Error { message } }
}
"""
LAUNCH_MUTATION = """
mutation IntakeBuild($params: ExecutionParams!) {
  launchRun(executionParams: $params) {
    __typename
    ... on LaunchRunSuccess { run { runId } }
    ... on Error { message }
  }
}
"""


class DagsterUnavailable(RuntimeError):
    """The webserver could not be reached, or did not answer as expected."""


@dataclass(frozen=True)
class BuildOutcome:
    """What came of asking: the run launched (None: none), and a sentence for the record."""

    run_id: str | None
    said: str


def graphql(url: str, query: str, variables: dict[str, object] | None = None, deadline: float | None = None) -> dict:
    """The ``data`` of one GraphQL call to the webserver at ``url``, answered before ``deadline``
    (a ``time.monotonic()``; by default ``REQUEST_BUDGET_S`` from now)."""
    deadline = deadline or time.monotonic() + REQUEST_BUDGET_S
    if (timeout := deadline - time.monotonic()) <= 0:
        raise DagsterUnavailable(f"Dagster at {url} took longer than {REQUEST_BUDGET_S:.0f} s to answer")
    body = json.dumps({"query": query, "variables": variables or {}}).encode()
    request = urllib.request.Request(
        f"{url.rstrip('/')}/graphql", data=body, method="POST", headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            answer = json.loads(response.read())
    except (urllib.error.URLError, OSError, ValueError) as error:
        raise DagsterUnavailable(f"no answer from Dagster at {url} ({error})") from error
    if answer.get("errors") or not isinstance(answer.get("data"), dict):
        messages = "; ".join(str(e.get("message")) for e in answer.get("errors") or [])
        raise DagsterUnavailable(f"Dagster at {url} refused the request: {messages or 'no data'}")
    return answer["data"]


def sensor_target(url: str, deadline: float | None = None) -> tuple[dict[str, str], str]:
    """The intake sensor's selector (code location, repository, name) and the job it launches."""
    workspace = graphql(url, SENSORS_QUERY, deadline=deadline)["workspaceOrError"]
    for entry in workspace.get("locationEntries") or []:
        location = entry.get("locationOrLoadError") or {}
        for repository in location.get("repositories") or []:
            for sensor in repository["sensors"]:
                if sensor["name"] == INTAKE_SENSOR and sensor["targets"]:
                    selector = {
                        "repositoryLocationName": entry["name"],
                        "repositoryName": repository["name"],
                        "sensorName": INTAKE_SENSOR,
                    }
                    return selector, sensor["targets"][0]["pipelineName"]
    raise DagsterUnavailable(f"Dagster at {url} has no sensor {INTAKE_SENSOR} loaded (is its code location broken?)")


def run_of_state(url: str, state: str, deadline: float) -> str | None:
    """The run in flight for ``state``, already launched by the sensor's tick (or an earlier request)."""
    tags = [{"key": INTAKE_STATE_TAG, "value": state}]
    runs = graphql(url, RUNS_QUERY, {"filter": {"tags": tags, "statuses": IN_FLIGHT}}, deadline)["runsOrError"]
    return runs["results"][0]["runId"] if runs.get("results") else None


def launch_requested_build(url: str, state: str) -> BuildOutcome:
    """Evaluate the intake sensor at ``url`` and launch the run it asks for, if that run is of
    ``state``, all within ``REQUEST_BUDGET_S``."""
    deadline = time.monotonic() + REQUEST_BUDGET_S
    selector, job = sensor_target(url, deadline)
    tick = graphql(url, DRY_RUN_MUTATION, {"selector": selector, "cursor": None}, deadline)["sensorDryRun"]
    if tick["__typename"] != "DryRunInstigationTick":
        return BuildOutcome(None, f"the sensor could not be evaluated: {tick.get('message', tick['__typename'])}")
    evaluation = tick["evaluationResult"] or {}
    if evaluation.get("error"):
        return BuildOutcome(None, f"the sensor failed: {evaluation['error']['message'].strip()}")
    requests = evaluation.get("runRequests") or []
    if not requests:
        if (run_id := run_of_state(url, state, deadline)) is not None:  # the sensor's tick was quicker
            return BuildOutcome(run_id, "already launched by the sensor")
        return BuildOutcome(None, f"no build asked for: {evaluation.get('skipReason') or 'the sensor skipped'}")
    [request] = requests
    tags = {tag["key"]: tag["value"] for tag in request["tags"]}
    if tags.get(INTAKE_STATE_TAG) != state:
        return BuildOutcome(
            None,
            f"Dagster at {url} would build another state of the intake (another home, or a newer change); "
            "left to its sensor",
        )
    tags[REQUESTED_BY_TAG] = "intake"
    params: dict[str, object] = {
        "selector": {
            **{key: selector[key] for key in ("repositoryLocationName", "repositoryName")},
            "jobName": job,
            "assetSelection": request["assetSelection"],
            "assetCheckSelection": request["assetChecks"],
        },
        "runConfigData": request["runConfigYaml"],
        "executionMetadata": {"tags": [{"key": key, "value": value} for key, value in tags.items()]},
    }
    try:
        launched = graphql(url, LAUNCH_MUTATION, {"params": params}, deadline)["launchRun"]
    except DagsterUnavailable:
        # A busy webserver may create the run after the answer's deadline: look for it once more.
        if (run_id := run_of_state(url, state, time.monotonic() + LATE_LOOKUP_S)) is not None:
            return BuildOutcome(run_id, "launched (Dagster answered late)")
        raise
    if launched["__typename"] != "LaunchRunSuccess":
        return BuildOutcome(None, f"Dagster refused the launch: {launched.get('message', launched['__typename'])}")
    return BuildOutcome(launched["run"]["runId"], "launched")


def request_build(store: IntakeStore, dagster_url: str | None) -> BuildOutcome:
    """Ask Dagster at ``dagster_url`` to build what ``store`` has unpublished, and record the
    run on those receipts. Never raises for Dagster's sake (an accepted sheet is never answered
    with an error): the sensor is there to catch up."""
    if dagster_url is None:
        return BuildOutcome(None, "REUSE_DATA_DAGSTER_URL is off: the sensor's next tick starts the build")
    pending = store.unpublished()
    requested_at = now_iso()
    try:
        outcome = launch_requested_build(dagster_url, unpublished_state(pending))
    except DagsterUnavailable as error:
        outcome = BuildOutcome(None, f"{error}; the sensor's next tick starts the build")
    except (KeyError, TypeError, ValueError) as error:  # a reply of another shape (another Dagster version)
        said = f"Dagster at {dagster_url} answered in a shape this intake does not know ({error!r})"
        outcome = BuildOutcome(None, f"{said}; the sensor's next tick starts the build")
    if outcome.run_id is not None:
        store.record_build(pending, outcome.run_id, requested_at, started_at=None)
    return outcome
