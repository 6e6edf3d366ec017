"""The MCP server, driven by the official `mcp` client over both transports against real servers:
`reuse-data mcp` over stdio, and `reuse-data serve` (real uvicorn) at /mcp over Streamable HTTP.

Each tool's structured result is checked against the output schema the tool declares and
against the HTTP API's answer for the same release; bad arguments give tool errors that say
what to send, and the session goes on; a release published during a session is what the next
call answers from; a replica serves the tools from the object store.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import json
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import jsonschema
import pytest
from mcp import Client, StdioServerParameters
from mcp.types import LATEST_PROTOCOL_VERSION

from foundations.settings import PROJECT_ROOT
from publish.new_release import publish_release
from release.object_store import ReleaseStore
from tests.conftest import run_cli
from tests.support.browser import CHROMIUM
from tests.support.harness import Server, copy_home, home_environment, serving
from tests.support.release_store import publish_to, wait_until_serving

QUESTION = "Which insulated bottle keeps tea hot?"
TOOLS = {"ask", "page", "products", "bench", "changes", "dataset"}
BAD_CALLS = [  # (tool, arguments, words the refusal must say)
    ("page", {"path": "/no/such/page"}, "/guides/start-here"),
    ("changes", {"since": "yesterday"}, "ISO 8601"),
    ("ask", {"question": QUESTION, "limit": -1}, "whole number"),
    ("ask", {"question": QUESTION, "language": "fr"}, "en, zh, el, vi, ar, pa"),
    ("ask", {"question": "   "}, "'question' is required"),
    ("products", {"category": "no-such-category"}, "must be one of"),
    ("products", {"category": "{category}", "order_by": "no-such-protocol"}, "protocol"),
    ("bench", {}, "product"),
    ("bench", {"product": "no-such-product"}, "products tool"),
]


@pytest.fixture(scope="module")
def mcp_home(demo_home: Path, tmp_path_factory) -> Path:
    return copy_home(demo_home, tmp_path_factory.mktemp("mcp") / "home")


@pytest.fixture(scope="module")
def api(mcp_home: Path) -> Iterator[Server]:
    with serving(mcp_home) as running:
        yield running


def stdio(home: Path) -> Client:
    """`reuse-data mcp` over ``home``, as an assistant starts it."""
    command = StdioServerParameters(
        command=sys.executable, args=["-m", "reuse_data.cli", "mcp"], env=home_environment(home), cwd=PROJECT_ROOT
    )
    return Client(command)


def http(server: Server) -> Client:
    return Client(f"http://127.0.0.1:{server.port}/mcp")


def in_session(client: Client, work: Callable[[Client], Awaitable[Any]]) -> Any:
    async def session() -> Any:
        async with client:
            return await work(client)

    return asyncio.run(session())


def calls(api: Server) -> dict[str, dict[str, Any]]:
    """One call of each tool, on things the demo release holds."""
    product = api.get("/api/public/products.json").json()["products"][0]
    return {
        "ask": {"question": QUESTION, "limit": 3},
        "page": {"path": "/guides/start-here"},
        "products": {"category": product["category_slug"], "limit": 5},
        "bench": {"product": product["product_slug"]},
        "changes": {"since": "2026-06-01"},
        "dataset": {},
    }


def attribution_of(api: Server, url: str) -> str:
    return api.get("/api/public/page.json?path=" + quote(url.removeprefix(api_base(api)).split("?")[0])).json()["page"][
        "attribution"
    ]


def api_base(api: Server) -> str:
    return api.get("/api/public/dataset.json").json()["url"].removesuffix("/api/public/dataset.json")


def check_against_api(api: Server, name: str, arguments: dict[str, Any], result: dict[str, Any]) -> None:
    """The tool's result holds what the HTTP API answers for the same release, with what to cite."""
    version = api.get("/api/public/dataset.json").headers["x-dataset-version"]
    assert result["dataset_version"] == version
    assert result["license"] == api.get("/api/public/capabilities.json").json()["license"]
    if name == "ask":
        answered = api.get(f"/api/public/ask.json?q={quote(QUESTION)}&limit=3").json()
        for field in ("cite", "answer", "results", "language", "fallback", "supported_languages"):
            assert result[field] == answered[field]
        assert result["attribution"] == attribution_of(api, answered["cite"])
    elif name == "page":
        document = api.get("/api/public/page.json?path=/guides/start-here").json()
        assert {k: v for k, v in result.items() if k not in ("cite", "attribution")} == document
        assert (result["cite"], result["attribution"]) == (document["page"]["url"], document["page"]["attribution"])
    elif name == "products":
        listed = [
            p
            for p in api.get("/api/public/products.json").json()["products"]
            if p["category_slug"] == arguments["category"]
        ]
        best = sorted(listed, key=lambda p: (-(p["overall_rating"] or -1), p["product_slug"]))[:5]
        assert result["products"] == best
        assert result["count"] == len(best) > 0
    elif name == "bench":
        lines = api.get(f"/api/public/bench.jsonl?product={arguments['product']}").body.splitlines()
        assert result["measurements"] == [json.loads(line) for line in lines]
        assert result["cite"] == result["measurements"][0]["url"]
        assert result["attribution"] == result["measurements"][0]["attribution"]
    elif name == "changes":
        document = api.get("/api/public/changes.json?since=2026-06-01").json()
        assert {k: v for k, v in result.items() if k not in ("cite", "attribution")} == document
    elif name == "dataset":
        document = api.get("/api/public/dataset.json").json()
        assert (result["cite"], result["attribution"]) == (document["url"], document["citation"])
        catalogue = api.get("/api/public/products.json").json()["products"]
        assert {c["category"] for c in result["categories"]} >= {p["category_slug"] for p in catalogue}


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_each_tool_answers_as_the_api_does_with_what_to_cite(transport: str, api: Server, mcp_home: Path):
    client = stdio(mcp_home) if transport == "stdio" else http(api)
    wanted = calls(api)

    async def work(client: Client) -> tuple[list, dict, list]:
        tools = (await client.list_tools()).tools
        results = {name: await client.call_tool(name, arguments) for name, arguments in wanted.items()}
        resources = [
            (await client.read_resource(uri)).contents[0].text
            for uri in ("reuse-data://llms.txt", "reuse-data://dataset.json")
        ]
        return tools, results, resources

    tools, results, resources = in_session(client, work)
    assert {tool.name for tool in tools} == TOOLS
    for tool in tools:
        assert tool.annotations.read_only_hint is True
        assert "attribution" in tool.description and "licence" in tool.description
        result = results[tool.name]
        assert not result.is_error, result.content
        jsonschema.validate(result.structured_content, tool.output_schema)
        check_against_api(api, tool.name, wanted[tool.name], result.structured_content)
    assert resources[0] == api.get("/llms.txt").body.decode()
    assert json.loads(resources[1]) == api.get("/api/public/dataset.json").json()


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_bad_arguments_are_tool_errors_saying_what_to_send_and_the_session_goes_on(
    transport: str, api: Server, mcp_home: Path
):
    client = stdio(mcp_home) if transport == "stdio" else http(api)
    category = calls(api)["products"]["category"]

    async def work(client: Client) -> list:
        answers = []
        for name, arguments, _ in BAD_CALLS:
            filled = {k: v.format(category=category) if isinstance(v, str) else v for k, v in arguments.items()}
            answers.append(await client.call_tool(name, filled))
        answers.append(await client.call_tool("dataset", {}))
        return answers

    *refusals, after = in_session(client, work)
    for (name, arguments, words), refusal in zip(BAD_CALLS, refusals, strict=True):
        assert refusal.is_error, (name, arguments)
        assert words in refusal.content[0].text, (name, arguments, refusal.content[0].text)
    assert not after.is_error
    assert after.structured_content["dataset_version"]


def test_a_release_published_during_a_session_answers_the_next_call(demo_home: Path, tmp_path: Path):
    home = copy_home(demo_home, tmp_path / "home")

    async def version_of(client: Client) -> str:
        return (await client.call_tool("page", {"path": "/guides/start-here"})).structured_content["dataset_version"]

    async def work(api: Server) -> tuple[list[str], str, list[str]]:
        async with stdio(home) as over_stdio, http(api) as over_http:
            sessions = (over_stdio, over_http)
            first = [await version_of(client) for client in sessions]
            published = publish_release(api.store, api.warehouse).version
            deadline = time.monotonic() + 30
            while (now := [await version_of(client) for client in sessions]) != [published] * 2:
                assert time.monotonic() < deadline, f"still answering from {now}, not {published}"
                await asyncio.sleep(0.2)
            return first, published, now

    with serving(home) as api:
        before = api.get("/api/public/dataset.json").headers["x-dataset-version"]
        first, published, now = asyncio.run(work(api))
    assert first == [before, before] and published != before
    assert now == [published, published]


def test_products_are_ordered_by_a_protocols_sub_score_and_filtered_by_rating(api: Server):
    catalogue = api.get("/api/public/products.json").json()["products"]
    category = catalogue[0]["category_slug"]
    protocol = next(slot["protocol"] for slot in catalogue[0]["sub_scores"] if slot["score"] is not None)

    def sub_score(product: dict[str, Any]) -> float:
        return next((s["score"] for s in product["sub_scores"] if s["protocol"] == protocol), None) or -1.0

    async def work(client: Client) -> tuple[Any, Any]:
        by_protocol = await client.call_tool("products", {"category": category, "order_by": protocol, "limit": 100})
        rated = await client.call_tool("products", {"category": category, "min_rating": 70})
        return by_protocol.structured_content, rated.structured_content

    by_protocol, rated = in_session(http(api), work)
    listed = [p for p in catalogue if p["category_slug"] == category]
    assert by_protocol["products"] == sorted(listed, key=lambda p: (-sub_score(p), p["product_slug"]))
    assert [p["product_slug"] for p in rated["products"]] == [
        p["product_slug"]
        for p in sorted(listed, key=lambda p: (-(p["overall_rating"] or -1), p["product_slug"]))
        if (p["overall_rating"] or 0) >= 70
    ]


def test_a_replica_serves_the_tools_from_the_store_and_says_what_to_do_before_it_has_a_release(
    store: ReleaseStore,
    replica: Server,
    demo_home: Path,
    tmp_path: Path,
):
    before = in_session(http(replica), lambda client: client.call_tool("dataset", {}))
    assert before.is_error and "publish one to" in before.content[0].text

    version = publish_to(store, tmp_path / "snapshots", demo_home)
    wait_until_serving(replica, version)
    answered = in_session(http(replica), lambda client: client.call_tool("ask", {"question": QUESTION}))
    assert not answered.is_error
    assert answered.structured_content["dataset_version"] == version
    assert answered.structured_content["answer"]


def test_the_stdio_command_without_a_release_says_to_build_first(tmp_path: Path):
    refused = run_cli("mcp", home=tmp_path / "empty-home")
    assert refused.returncode == 2
    assert "run `reuse-data build` first" in refused.output


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed: `make setup` installs Debian's chromium")
def test_a_page_in_a_browser_calls_the_tools_from_another_origin(api: Server, browser):
    """A page served from one origin (localhost) calls /mcp on another (127.0.0.1), as a web-based
    assistant would: Chromium's own CORS checks pass the preflight and let the script read the answer.
    The API's own paths stay read-only."""
    context = browser.new_context()
    page = context.new_page()
    try:
        page.goto(f"http://localhost:{api.port}/")
        answer = page.evaluate(
            """async ([url, version, question]) => {
                const reply = await fetch(url, {
                    method: "POST",
                    headers: {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
                              "MCP-Protocol-Version": version, "Mcp-Method": "tools/call", "Mcp-Name": "ask"},
                    body: JSON.stringify({jsonrpc: "2.0", id: 1, method: "tools/call",
                                          params: {name: "ask", arguments: {question}, _meta: {
                                              "io.modelcontextprotocol/protocolVersion": version,
                                              "io.modelcontextprotocol/clientCapabilities": {}}}}),
                });
                return {status: reply.status, body: await reply.json()};
            }""",
            [f"http://127.0.0.1:{api.port}/mcp", LATEST_PROTOCOL_VERSION, QUESTION],
        )
    finally:
        context.close()
    assert answer["status"] == 200, answer
    result = answer["body"]["result"]
    assert not result.get("isError"), result
    assert result["structuredContent"]["cite"].startswith("http")

    preflight = {"Origin": "http://localhost", "Access-Control-Request-Method": "POST"}
    assert "POST" in api.send("OPTIONS", "/mcp", headers=preflight).headers["access-control-allow-methods"]
    api_methods = api.send("OPTIONS", "/api/public/products.json", headers=preflight).headers
    assert api_methods["access-control-allow-methods"] == "GET, HEAD, OPTIONS"


def loaded_libraries(server: Server) -> str:
    """The shared objects the server's process has mapped (each compiled module it imported)."""
    return Path(f"/proc/{server.process.pid}/maps").read_text()


def test_a_server_loads_the_sdk_with_the_first_assistant_and_never_pandas_or_polars(demo_home: Path, tmp_path: Path):
    """Serving needs neither pandas nor polars (90 and 24 MB resident), and a server that no
    assistant calls never holds the MCP SDK (34 MB, pydantic's compiled core among it)."""
    with serving(copy_home(demo_home, tmp_path / "home")) as server:
        assert server.get("/api/public/ask.json?q=" + quote(QUESTION)).status == 200
        assert server.get("/api/public/bench.csv?limit=5").status == 200
        before = loaded_libraries(server)
        for library in ("pandas/_libs", "polars", "pydantic_core"):
            assert library not in before, f"{library} is loaded before any assistant called"

        # A bare JSON-RPC call (an asyncio client cannot run beside the module's browser, whose loop is running).
        initialize = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": LATEST_PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"},
            },
        }
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        reply = server.send("POST", "/mcp", json.dumps(initialize).encode(), headers)
        assert reply.status == 200, reply.body
        server_info = json.loads(reply.body).get("result", {}).get("serverInfo", {})
        assert server_info == {"name": "reuse-data", "version": importlib.metadata.version("reuse-data")}, reply.body
        after = loaded_libraries(server)
        assert "pydantic_core" in after
        assert "pandas/_libs" not in after and "polars" not in after
