"""Content coding: which coding a client's Accept-Encoding prefers, and gzip, once per snapshot
for a body fixed for the snapshot and as it leaves for a stream."""

from __future__ import annotations

import functools
import gzip
import zlib
from collections.abc import AsyncIterable, AsyncIterator
from typing import TYPE_CHECKING

from starlette.requests import Request

from release.codecs import GZIP_LEVEL

if TYPE_CHECKING:
    from foundations.release_caches import ServedRelease

GZIP_BODIES = f"{__name__}.bodies"  # gzip copies by the key ``compressed`` is given
GZIP_BODIES_KEPT = 100_000  # gzip copies of keyed bodies (rendered pages); MEMO_BYTES bounds them too
STREAM_GZIP_LEVEL = 1  # streams are compressed as they leave, on the event loop: the fastest level


def accepts_gzip(request: Request) -> bool:
    """Whether the client's Accept-Encoding allows gzip (q-values honoured, ``*`` included)."""
    return gzip_accepted(request.headers.get("accept-encoding"))


@functools.lru_cache(maxsize=256)  # clients send a handful of distinct Accept-Encoding values
def coding_weights(header: str | None) -> dict[str, float]:
    """The q-value of each content coding an Accept-Encoding value names."""
    weights: dict[str, float] = {}
    for item in (header or "").lower().split(","):
        coding, *parameters = (part.strip() for part in item.split(";"))
        weight = 1.0
        for parameter in parameters:
            name, _, value = parameter.partition("=")
            if name.strip() == "q":
                try:
                    weight = float(value)
                except ValueError:
                    weight = 0.0
        if coding:
            weights[coding] = weight
    return weights


def gzip_accepted(header: str | None) -> bool:
    """Whether an Accept-Encoding value allows gzip."""
    weights = coding_weights(header)
    return weights.get("gzip", weights.get("x-gzip", weights.get("*", 0.0))) > 0


@functools.lru_cache(maxsize=1024)
def negotiate(header: str | None, available: tuple[str, ...]) -> str:
    """The coding to send: of the ``available`` ones (best first), the one the client weighs
    highest; identity, when not refused, ranks below any coding the client accepts."""
    weights = coding_weights(header)
    wildcard = weights.get("*")
    best, best_weight = "identity", 0.0
    for coding in available:
        if coding in weights:
            weight = weights[coding]
        elif coding == "gzip" and "x-gzip" in weights:
            weight = weights["x-gzip"]
        elif coding == "identity":
            weight = 0.0 if wildcard == 0 else 0.001
        else:
            weight = wildcard or 0.0
        if weight > best_weight:
            best, best_weight = coding, weight
    return best


def compressed(snapshot: ServedRelease, body: bytes, key: str | None = None) -> bytes:
    """``body`` gzipped; with a ``key``, once per snapshot (the body must be fixed for that key)."""
    if key is None:
        return gzip.compress(body, GZIP_LEVEL, mtime=0)
    gzip_bodies = snapshot.caches.memo(GZIP_BODIES, GZIP_BODIES_KEPT)
    return gzip_bodies.get_or_build(key, lambda: gzip.compress(body, GZIP_LEVEL, mtime=0))


async def gzip_stream(chunks: AsyncIterable[bytes]) -> AsyncIterator[bytes]:
    """The chunks as one gzip stream, each flushed as it comes so that none waits for the next."""
    compressor = zlib.compressobj(STREAM_GZIP_LEVEL, zlib.DEFLATED, 31)
    async for chunk in chunks:
        yield compressor.compress(chunk) + compressor.flush(zlib.Z_SYNC_FLUSH)
    yield compressor.flush()
