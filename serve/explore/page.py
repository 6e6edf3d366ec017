"""The ``/explore`` page: a SQL editor over the current release's tables, the schema panel (every
table with its columns, types and meanings, from the release's ``datapackage.json``, which the data
dictionary writes), the example queries, and the configuration the page's script reads. Sent with
a Content-Security-Policy that lets nothing but this origin run or be fetched."""

from __future__ import annotations

import posixpath
from typing import Any

import orjson
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from foundations.media_types import HTML, with_charset
from public.documents import dataset_name
from public.openapi import EXPLORE_PATH
from release.folder import DATA_PACKAGE, RELEASES_PREFIX
from release.snapshot import Snapshot
from serve.explore.assets import INSTALL_HINT, ExplorerAssets
from serve.explore.examples import EXAMPLES
from serve.html.site import TEMPLATES, language_row, path_prefix, rendered_pages, script_json
from serve.http.responses import answer_with_validators
from warehouse.reference_data import DEFAULT_LANGUAGE

# Scripts and workers only from this origin; WebAssembly compiled by them ('wasm-unsafe-eval');
# fetches (the Parquet files, by range) only to it. Styles may be inline: Observable Plot writes a
# <style> into each chart it draws.
CONTENT_SECURITY_POLICY = "; ".join(
    (
        "default-src 'none'",
        "script-src 'self' 'wasm-unsafe-eval'",
        "worker-src 'self'",
        "connect-src 'self'",
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data: blob:",
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors 'none'",
    )
)
# A numeric column -> the column of the same row that names its unit: the result table shows the
# unit beside the number wherever a query keeps both.
UNIT_COLUMNS = {
    "value": "unit",
    "reading": "unit",
    "tolerance": "unit",
    "standard_deviation": "unit",
    "plausible_min": "unit",
    "plausible_max": "unit",
    "raw_reading": "raw_unit",
    "figure_value": "figure_unit",
    "price_amount": "price_currency",
    "price": "price_currency",
    "max_price": "price_currency",
}


def parquet_tables(snapshot: Snapshot) -> list[dict[str, Any]]:
    """Every table the release publishes as Parquet, as its data package describes it, with the
    file's path in the release."""
    package = orjson.loads((snapshot.files.folder / DATA_PACKAGE).read_bytes())
    folder = posixpath.dirname(DATA_PACKAGE)
    return [
        {
            "name": resource["name"],
            "path": f"{folder}/{resource['path']}",
            "rows": resource.get("rows"),
            "description": resource.get("description", ""),
            "fields": resource["schema"]["fields"],
        }
        for resource in package["resources"]
        if resource["format"] == "parquet"
    ]


def render_explorer(snapshot: Snapshot, assets: ExplorerAssets | None) -> bytes:
    prefix = path_prefix(snapshot.base_url)
    tables = parquet_tables(snapshot)
    config = {
        "version": snapshot.version,
        "dataset": "reuse-data",
        "releases": prefix + RELEASES_PREFIX,
        "datapackage": DATA_PACKAGE,
        "assets": assets.path if assets else None,
        "tables": [{"name": t["name"], "path": t["path"]} for t in tables],
        "units": UNIT_COLUMNS,
    }
    return (
        TEMPLATES.get_template("explore.html")
        .render(
            lang=DEFAULT_LANGUAGE,
            language=language_row(snapshot, DEFAULT_LANGUAGE),
            publisher=snapshot.publisher,
            version=snapshot.version,
            published=snapshot.published_at.strftime("%Y-%m-%d %H:%M UTC"),
            name=dataset_name(snapshot),
            canonical=f"{snapshot.base_url}{EXPLORE_PATH}",
            hub=f"{snapshot.base_url}/",
            tables=tables,
            release_path=f"{prefix}{RELEASES_PREFIX}{snapshot.version}/",
            examples=EXAMPLES,
            first_table=tables[0]["name"] if tables else "products",
            config=script_json(config),
            assets=assets,
            install_hint=INSTALL_HINT,
            parquet_example=f"{snapshot.base_url}{RELEASES_PREFIX}{snapshot.version}/{tables[0]['path']}"
            if tables
            else "",
        )
        .encode("utf-8")
    )


def explorer_route(base_url: str, assets: ExplorerAssets | None) -> Route:
    """``/explore`` under the path of ``base_url``, as the site's pages are."""

    async def explore(request: Request) -> Response:
        snapshot = request.app.state.snapshots.current
        key = (EXPLORE_PATH, assets.digest if assets else "")
        body = rendered_pages(snapshot).get_or_build(key, lambda: render_explorer(snapshot, assets))
        return answer_with_validators(
            request,
            snapshot,
            body,
            media_type=with_charset(HTML),
            key=f"html:{EXPLORE_PATH}:{key[1]}",
            extra_headers={"Content-Security-Policy": CONTENT_SECURITY_POLICY},
            validator=key[1],
        )

    return Route(path_prefix(base_url) + EXPLORE_PATH, explore, methods=["GET", "HEAD"])
