"""uvicorn's httptools protocol with a bound on the request head, for the API and the intake.

Every refusal made here, before the app sees the request, is problem+json like the app's own:
400 for a request httptools cannot parse, 414 and 431 for a head too long.

httptools keeps whatever a client sends before the blank line that ends the headers: a 20 MB
header was buffered whole and then answered. Here a request line with its headers may take
``MAX_HEAD_BYTES``; past that, the client gets 414 (still in the request line) or 431 (in the
headers) as problem+json, and the connection closes: a head still arriving is refused once
its reads pass the bound, a head that arrived whole is measured before the app sees it.

Pass ``BOUNDED_HTTP`` as uvicorn's ``http`` option: an import string, so every worker process
loads the class itself.
"""

from __future__ import annotations

import orjson
from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

from foundations.problem_details import problem_body

MAX_HEAD_BYTES = 32 * 1024
BOUNDED_HTTP = "foundations.http_limits:BoundedHttpToolsProtocol"
_EXCEEDS = {414: "request line exceeds", 431: "request line and headers exceed"}


def head_too_large(status: int) -> bytes:
    """The problem+json body of a 414 or 431 refusal."""
    detail = f"The {_EXCEEDS[status]} {MAX_HEAD_BYTES} bytes. Send shorter values."
    return orjson.dumps(problem_body(status, detail))


class BoundedHttpToolsProtocol(HttpToolsProtocol):
    """``HttpToolsProtocol`` that refuses a request head longer than ``MAX_HEAD_BYTES``."""

    def connection_made(self, transport) -> None:  # type: ignore[no-untyped-def]
        super().connection_made(transport)
        self._head_bytes = 0
        self._in_head = True
        self._in_request_line = True
        self._message_ended = False

    def data_received(self, data: bytes) -> None:
        if self.transport.is_closing():
            return
        super().data_received(data)
        if not self._in_head:
            return
        if self._message_ended:
            # This read finished a request; what follows it in the read, if anything, starts the
            # next head, which is counted from the next read on (and measured whole at its end).
            self._message_ended = False
            return
        # Every byte of this read belongs to a head that is not complete yet.
        self._head_bytes += len(data)
        self._in_request_line = self._in_request_line and b"\n" not in data
        if self._head_bytes > MAX_HEAD_BYTES and not self.transport.is_closing():
            self._refuse(414 if self._in_request_line else 431)

    def on_headers_complete(self) -> None:
        # A head that arrived in one read is measured here, before the app sees it.
        self._in_head = False
        size = len(self.url) + sum(len(name) + len(value) + 4 for name, value in self.headers)
        if size > MAX_HEAD_BYTES:
            self._refuse(414 if len(self.url) > MAX_HEAD_BYTES else 431)
            return
        super().on_headers_complete()

    def on_body(self, body: bytes) -> None:
        if not self.transport.is_closing():
            super().on_body(body)

    def on_message_complete(self) -> None:
        if self.transport.is_closing():
            return
        super().on_message_complete()
        self._head_bytes, self._in_head, self._in_request_line, self._message_ended = 0, True, True, True

    def send_400_response(self, msg: str) -> None:
        """httptools could not parse the request (a NUL in a header, say): 400 as problem+json."""
        detail = "The request is not valid HTTP/1.1 (a control character in a header, or a malformed line)."
        self._send_refusal(400, orjson.dumps(problem_body(400, detail)))

    def _refuse(self, status: int) -> None:
        self.logger.warning("refused a request whose head exceeded %d bytes (%d)", MAX_HEAD_BYTES, status)
        self._send_refusal(status, head_too_large(status))

    def _send_refusal(self, status: int, body: bytes) -> None:
        content = [STATUS_LINE[status]]
        for name, value in self.server_state.default_headers:
            content.extend([name, b": ", value, b"\r\n"])
        content.extend(
            [
                b"content-type: application/problem+json\r\n",
                b"content-length: " + str(len(body)).encode("ascii") + b"\r\n",
                b"connection: close\r\n",
                b"\r\n",
                body,
            ]
        )
        self.transport.write(b"".join(content))
        self.transport.close()
