"""The tester intake: a separate app (its own port) where the lab uploads bench sheets.

    POST /api/intake/bench-sheets       multipart field ``file`` (CSV or XLSX); bearer token
    GET  /api/intake/receipts           the caller's receipts, newest first
    GET  /api/intake/receipts/{id}      one receipt (only the caller's own: 403 otherwise)
    GET  /api/intake/template.csv       a sheet to start from (also .xlsx): the columns and an example row
    GET  /api/intake/products           every product with the protocols it is tested by and their units
    GET  /                              the upload page for people (intake/page.html)

A sheet is checked row by row against the published snapshot's reference data
(``intake.sheet_validation``). Any bad row rejects it whole (422, every problem with
its row and column); nothing of it is kept. An accepted sheet is archived as received,
gets a receipt (201), and its build is asked of Dagster at once (``intake.build_request``; the
pipeline's sensor starts it otherwise). Each receipt names that build's run, says when it
started, and when the sheet is expected live (``intake.going_live``). The
same bytes again get the same receipt (200) and are not ingested twice; from another tester
they get 409, since a receipt is read only by the tester it names. A data directory that is
full (507) or cannot be written (503) fails the upload before any receipt exists.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import errno
import hashlib
import html
import logging
import sqlite3
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

import orjson
from starlette.applications import Starlette
from starlette.datastructures import UploadFile
from starlette.exceptions import HTTPException
from starlette.formparsers import MultiPartException, MultiPartParser
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from foundations.media_types import CSV, JSON, XLSX, with_charset
from foundations.problem_details import (
    ProblemError,
    handle_problem,
    handle_unexpected,
    problem_response,
    router_problem,
)
from foundations.settings import Settings, load_settings
from foundations.trusted_hosts import TrustedHosts
from inputs.bench_sheets import SHEET_COLUMN_MEANINGS, SHEET_COLUMNS, SheetError
from intake.build_request import request_build
from intake.going_live import going_live
from intake.product_guide import product_guide
from intake.sheet_template import TEMPLATE_STEM, NoExample, template_csv, template_xlsx
from intake.sheet_validation import Reference, validate_sheet
from intake.store import IntakeStore, Receipt
from release.local_store import current_version, read_tables, snapshot_path

logger = logging.getLogger("uvicorn.error")

PAGE = Path(__file__).with_name("page.html")
MULTIPART_OVERHEAD = 16 * 1024  # boundaries and part headers around the file
ZIP_MAGIC = b"PK\x03\x04"  # an XLSX workbook is a zip archive


def json_response(body: object, status: int = 200) -> Response:
    return Response(orjson.dumps(body), status_code=status, media_type=JSON)


def receipt_json(receipt: Receipt) -> dict[str, object]:
    """A receipt as every answer shows it: its fields and when its readings are expected live."""
    return {**receipt.as_json(), "going_live": going_live(receipt, dt.datetime.now(dt.UTC))}


def authenticated_tester(request: Request) -> str:
    """The tester whose bearer token the request carries; 401 without a valid, unrevoked one."""
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    tester = request.app.state.store.authenticate(token.strip()) if scheme.lower() == "bearer" else None
    if tester is None:
        raise ProblemError(
            401,
            "A valid tester token is required: send `Authorization: Bearer <token>`. "
            "Ask the lab lead for one (`reuse-data testers add NAME`).",
            slug="unauthorized",
            headers={"WWW-Authenticate": 'Bearer realm="reuse-data intake"'},
        )
    return tester


def sheet_suffix(file_name: str, content: bytes) -> str:
    """``.csv`` or ``.xlsx``, by the file's name and its first bytes; 415 for anything else."""
    suffix = Path(file_name).suffix.lower()
    if suffix == ".xlsx" and content.startswith(ZIP_MAGIC):
        return ".xlsx"
    if suffix == ".csv" and not content.startswith(ZIP_MAGIC) and b"\x00" not in content[:4096]:
        return ".csv"
    raise ProblemError(
        415,
        f"{file_name!r} is not a bench sheet: upload a .csv file or an .xlsx workbook.",
        slug="unsupported-media-type",
    )


async def _body(request: Request, limit: int) -> AsyncIterator[bytes]:
    """The request body, refused with 413 as soon as it outgrows ``limit``."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit + MULTIPART_OVERHEAD:
        raise _too_large(limit)
    received = 0
    async for chunk in request.stream():
        received += len(chunk)
        if received > limit + MULTIPART_OVERHEAD:
            raise _too_large(limit)
        yield chunk


def _too_large(limit: int) -> ProblemError:
    return ProblemError(413, f"The sheet is larger than {limit // (1024 * 1024)} MB; split it.", slug="too-large")


async def uploaded_sheet(request: Request) -> tuple[str, bytes]:
    """The name and bytes of the multipart field ``file``; 400 when it is missing."""
    limit = request.app.state.max_upload_bytes
    if not request.headers.get("content-type", "").startswith("multipart/form-data"):
        raise ProblemError(400, "Send the sheet as multipart/form-data, in a field named `file`.")
    try:
        form = await MultiPartParser(request.headers, _body(request, limit), max_files=1, max_fields=8).parse()
    except MultiPartException as error:
        raise ProblemError(400, f"Unreadable multipart body: {error.message}") from error
    upload = form.get("file")
    if not isinstance(upload, UploadFile):
        raise ProblemError(400, "No file in the field `file`.", [{"parameter": "file", "message": "required"}])
    content = await upload.read()
    await upload.close()
    if len(content) > limit:
        raise _too_large(limit)
    return upload.filename or "sheet", content


# Only the columns a reading is checked against: the rest of a snapshot (millions of reading
# identifiers in claims, say) is the public server's business, not the intake's.
REFERENCE_QUERIES = {
    "products": "SELECT product_slug, product_name, category_slug FROM products",
    "protocols": "SELECT protocol_slug, unit, plausible_min, plausible_max, category_slugs FROM protocols",
    "people": "SELECT person_name, is_tester FROM people",
}


def current_reference(request: Request) -> tuple[str, Reference]:
    """The current published snapshot's version and reference (read again when a new one is published)."""
    store = request.app.state.settings.snapshots_dir
    version = current_version(store)
    if version is None:
        raise ProblemError(503, "No published snapshot to check sheets against yet: run `reuse-data build`.")
    cached = request.app.state.reference
    if cached is None or cached[0] != version:
        cached = (version, Reference.from_tables(read_tables(snapshot_path(store, version), REFERENCE_QUERIES)))
        request.app.state.reference = cached
    return cached


def reference_data(request: Request) -> Reference:
    """The reference sheets are checked against: the current published snapshot's."""
    return current_reference(request)[1]


def _check_and_keep(store: IntakeStore, reference: Reference, name: str, content: bytes, sha: str, tester: str):
    suffix = sheet_suffix(name, content)
    with tempfile.TemporaryDirectory(prefix="intake-") as scratch:
        candidate = Path(scratch) / f"upload{suffix}"  # never the client's file name
        candidate.write_bytes(content)
        checked = validate_sheet(candidate, name, reference)
    store.archive(content, sha, suffix)
    return store.record(
        sha256=sha, file_name=name, suffix=suffix, tester=tester, rows_accepted=len(checked.rows), slots=checked.slots
    )


def _uploaded_before(receipt: Receipt, tester: str) -> Response:
    """200 with the receipt for the tester who uploaded these bytes first; 409 for anyone else,
    without revealing the other tester's receipt."""
    if receipt.tester != tester:
        raise ProblemError(
            409,
            "This exact sheet was already uploaded by another tester, so nothing is ingested twice. "
            "Ask the lab lead if it should count under your name.",
            slug="uploaded-by-another-tester",
        )
    return json_response(receipt_json(receipt), 200)


async def upload_bench_sheet(request: Request) -> Response:
    tester = authenticated_tester(request)
    name, content = await uploaded_sheet(request)
    sha = hashlib.sha256(content).hexdigest()
    store: IntakeStore = request.app.state.store
    if (known := store.receipt_by_sha256(sha)) is not None:
        return _uploaded_before(known, tester)
    reference = await asyncio.to_thread(reference_data, request)
    try:
        receipt, created = await asyncio.to_thread(_check_and_keep, store, reference, name, content, sha, tester)
    except SheetError as error:
        raise ProblemError(
            422,
            f"{len(error.problems)} problem(s) in {name}; nothing was accepted. Fix the rows listed and upload again.",
            [{"row": p.row, "column": p.column, "value": p.value, "message": p.message} for p in error.problems],
            slug="invalid-sheet",
        ) from error
    if not created:
        return _uploaded_before(receipt, tester)
    # The receipt is durable before Dagster is asked: a launch that fails leaves the sheet to the sensor.
    build = await asyncio.to_thread(request_build, store, request.app.state.settings.dagster_url)
    if build.run_id:
        logger.info("intake: %s accepted; build %s launched", receipt.id, build.run_id)
    else:
        logger.warning("intake: %s accepted; no build launched: %s", receipt.id, build.said)
    return json_response(receipt_json(store.receipt(receipt.id) or receipt), 201)


def _own(request: Request, receipt: Receipt | None) -> Receipt:
    tester = authenticated_tester(request)
    if receipt is None:
        raise ProblemError(404, "No such receipt.")
    if receipt.tester != tester:
        raise ProblemError(403, "This receipt belongs to another tester.", slug="forbidden")
    return receipt


async def list_receipts(request: Request) -> Response:
    tester = authenticated_tester(request)
    receipts = request.app.state.store.receipts(tester)
    return json_response({"tester": tester, "receipts": [receipt_json(r) for r in receipts]})


async def get_receipt(request: Request) -> Response:
    receipt = request.app.state.store.receipt(request.path_params["receipt_id"])
    return json_response(receipt_json(_own(request, receipt)))


TEMPLATES = {  # suffix -> how the template is written, and its media type
    ".csv": (template_csv, with_charset(CSV)),
    ".xlsx": (template_xlsx, XLSX),
}


async def sheet_template(request: Request) -> Response:
    """The template as an attachment, its example row from the current release's reference."""
    suffix = request.path_params["suffix"]
    if f".{suffix}" not in TEMPLATES:
        raise ProblemError(404, f"No template as .{suffix}: there is template.csv and template.xlsx.")
    write, media_type = TEMPLATES[f".{suffix}"]
    reference = await asyncio.to_thread(reference_data, request)
    try:
        content = write(reference, dt.datetime.now(dt.UTC).date())
    except NoExample as error:
        raise ProblemError(503, f"No template can be made: {error}. Run `reuse-data build`.") from error
    disposition = f'attachment; filename="{TEMPLATE_STEM}.{suffix}"'
    return Response(content, media_type=media_type, headers={"Content-Disposition": disposition})


async def list_products(request: Request) -> Response:
    """Every product a sheet may name, from the same reference the sheets are checked against."""
    version, reference = await asyncio.to_thread(current_reference, request)
    return json_response({"release": version, "products": product_guide(reference)})


async def handle_http_exception(request: Request, error: Exception) -> Response:
    """The router's 404 and 405 in the intake's words, with the methods the address takes (Allow)."""
    assert isinstance(error, HTTPException)
    allowed = (error.headers or {}).get("Allow", "")
    details = {
        404: f"No such address on the intake: {request.url.path}. The upload page is at /, the API under "
        "/api/intake/ (bench-sheets, receipts, template.csv, template.xlsx, products).",
        405: f"{request.method} is not allowed on {request.url.path}: it takes {allowed}.",
    }
    return router_problem(request, error, details)


# errno values that mean the disk, or the intake user's quota, is full.
_DISK_FULL = {errno.ENOSPC, errno.EDQUOT}


async def handle_storage_error(request: Request, error: Exception) -> Response:
    """The intake could not read or write its data directory: 507 when the disk is full, 503
    otherwise (read-only, permissions). The sheet was not stored and no receipt was made."""
    full = (isinstance(error, OSError) and error.errno in _DISK_FULL) or (
        isinstance(error, sqlite3.OperationalError) and "full" in str(error)
    )
    where = request.app.state.settings.home / "intake"
    logger.error("intake storage under %s failed: %s", where, error)
    if full:
        detail = "The intake's disk is full. Nothing was stored and no receipt was made; upload again once it has room."
        return problem_response(request, 507, detail, slug="insufficient-storage")
    detail = (
        "The intake cannot write its data directory (read-only or not permitted). Nothing was stored and no "
        "receipt was made; upload again later, and tell the lab lead."
    )
    return problem_response(request, 503, detail, slug="storage-unavailable")


def column_rows() -> str:
    """The page's table of the sheet's columns, written from their one declaration."""
    return "\n".join(
        f"<tr><th><code>{html.escape(column)}</code></th><td>{html.escape(meaning)}</td></tr>"
        for column, meaning in SHEET_COLUMN_MEANINGS.items()
    )


def render_page() -> str:
    """intake/page.html with the sheet's columns filled in."""
    return (
        PAGE.read_text(encoding="utf-8")
        .replace("{{sheet_columns}}", html.escape(", ".join(SHEET_COLUMNS)))
        .replace("{{column_rows}}", column_rows())
    )


async def upload_page(request: Request) -> Response:
    return HTMLResponse(render_page(), headers={"Cache-Control": "no-store"})


def create_intake_app(settings: Settings | None = None, max_upload_bytes: int | None = None) -> Starlette:
    """The intake app, on the state under ``settings.home``."""
    settings = settings or load_settings()
    app = Starlette(
        routes=[
            Route("/", upload_page),
            Route("/api/intake/bench-sheets", upload_bench_sheet, methods=["POST"]),
            Route("/api/intake/receipts", list_receipts),
            Route("/api/intake/receipts/{receipt_id}", get_receipt),
            Route("/api/intake/template.{suffix:str}", sheet_template),
            Route("/api/intake/products", list_products),
        ],
        middleware=[Middleware(TrustedHosts, names=settings.answered_hosts)],
        exception_handlers={
            ProblemError: handle_problem,
            HTTPException: handle_http_exception,
            OSError: handle_storage_error,
            sqlite3.Error: handle_storage_error,
            Exception: handle_unexpected,
        },
    )
    app.state.settings = settings
    app.state.store = IntakeStore(settings.home)
    app.state.max_upload_bytes = max_upload_bytes or settings.intake_max_bytes
    app.state.reference = None
    return app
