"""What features work out from one release and keep with it, within a bound.

A release never changes, so a value worked out from it (a rendered page, a gzip copy, a
replayed answer) stays right for as long as the release is served. Each feature owns its own
bounded memo, made the first time it asks under the feature's name, and all of them go with
the release when a new one is served. The HTTP mechanics see a release only as its version and
its caches (``ServedRelease``), so they need nothing of the release's format.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, Generic, Protocol, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")
# Bytes of bodies one memo keeps at most (rendered pages, replayed answers, their gzip copies,
# change documents): at 100,000 products a crawler would otherwise fill them with hundreds of
# megabytes. The oldest go first.
MEMO_BYTES = 8 * 1024 * 1024


class BoundedMemo(Generic[K, V]):
    """Values each built once for their key and kept; past ``kept`` keys, or ``max_bytes`` of
    bodies, the oldest go, so that clients asking ever new questions cannot grow the server
    without bound (one body is always kept)."""

    def __init__(self, kept: int, max_bytes: int = MEMO_BYTES) -> None:
        self.kept = kept
        self.max_bytes = max_bytes
        self.values: dict[K, V] = {}
        self.held = 0  # bytes of bodies held

    def get(self, key: K) -> V | None:
        """The value kept for ``key``, or None."""
        return self.values.get(key)

    def get_or_build(self, key: K, build: Callable[[], V]) -> V:
        """The value kept for ``key``, built and kept now if there is none."""
        values = self.values
        if key in values:
            return values[key]
        value = values[key] = build()
        self.held += body_size(value)
        while len(values) > self.kept or (self.held > self.max_bytes and len(values) > 1):
            self.held -= body_size(values.pop(next(iter(values))))
        return value

    def __len__(self) -> int:
        return len(self.values)


def body_size(value: Any) -> int:
    """The bytes a kept value holds: a body's length (bytes, or an answer's ``body``); 0 for
    small structured values, which their memo bounds by count."""
    if isinstance(value, bytes):
        return len(value)
    body = getattr(value, "body", None)
    return len(body) if isinstance(body, bytes) else 0


class ReleaseCaches:
    """Every feature's memo of one release, by the name of the feature that owns it."""

    def __init__(self) -> None:
        self.owned: dict[str, Any] = {}

    def memo(self, owner: str, kept: int, max_bytes: int = MEMO_BYTES) -> BoundedMemo[Any, Any]:
        """``owner``'s memo of this release, made on its first use."""
        memo = self.owned.get(owner)
        if memo is None:
            memo = self.owned.setdefault(owner, BoundedMemo(kept, max_bytes))
        return memo

    def keep(self, owner: str, value: Any) -> None:
        """Keep ``owner``'s state built for this release (e.g. the ask engine, built when it loads)."""
        self.owned[owner] = value

    def kept(self, owner: str) -> Any:
        """What ``owner`` kept for this release, or None."""
        return self.owned.get(owner)


class ServedRelease(Protocol):
    """A release as the HTTP mechanics need it: a version for validators, caches for bodies."""

    version: str
    caches: ReleaseCaches
