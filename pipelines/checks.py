"""Asset checks written in Python, where a dbt test can only count failing rows.

``translations_complete`` names every recommendation and library answer that lacks a
language, and which languages it lacks, in the check's ``report`` (shown in the Dagster UI
and printed by ``reuse-data build``). The check blocks: the ask engine answers in six
languages, so nothing is published while one is missing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dagster import AssetCheckResult, AssetChecksDefinition, AssetCheckSeverity, AssetKey, MetadataValue, asset_check

from pipelines.resources import WarehouseResource
from warehouse.contract import MARTS_SCHEMA

# table -> (the column naming an entry, the translated columns of its public record)
TRANSLATED_ENTRIES: Mapping[str, tuple[str, tuple[str, ...]]] = {
    "recommendations": ("scenario_slug", ("question", "scenario", "answer", "evidence")),
    "answers": ("answer_id", ("question", "answer")),
}


def missing_translations(
    rows: Sequence[Mapping[str, Any]], key: str, columns: Sequence[str]
) -> list[tuple[str, str, list[str]]]:
    """(entry, column, missing languages) for every translated value with an empty language."""
    missing = []
    for row in rows:
        for column in columns:
            translations = row[column] or {}
            absent = [lang for lang, text in translations.items() if not (text or "").strip()]
            if absent or not translations:
                missing.append((row[key], column, absent or ["all"]))
    return missing


def translations_check(table: str) -> AssetChecksDefinition:
    key, columns = TRANSLATED_ENTRIES[table]

    @asset_check(
        asset=AssetKey(["marts", table]),
        name="translations_complete",
        blocking=True,
        description=f"Every {key} has its {', '.join(columns)} in every supported language.",
    )
    def check(warehouse: WarehouseResource) -> AssetCheckResult:
        with warehouse.connect() as connection:
            cursor = connection.execute(f'SELECT {key}, {", ".join(columns)} FROM {MARTS_SCHEMA}."{table}"')
            names = [d[0] for d in cursor.description]
            rows = [dict(zip(names, values, strict=True)) for values in cursor.fetchall()]
        missing = missing_translations(rows, key, columns)
        report = "; ".join(f"{entry} {column}: {', '.join(langs)}" for entry, column, langs in missing)
        return AssetCheckResult(
            passed=not missing,
            severity=AssetCheckSeverity.ERROR,
            metadata={
                "entries": len(rows),
                "missing": len(missing),
                "report": MetadataValue.text(report or "every entry is translated"),
            },
        )

    return check


translation_checks = [translations_check(table) for table in TRANSLATED_ENTRIES]
