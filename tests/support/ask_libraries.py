"""Small hand-made ask libraries: recommendations and library answers built from a few phrases,
and the lexical index of them, for the ask engine's ranking tests."""

from __future__ import annotations

import dataclasses

from ask.entries import Entry
from ask.lexical.index import AskIndex, answer_fields, recommendation_fields
from benchmarks.lexical_baseline import CALIBRATED
from warehouse.reference_data import LANGUAGES

# A library of three entries has small IDFs: its scores sit far below the absolute threshold
# calibrated on the demo, so ranking is tested with that threshold off (coverage still applies).
SMALL_LIBRARY = dataclasses.replace(CALIBRATED, min_score=dict.fromkeys(LANGUAGES, 0.0))


def translated(**texts):
    return {lang: texts.get(lang, "") for lang in LANGUAGES}


def recommendation(question: str, url: str, figure=12.5, **translations):
    return {
        "question": translated(en=question, **translations),
        "scenario": translated(en="keeping tea hot at work"),
        "answer": translated(en="The Meridian kept tea hottest on our bench."),
        "evidence": translated(en="62 °C after 12 hours"),
        "category_name": translated(en="Insulated bottles"),
        "brand": "Copperleaf",
        "product_name": "Meridian 750 ml",
        "figure_value": figure,
        "url": url,
    }


def library_answer(question: str, url: str, **translations):
    return {"question": translated(en=question, **translations), "answer": translated(en="Rinse it."), "url": url}


def index_of(*rows) -> AskIndex:
    entries, fields = [], []
    for row in rows:
        if "scenario" in row:
            entries.append(Entry("recommendation", row, bench_evidence=row["figure_value"] is not None))
            fields.append(recommendation_fields(row))
        else:
            entries.append(Entry("answer-library", row, bench_evidence=False))
            fields.append(answer_fields(row, None))
    return AskIndex.analyse(entries, fields)
