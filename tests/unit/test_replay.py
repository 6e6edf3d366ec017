"""Replay keys what an answer varies on, and refuses a route whose key misses any of it."""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
from pathlib import Path
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute

from release.snapshot import Snapshot, SnapshotHolder
from serve.http.replay import REPLAYED, RESPONSES_KEPT, Varies, replayed, varies_on
from serve.http.responses import answer_with_validators
from tests.support.asgi import get_scope

ANSWERED: list[str] = []  # the language of each answer ``greeting`` made


def app_serving(route: BaseRoute) -> Starlette:
    """An app serving ``route`` from one snapshot."""
    app = Starlette(routes=[route])
    holder = SnapshotHolder(Path("unused"))
    holder._current = Snapshot("v1", Path("v1"), dt.datetime.now(dt.UTC), "http://127.0.0.1:8000", {}, None)
    app.state.snapshots = holder
    return app


@varies_on(Varies.LANGUAGE | Varies.CODING)
async def greeting(request: Request) -> Response:
    """A greeting in the client's language: its answer varies on Accept-Language."""
    language = request.headers.get("accept-language", "en")
    ANSWERED.append(language)
    body = {"en": b'{"hello": "world"}', "el": b'{"hello": "kosme"}'}[language]
    return answer_with_validators(request, request.app.state.snapshots.current, body, vary_language=True)


async def undeclared(request: Request) -> Response:
    return answer_with_validators(request, request.app.state.snapshots.current, b"{}")


def get(app: Starlette, path: str, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
    """One GET through the ASGI app: its status, headers and body."""
    scope = get_scope(path, headers=headers)
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(app(scope, receive, send))
    start = sent[0]
    body = b"".join(m.get("body", b"") for m in sent[1:])
    return start["status"], {k.decode(): v.decode() for k, v in start["headers"]}, body


def test_a_route_whose_answer_varies_on_something_it_does_not_key_is_refused():
    with pytest.raises(ValueError, match=r"/greeting keys .* but its handler greeting answers differently by the lang"):
        replayed("/greeting", greeting, key=Varies.QUERY | Varies.CODING)
    with pytest.raises(ValueError, match=r"/greeting .* the content coding"):
        replayed("/greeting", greeting, key=Varies.LANGUAGE)


def test_a_route_whose_handler_does_not_say_what_its_answer_varies_on_is_refused():
    with pytest.raises(ValueError, match=r"/plain cannot be defined: its handler undeclared does not declare"):
        replayed("/plain", undeclared, key=Varies.QUERY | Varies.CODING)


def test_a_properly_keyed_route_replays_each_language_its_own_answer():
    ANSWERED.clear()
    app = app_serving(replayed("/greeting", greeting, key=Varies.LANGUAGE | Varies.CODING))
    answered = ANSWERED
    first = get(app, "/greeting", {"accept-language": "el"})
    assert first[0] == 200 and first[2] == b'{"hello": "kosme"}'
    assert get(app, "/greeting", {"accept-language": "el"}) == first  # replayed: the handler ran once
    assert answered == ["el"]
    english = get(app, "/greeting", {"accept-language": "en"})
    assert english[2] == b'{"hello": "world"}' and answered == ["el", "en"]
    assert get(app, "/greeting", {"accept-language": "en"}) == english and answered == ["el", "en"]
    status, headers, body = get(app, "/greeting", {"accept-language": "el", "if-none-match": first[1]["etag"]})
    assert (status, body, headers["etag"]) == (304, b"", first[1]["etag"]) and answered == ["el", "en"]
    assert len(app.state.snapshots.current.caches.memo(REPLAYED, RESPONSES_KEPT)) == 2


def test_an_answer_whose_vary_header_names_an_unkeyed_header_is_sent_but_not_kept(caplog):
    @varies_on(Varies.CODING)  # but it also reads Accept-Language: its Vary header says so
    async def misdeclared(request: Request) -> Response:
        return await greeting(request)

    ANSWERED.clear()
    app = app_serving(replayed("/greeting", misdeclared, key=Varies.CODING))
    with caplog.at_level(logging.ERROR, logger="serve.http.replay"):
        assert get(app, "/greeting", {"accept-language": "el"})[2] == b'{"hello": "kosme"}'
        assert get(app, "/greeting", {"accept-language": "en"})[2] == b'{"hello": "world"}'  # not el's, replayed
    assert ANSWERED == ["el", "en"] and len(app.state.snapshots.current.caches.memo(REPLAYED, RESPONSES_KEPT)) == 0
    assert (
        "/greeting keys its answers on the path and the content coding (Accept-Encoding), but its answer says "
        "Vary: Accept-Encoding, Accept-Language" in caplog.text
    )
