"""A snapshot remembers what was worked out from it, within a bound."""

import datetime as dt
from pathlib import Path

from serve.snapshot import Snapshot


def test_a_value_is_built_once_and_the_oldest_goes_past_the_bound():
    snapshot = Snapshot("v1", Path("v1"), dt.datetime.now(dt.UTC), "http://127.0.0.1:8000", {}, connection=None)
    built: list[str] = []

    def build(key: str):
        return lambda: built.append(key) or key.upper()

    assert [snapshot.remembered("memo", k, build(k), kept=2) for k in ("a", "b", "a")] == ["A", "B", "A"]
    assert built == ["a", "b"]
    snapshot.remembered("memo", "c", build("c"), kept=2)  # "a" was the oldest kept: it goes
    assert list(snapshot.cache["memo"]) == ["b", "c"]
    assert snapshot.remembered("memo", "a", build("a"), kept=2) == "A" and built == ["a", "b", "c", "a"]


def test_bodies_are_kept_within_a_byte_bound_the_oldest_going_first():
    snapshot = Snapshot("v1", Path("v1"), dt.datetime.now(dt.UTC), "http://127.0.0.1:8000", {}, connection=None)
    for key in "abcd":
        snapshot.remembered("pages", key, lambda: b"x" * 400, kept=100, max_bytes=1000)
    assert list(snapshot.cache["pages"]) == ["c", "d"] and snapshot.memo_bytes["pages"] == 800
    big = snapshot.remembered("pages", "e", lambda: b"y" * 5000, kept=100, max_bytes=1000)
    assert list(snapshot.cache["pages"]) == ["e"] and big == b"y" * 5000  # one body is always kept
