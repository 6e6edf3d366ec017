"""The intake's commands: serve it, manage testers, upload a sheet, withdraw one.

reuse-data intake [--host H] [--port P] [--allow-public]
reuse-data testers add NAME | list | rotate NAME | revoke NAME
reuse-data upload FILE [--url URL] [--token T] [--json]
reuse-data withdraw RECEIPT --reason TEXT
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import secrets
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from foundations.settings import load_settings
from intake.build_request import request_build
from intake.store import IntakeError, IntakeStore

DEFAULT_INTAKE_URL = "http://127.0.0.1:8001"


def _print(line: str = "") -> None:
    print(line, file=sys.__stdout__, flush=True)


def is_loopback(host: str) -> bool:
    """True when ``host`` is reachable from this machine only (127.0.0.0/8, ::1, localhost)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a host name may resolve to any interface


def command_intake(args: argparse.Namespace) -> int:
    import functools

    import uvicorn

    from foundations.http_limits import BOUNDED_HTTP
    from intake.app import create_intake_app

    if not is_loopback(args.host) and not args.allow_public:
        _print(
            f"error: --host {args.host} would take uploads and tester tokens from other machines over plain "
            "HTTP. Keep the default 127.0.0.1 behind a TLS reverse proxy, or pass --allow-public if this "
            "interface is already private or encrypted."
        )
        return 2
    settings = load_settings()
    settings.ensure_dirs()
    _print(f"tester intake on http://{args.host}:{args.port}/ (state in {settings.home / 'intake'}; Ctrl+C stops)")
    uvicorn.run(
        functools.partial(create_intake_app, settings),
        factory=True,
        host=args.host,
        port=args.port,
        log_level="warning",
        http=BOUNDED_HTTP,
        timeout_graceful_shutdown=10,
    )
    return 0


def command_testers_add(args: argparse.Namespace) -> int:
    store = IntakeStore(load_settings().home)
    try:
        token = store.add_tester(args.name.strip())
    except IntakeError as error:
        _print(f"error: {error}")
        return 2
    _print(f"added tester {args.name.strip()!r}. Their token follows; it is shown only this once:")
    _print(token)
    return 0


def command_testers_list(args: argparse.Namespace) -> int:
    testers = IntakeStore(load_settings().home).testers()
    if not testers:
        _print("no testers yet; add one with `reuse-data testers add NAME`")
        return 0
    _print(f"{'name':<28}{'added (UTC)':<24}status")
    for tester in testers:
        status = "active" if tester.active else f"revoked {tester.revoked_at}"
        _print(f"{tester.name:<28}{tester.created_at:<24}{status}")
    return 0


def command_testers_rotate(args: argparse.Namespace) -> int:
    try:
        token = IntakeStore(load_settings().home).rotate_token(args.name)
    except IntakeError as error:
        _print(f"error: {error}")
        return 2
    _print(f"rotated {args.name!r}: the old token no longer works. The new one follows; it is shown only this once:")
    _print(token)
    return 0


def command_testers_revoke(args: argparse.Namespace) -> int:
    try:
        IntakeStore(load_settings().home).revoke_tester(args.name)
    except IntakeError as error:
        _print(f"error: {error}")
        return 2
    _print(f"revoked {args.name!r}: their token no longer works")
    return 0


def command_withdraw(args: argparse.Namespace) -> int:
    settings = load_settings()
    store = IntakeStore(settings.home)
    try:
        receipt = store.withdraw(args.receipt, args.reason)
    except IntakeError as error:
        _print(f"error: {error}")
        return 2
    _print(
        f"withdrew {receipt.id} ({receipt.file_name}, {receipt.rows_accepted} rows): its {len(receipt.slots)} slot(s) "
        "become retest at the next build; the sheet stays in the archive"
    )
    build = request_build(store, settings.dagster_url)
    _print(f"build: run {build.run_id} launched" if build.run_id else f"build: not launched now ({build.said})")
    return 0


def multipart_body(file_name: str, content: bytes) -> tuple[bytes, str]:
    """A multipart/form-data body with the one field ``file``, and its content type."""
    boundary = f"----reuse-data-{secrets.token_hex(12)}"
    safe_name = file_name.replace('"', "_").replace("\r", "_").replace("\n", "_")
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{safe_name}"\r\n'
        "Content-Type: application/octet-stream\r\n\r\n"
    ).encode()
    return head + content + f"\r\n--{boundary}--\r\n".encode(), f"multipart/form-data; boundary={boundary}"


def post_sheet(url: str, token: str, path: Path) -> tuple[int, dict[str, Any]]:
    """Upload ``path`` to the intake at ``url``; the HTTP status and the JSON body."""
    body, content_type = multipart_body(path.name, path.read_bytes())
    request = urllib.request.Request(
        f"{url.rstrip('/')}/api/intake/bench-sheets",
        data=body,
        method="POST",
        headers={"Content-Type": content_type, "Authorization": f"Bearer {token}"},
    )
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.status, _json_object(response.read())
    except urllib.error.HTTPError as error:
        return error.code, _json_object(error.read())


def _json_object(body: bytes) -> dict[str, Any]:
    """The reply's JSON object; a reply that is not one (a proxy's error page, say) becomes its detail."""
    try:
        parsed = json.loads(body or b"{}")
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        return parsed
    return {"detail": f"the intake replied with something other than JSON: {body[:200].decode(errors='replace')}"}


def verdict_lines(status: int, body: dict[str, Any]) -> list[str]:
    """The verdict as a person reads it: the receipt, or a table of the rows to fix."""
    if status in (200, 201):
        again = " (the same file was uploaded before: nothing ingested twice)" if status == 200 else ""
        return [
            f"accepted{again}",
            f"  receipt   {body['id']}",
            f"  rows      {body['rows_accepted']}",
            f"  slots     {', '.join(body['slots'])}",
            f"  tester    {body['tester']}",
            f"  received  {body['received_at']}",
            f"  sha256    {body['sha256']}",
            f"  build     {build_line(body.get('build'))}",
            f"  live      {body.get('going_live', {}).get('message', 'with the next published snapshot')}",
        ]
    lines = [f"rejected ({status}): {body.get('detail', 'no detail')}"]
    errors = body.get("errors") or []
    if errors:
        lines.append(f"  {'row':>5}  {'column':<10}{'value':<22}problem")
        for error in errors:
            value = str(error.get("value", ""))[:20]
            lines.append(f"  {error.get('row', ''):>5}  {error.get('column', ''):<10}{value:<22}{error.get('message')}")
    return lines


def build_line(build: dict[str, Any] | None) -> str:
    """The receipt's build as one line: its run, and when it was asked for and started."""
    if not build:
        return "not launched yet: the pipeline's sensor starts it within seconds"
    started = f"started {build['started_at']}" if build.get("started_at") else "waiting on Dagster's queue"
    return f"run {build['run_id']}, requested {build['requested_at']}, {started}"


def command_upload(args: argparse.Namespace) -> int:
    token = args.token or load_settings().tester_token
    path = Path(args.file)
    if not token:
        _print("error: no token; pass --token or set REUSE_DATA_TOKEN (ask the lab lead for one)")
        return 2
    if not path.is_file():
        _print(f"error: no file {path}")
        return 2
    try:
        status, body = post_sheet(args.url, token, path)
    except (urllib.error.URLError, OSError) as error:
        _print(f"error: cannot reach the intake at {args.url} ({error}); is `reuse-data intake` running?")
        return 2
    if args.json:
        _print(json.dumps({"http_status": status, **body}, ensure_ascii=False, indent=2))
    else:
        for line in verdict_lines(status, body):
            _print(line)
    return 0 if status in (200, 201) else 1


def add_intake_commands(commands: argparse._SubParsersAction) -> None:
    """The intake's subcommands, on the `reuse-data` parser."""
    intake = commands.add_parser(
        "intake",
        help="serve the tester intake (bench sheet uploads) on its own port",
        description="Serve the intake: the upload page at / and the API under /api/intake/. "
        "Testers authenticate with the token `reuse-data testers add` printed.",
    )
    intake.add_argument("--host", default="127.0.0.1", help="interface to listen on (default 127.0.0.1)")
    intake.add_argument("--port", type=int, default=8001, help="port (default 8001)")
    intake.add_argument(
        "--allow-public",
        action="store_true",
        help="listen on an interface other machines reach, only on a network already private or encrypted "
        "(tokens travel in plain HTTP; otherwise keep 127.0.0.1 behind a TLS reverse proxy)",
    )
    intake.set_defaults(handler=command_intake)

    testers = commands.add_parser("testers", help="add, list, rotate or revoke the testers who may upload sheets")
    actions = testers.add_subparsers(dest="testers_command", required=True, metavar="ACTION")
    add = actions.add_parser("add", help="create a tester; prints their token (once) as the last line")
    add.add_argument("name", help="the tester's name, as on the site's team page (e.g. 'Eleni Papadaki')")
    add.set_defaults(handler=command_testers_add)
    actions.add_parser("list", help="every tester and whether their token is active").set_defaults(
        handler=command_testers_list
    )
    rotate = actions.add_parser(
        "rotate",
        help="give a tester a new token and stop the old one, at once; prints the new token (once) as the last line",
        description="Replace an active tester's token: the old token is refused from the same instant the new one "
        "works (one transaction). Their name, when they were added and their receipts stay as they were. For a "
        "revoked tester, `testers add` issues a token again.",
    )
    rotate.add_argument("name", help="a name shown by `reuse-data testers list`")
    rotate.set_defaults(handler=command_testers_rotate)
    revoke = actions.add_parser("revoke", help="stop a tester's token from working")
    revoke.add_argument("name", help="a name shown by `reuse-data testers list`")
    revoke.set_defaults(handler=command_testers_revoke)

    upload = commands.add_parser(
        "upload",
        help="upload a bench sheet to the intake and print the verdict",
        description="Upload a CSV or XLSX bench sheet. Prints the receipt, or every row to fix; exits 1 when rejected.",
    )
    upload.add_argument("file", help="the sheet (.csv or .xlsx)")
    upload.add_argument("--url", default=DEFAULT_INTAKE_URL, help=f"the intake (default {DEFAULT_INTAKE_URL})")
    upload.add_argument("--token", help="your tester token (default: REUSE_DATA_TOKEN)")
    upload.add_argument("--json", action="store_true", help="print the response as JSON")
    upload.set_defaults(handler=command_upload)

    withdraw = commands.add_parser(
        "withdraw",
        help="withdraw an accepted sheet (its slots become retest at the next build)",
        description="Withdraw a sheet found to be wrong. Its readings leave the scores at the next build, the "
        "slots it filled become retest, and the change feed records it. The archive keeps the sheet.",
    )
    withdraw.add_argument("receipt", help="the receipt id printed when the sheet was accepted")
    withdraw.add_argument("--reason", required=True, help="why, for the record")
    withdraw.set_defaults(handler=command_withdraw)
