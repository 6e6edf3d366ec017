"""Unchanged work is kept: an asset whose inputs have the key they had when it last ran does not run
again, and says so the same way everywhere. Its log says "kept", with the key; its metadata says
``unchanged``; and its data version is the key, so the Dagster UI shows what follows it as up to
date. A made asset reports its key as its data version too, so the two can be told apart in the
UI's history only by ``unchanged``.

The keys are made in ``foundations.content_keys`` (and, for tables, ``warehouse.relation_keys``);
where each is kept is the asset's business: a table's own comment (``warehouse.relation_keys.hold_key``),
the ask decision's row, the raw rows' file digests.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dagster import AssetKey, DataVersion, MaterializeResult

SHOWN_KEY = 12  # hex digits of a key a log line shows: enough to tell two apart


def keyed_result(
    key: str,
    unchanged: bool,
    metadata: dict[str, Any] | None = None,
    asset_key: AssetKey | None = None,
) -> MaterializeResult:
    """An asset's result, made or kept, with ``key`` (what it was made from) as its data version."""
    return MaterializeResult(
        asset_key=asset_key,
        metadata={**(metadata or {}), "unchanged": unchanged, "key": key},
        data_version=DataVersion(key),
    )


def say_kept(log: Callable[[str], None], what: str, key: str) -> None:
    """The log line of work kept: what, and the key it was made from."""
    log(f"kept {what}: made from the same inputs before (key {key[:SHOWN_KEY]})")


def kept(
    log: Callable[[str], None],
    what: str,
    key: str,
    metadata: dict[str, Any] | None = None,
    asset_keys: list[AssetKey | None] | None = None,
) -> list[MaterializeResult]:
    """The results of work skipped because its inputs are unchanged: one per asset it makes
    (``asset_keys``; one result for the asset running when None), and the log line."""
    say_kept(log, what, key)
    return [keyed_result(key, True, metadata, asset_key) for asset_key in (asset_keys or [None])]
