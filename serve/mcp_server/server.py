"""The MCP server: the API's answers as read-only tools, over stdio or Streamable HTTP.

Tools answer from the release the server is serving (``SnapshotHolder``): a call takes
``holder.current`` once and answers from that snapshot only, so no result mixes two releases,
and the next call after a switch answers from the new one. A bad argument is refused as a tool
error (``isError``) in the API's own words, saying what to send; the session goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.metadata
from collections.abc import Callable, Iterator
from typing import Annotated, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import ToolAnnotations
from pydantic import Field
from starlette.concurrency import run_in_threadpool
from starlette.routing import Route
from starlette.types import ASGIApp

from ask.model.store import ModelStore
from foundations.ask_limits import ASK_DEFAULT_LIMIT, ASK_MAX_LIMIT
from foundations.problem_details import ProblemError
from foundations.settings import Settings
from public.openapi import (
    BENCH_DEFAULT_LIMIT,
    BENCH_MAX_LIMIT,
    HUB_PATH,
    MAX_PATH_LENGTH,
)
from release.snapshot import SnapshotHolder
from serve.api.routes_ask import QuestionDesk, prepare_ask
from serve.mcp_server import MCP_PATH, answers
from serve.mcp_server.results import AskResult, BenchResult, ChangesResult, DatasetResult, PageResult, ProductsResult
from warehouse.reference_data import LANGUAGES

CITE = (
    " Every result carries `cite`, the URL to cite, and `attribution`, the exact string to print: "
    "the licence (CC BY 4.0) asks for both with anything quoted."
)
INSTRUCTIONS = (
    "Read-only access to a reusable-product publisher's bench tests, scores, buying guides and answers, "
    "from its current published release. Start with `ask` for a reader's question; `dataset` lists the "
    "categories and protocols the other tools take." + CITE
)
Tool = TypeVar("Tool", bound=Callable)
READ_ONLY = ToolAnnotations(readOnlyHint=True, destructiveHint=False, idempotentHint=True, openWorldHint=False)


@contextlib.contextmanager
def refused_as_tool_error() -> Iterator[None]:
    """A problem the API would answer with (a bad argument, no such page, no release yet) as a tool error."""
    try:
        yield
    except ProblemError as problem:
        raise ToolError(answers.what_to_send(problem)) from None


def assistant_server(holder: SnapshotHolder, desk: QuestionDesk) -> MCPServer:
    """The MCP server answering from ``holder``'s release; questions to ``ask`` go through
    ``desk`` beside ask.json's: one queue, one log, one count of refusals."""
    # The implementation's version, as clients show it beside the name (``serverInfo``).
    version = importlib.metadata.version("reuse-data")
    server = MCPServer("reuse-data", instructions=INSTRUCTIONS, version=version, log_level="WARNING")

    def read_only(description: str) -> Callable[[Tool], Tool]:
        """Register a read-only tool, its description ending with what the licence asks of a citation."""
        return server.tool(annotations=READ_ONLY, description=description + CITE)

    @read_only(
        "Answer a reader's question from the publisher's library (the same answer as ask.json): "
        "the best answer, the page it comes from, and the other matches with their confidence."
    )
    async def ask(
        question: Annotated[str, Field(description="The question, in any of the six languages.")],
        language: Annotated[
            str | None, Field(description=f"Answer in this language ({', '.join(LANGUAGES)}); default: the question's.")
        ] = None,
        limit: Annotated[
            int | None, Field(description=f"Matches at most (default {ASK_DEFAULT_LIMIT}, maximum {ASK_MAX_LIMIT}).")
        ] = None,
    ) -> AskResult:
        with refused_as_tool_error():
            return AskResult.model_validate(
                await answers.ask(holder.current, desk, question, language, limit, MCP_PATH)
            )

    @read_only("The structured record of a page of the site (as page.json): a guide, a product, an answer.")
    async def page(
        path: Annotated[
            str, Field(description=f"The page's path, like {HUB_PATH} (at most {MAX_PATH_LENGTH} characters).")
        ],
    ) -> PageResult:
        with refused_as_tool_error():
            return PageResult.model_validate(answers.page(holder.current, path))

    @read_only(
        "The products of a category, best first by overall rating or by one protocol's sub-score, "
        "as products.json lists them (scores 0-100; untested slots are pending, never estimated)."
    )
    async def products(
        category: Annotated[str, Field(description="A category slug (the dataset tool lists them).")],
        order_by: Annotated[
            str | None,
            Field(description="'rating' (the default) or a protocol slug, to order by that protocol's sub-score."),
        ] = None,
        min_rating: Annotated[float | None, Field(description="Leave out products rated below this (0-100).")] = None,
        limit: Annotated[
            int | None,
            Field(
                description=f"Products at most (default {answers.PRODUCTS_DEFAULT_LIMIT}, "
                f"maximum {answers.PRODUCTS_MAX_LIMIT})."
            ),
        ] = None,
    ) -> ProductsResult:
        with refused_as_tool_error():
            found = await run_in_threadpool(answers.products, holder.current, category, order_by, min_rating, limit)
            return ProductsResult.model_validate(found)

    @read_only(
        "Bench measurements of a product or a protocol (as bench.jsonl): value, unit, sample size, "
        "sub-score, tester and date per slot; a slot not tested yet has value null and status 'pending'."
    )
    async def bench(
        product: Annotated[str | None, Field(description="A product slug (the products tool lists them).")] = None,
        protocol: Annotated[str | None, Field(description="A protocol slug (the dataset tool lists them).")] = None,
        limit: Annotated[
            int | None,
            Field(description=f"Measurements at most (default {BENCH_DEFAULT_LIMIT}, maximum {BENCH_MAX_LIMIT})."),
        ] = None,
    ) -> BenchResult:
        with refused_as_tool_error():
            return BenchResult.model_validate(
                await run_in_threadpool(answers.bench, holder.current, product, protocol, limit)
            )

    @read_only("What changed in the dataset since a date (as changes.json), newest first.")
    async def changes(
        since: Annotated[
            str | None,
            Field(description="An ISO 8601 date (2026-05-01) or date-time (2026-05-01T12:00:00Z); default: all."),
        ] = None,
    ) -> ChangesResult:
        with refused_as_tool_error():
            return ChangesResult.model_validate(await run_in_threadpool(answers.changes, holder.current, since))

    @read_only(
        "What the dataset holds (from dataset.json): its statistics, categories, protocols, "
        "languages and downloadable files, and how to cite it."
    )
    async def dataset() -> DatasetResult:
        with refused_as_tool_error():
            return DatasetResult.model_validate(answers.dataset(holder.current))

    @server.resource("reuse-data://llms.txt", name="llms.txt", mime_type="text/plain")
    def llms_txt() -> str:
        """The site and its API described for language models (the release's llms.txt)."""
        with refused_as_tool_error():
            return answers.llms_txt(holder.current)

    @server.resource("reuse-data://dataset.json", name="dataset.json", mime_type="application/ld+json")
    def dataset_json() -> str:
        """The dataset descriptor: schema.org Dataset and Croissant 1.0 (the release's dataset.json)."""
        with refused_as_tool_error():
            return answers.file_text(holder.current, answers.DATASET)

    return server


def streamable_http_endpoint(server: MCPServer) -> ASGIApp:
    """The SDK's Streamable HTTP endpoint for ``server``, to serve at ``MCP_PATH``
    (``serve.mcp_server.endpoint``); its session manager must run while it serves
    (``server.session_manager.run()``).

    Stateless, with JSON responses: any worker or replica answers any call, as any answers a GET.
    The SDK's DNS-rebinding guard stays off: the app's ``foundations.trusted_hosts`` checks Host on
    every path and Origin on this one, against the server's configured names, before a request
    reaches it.
    """
    app = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        stateless_http=True,
        json_response=True,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    endpoint = app.routes[0] if len(app.routes) == 1 else None  # its transport; no authorisation routes
    if not isinstance(endpoint, Route) or endpoint.path != MCP_PATH:
        raise RuntimeError(f"the mcp SDK's Streamable HTTP app has routes {app.routes}, not one at {MCP_PATH}")
    return endpoint.endpoint


async def serve_stdio(settings: Settings) -> None:
    """Serve over standard input and output the local home's current release, following CURRENT."""
    encoders = ModelStore(settings.ask_models)
    holder = SnapshotHolder(settings.snapshots_dir, lambda snapshot: prepare_ask(snapshot, encoders))
    await asyncio.to_thread(holder.load_current)
    watcher = asyncio.create_task(holder.watch())
    desk = QuestionDesk.opened(settings)
    try:
        await assistant_server(holder, desk).run_stdio_async()
    finally:
        watcher.cancel()
        desk.close()
