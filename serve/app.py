"""The public API app, assembled in one place: routes, error handlers, middleware, lifespan."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware

from ask.dense.threads import EncoderThreads, use_encoder_threads
from ask.model.store import ModelStore
from foundations.heap import give_back_free_memory
from foundations.problem_details import ProblemError, handle_problem, handle_unexpected
from foundations.settings import Settings, load_settings
from foundations.trusted_hosts import TrustedHosts
from release.snapshot import Snapshot, SnapshotHolder
from serve.api import routes_ask, routes_bench, routes_catalogue, routes_pages
from serve.api.problems import handle_http_exception
from serve.api.routes_ask import QuestionDesk
from serve.explore.assets import INSTALL_HINT, ExplorerAssets, assets_route
from serve.explore.page import explorer_route
from serve.html import site
from serve.http.cors import POST_METHODS, Preflight
from serve.mcp_server import MCP_PATH
from serve.mcp_server.endpoint import AssistantEndpoint
from serve.operations import routes_health
from serve.operations.access_log import AccessLog
from serve.operations.metrics import ServiceMetrics
from serve.operations.observe import Observe
from serve.routing import FixedPaths

READER_THREADS = min(4, os.cpu_count() or 1)
log = logging.getLogger("reuse_data.serve")


def log_to_stderr() -> None:
    """The server's own lines (release loaded, refused, downloaded), from INFO, on standard error
    with their time: uvicorn configures only its own loggers, and Python's last resort would
    print warnings alone, without a time."""
    logger = logging.getLogger("reuse_data")
    if not logger.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)


def create_app(settings: Settings | None = None, metrics_dir: Path | None = None, workers: int = 1) -> Starlette:
    """The app serving the local releases under the home, or, for a replica (``serve_from``), the
    releases it downloads from the object store into its cache; with ``metrics_dir``, one of
    ``workers`` worker processes whose request counts are summed there."""
    settings = settings or load_settings()
    log_to_stderr()
    # Before any release's encoder starts: the workers share the cores, each encoder on its part.
    use_encoder_threads(EncoderThreads.sharing(workers))
    encoders = ModelStore(settings.ask_models)

    def prepare(snapshot: Snapshot) -> None:
        if snapshot.base_url != settings.base_url:
            # Every URL handed out is the release's: one address per set of answers.
            log.warning(
                "release %s was built for %s, not the configured REUSE_DATA_BASE_URL %s: serving the release's; "
                "build again with REUSE_DATA_BASE_URL set to change it",
                snapshot.version,
                snapshot.base_url,
                settings.base_url,
            )
        routes_ask.prepare_ask(snapshot, encoders)
        give_back_free_memory()  # what loading it built and dropped

    if settings.serve_from:
        # Imported here: a server of local releases has no use for the S3 client (4 MB resident).
        from release.object_store import ReleaseStore
        from release.question_store import QuestionUploader
        from release.replica import ReleaseFollower

        store = ReleaseStore.open(settings.serve_from)
        remedy = f"publish one to {store.url} (`reuse-data build` with REUSE_DATA_PUBLISH_TO={store.url})"
        holder = SnapshotHolder(settings.replica_cache, prepare, remedy)
        follower = ReleaseFollower(store, settings.replica_cache, holder.load_current)
        # The questions asked of it reach the build through the store (decision 48).
        uploader = (
            QuestionUploader(
                store,
                settings.questions_dir,
                settings.replica_name,
                settings.question_retention_days,
                settings.question_upload_seconds,
            )
            if settings.question_log
            else None
        )
    else:
        holder, follower, uploader = SnapshotHolder(settings.snapshots_dir, prepare), None, None
    metrics = ServiceMetrics(holder, follower, metrics_dir)
    access_log = AccessLog() if settings.access_log else None
    # ask.json's and the assistants' questions wait in one queue and are kept in one log.
    desk = QuestionDesk.opened(settings, metrics.refused)
    assistants = AssistantEndpoint(holder, desk)  # the MCP SDK loads with the first request for it
    explorer = ExplorerAssets.installed()
    if explorer is None:
        log.warning("/explore shows a notice instead of the query page: %s", INSTALL_HINT)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if follower is not None:
            await follower.step()  # the store's current release, before the first request if it can
        try:
            await asyncio.to_thread(holder.load_current)
        except Exception:  # answer 503 saying why, and serve the next snapshot published
            log.exception("could not load the published snapshot; %s", holder.remedy)
        watcher = asyncio.create_task(holder.watch())
        following = asyncio.create_task(follower.follow()) if follower is not None else None
        sharing = asyncio.create_task(metrics.keep_sharing())
        uploading = asyncio.create_task(uploader.keep_uploading()) if uploader is not None else None
        # DuckDB reads at request time (bench pages) run on a few threads of their own: memory that
        # DuckDB and Arrow keep per thread then stays bounded however many clients stream.
        app.state.reader_pool = ThreadPoolExecutor(max_workers=READER_THREADS, thread_name_prefix="duckdb-reader")
        try:
            yield
        finally:
            await assistants.close()
            watcher.cancel()
            if following is not None:
                following.cancel()
            sharing.cancel()
            if access_log is not None:
                access_log.flush()
            desk.close()
            if uploading is not None and uploader is not None:
                uploading.cancel()
                await asyncio.to_thread(uploader.upload)  # what the log just wrote, and the rest
            app.state.reader_pool.shutdown(wait=False, cancel_futures=True)

    routes = FixedPaths.ahead_of(
        [
            assistants.route(),
            *routes_health.routes,
            *routes_ask.routes,
            *routes_catalogue.routes,
            *routes_catalogue.crawler_routes,
            *routes_pages.routes,
            explorer_route(settings.base_url, explorer),
            *routes_bench.routes,
            *routes_catalogue.file_routes,
            assets_route(explorer),
            *site.routes(settings.base_url),
        ]
    )
    app = Starlette(
        routes=routes,
        middleware=[
            # Outermost: it times the whole answer, whatever inside answers it.
            Middleware(
                Observe,
                metrics=metrics if settings.metrics else None,
                access_log=access_log,
            ),
            # Before anything answers: a foreign Host (DNS rebinding) gets nothing but a refusal.
            Middleware(TrustedHosts, names=settings.answered_hosts, origin_checked=(MCP_PATH,)),
            Middleware(Preflight, methods_by_path={MCP_PATH: POST_METHODS}),
        ],
        exception_handlers={
            ProblemError: handle_problem,
            HTTPException: handle_http_exception,
            Exception: handle_unexpected,
        },
        lifespan=lifespan,
    )
    app.state.snapshots = holder
    app.state.follower = follower
    app.state.metrics = metrics
    app.state.question_desk = desk

    return app
