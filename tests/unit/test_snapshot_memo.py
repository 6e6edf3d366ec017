"""A release's caches remember what was worked out from it, within a bound, each feature its own."""

import datetime as dt
from pathlib import Path

from foundations.release_caches import MEMO_BYTES, BoundedMemo
from release.snapshot import Snapshot
from serve.html.site import PAGES, PAGES_KEPT


def test_a_value_is_built_once_and_the_oldest_goes_past_the_bound():
    memo: BoundedMemo[str, str] = BoundedMemo(kept=2)
    built: list[str] = []

    def build(key: str):
        return lambda: built.append(key) or key.upper()

    assert [memo.get_or_build(k, build(k)) for k in ("a", "b", "a")] == ["A", "B", "A"]
    assert built == ["a", "b"]
    memo.get_or_build("c", build("c"))  # "a" was the oldest kept: it goes
    assert list(memo.values) == ["b", "c"] and memo.get("a") is None
    assert memo.get_or_build("a", build("a")) == "A" and built == ["a", "b", "c", "a"]


def test_bodies_are_kept_within_a_byte_bound_the_oldest_going_first():
    memo: BoundedMemo[str, bytes] = BoundedMemo(kept=100, max_bytes=1000)
    for key in "abcd":
        memo.get_or_build(key, lambda: b"x" * 400)
    assert list(memo.values) == ["c", "d"] and memo.held == 800
    big = memo.get_or_build("e", lambda: b"y" * 5000)
    assert list(memo.values) == ["e"] and big == b"y" * 5000  # one body is always kept


def test_each_snapshot_keeps_each_features_memo_apart():
    def snapshot() -> Snapshot:
        return Snapshot("v1", Path("v1"), dt.datetime.now(dt.UTC), "http://127.0.0.1:8000", {}, connection=None)

    first, second = snapshot(), snapshot()
    first.caches.memo(PAGES, PAGES_KEPT).get_or_build(("/guides/x", "en"), lambda: b"<html>")
    assert second.caches.memo(PAGES, PAGES_KEPT).get(("/guides/x", "en")) is None
    assert first.caches.memo("another feature", 3).get(("/guides/x", "en")) is None
    pages = first.caches.memo(PAGES, PAGES_KEPT)
    assert (pages.kept, pages.max_bytes) == (PAGES_KEPT, MEMO_BYTES)
