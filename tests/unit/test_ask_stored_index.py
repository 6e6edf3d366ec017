"""The lexical index as the pipeline stores it and a server loads it: the same answers as analysed."""

from __future__ import annotations

import duckdb
import pytest

from ask.lexical.index import AskIndex
from ask.lexical.stored import StoredIndexError, index_tables, load_index
from benchmarks.lexical_baseline import LexicalBaseline
from tests.support.ask_libraries import SMALL_LIBRARY, index_of, library_answer, recommendation

QUESTIONS = [
    "bottle for hot tea",
    "botle for hot tea",  # a typo, corrected through the stored neighbourhoods
    "保温杯",
    "giu nhiet",
    "cleaning a straw",
    "nothing at all like it",
]


@pytest.fixture
def analysed() -> AskIndex:
    return index_of(
        {**recommendation("Which bottle keeps tea hot?", "/bottle"), "scenario_slug": "bottle"},
        {**library_answer("How do I clean a reusable straw?", "/straw", zh="怎么清洗吸管？"), "answer_id": "straw"},
        {
            **library_answer("Which insulated cup?", "/cup", zh="哪款保温杯好？", vi="Ly giữ nhiệt nào tốt?"),
            "answer_id": "cup",
        },
    )


def stored(index: AskIndex) -> duckdb.DuckDBPyConnection:
    connection = duckdb.connect()
    for name, table in index_tables(index).items():
        connection.register("incoming", table)
        connection.execute(f'CREATE TABLE "{name}" AS SELECT * FROM incoming')
        connection.unregister("incoming")
    return connection


def test_a_loaded_index_answers_as_the_analysed_one(analysed: AskIndex):
    loaded = load_index(analysed.entries, stored(analysed))
    for question in QUESTIONS:
        answers = [
            [(m.entry.id, round(m.score, 4)) for m in LexicalBaseline(index, SMALL_LIBRARY).search(question, 5)]
            for index in (loaded, analysed)
        ]
        assert answers[0] == answers[1], question
    assert loaded.corrections("botl") == analysed.corrections("botl") == {"bottl"}  # "botle", stemmed
    assert loaded.latin_vocabulary == analysed.latin_vocabulary


def test_an_index_stored_for_other_entries_is_refused(analysed: AskIndex):
    with pytest.raises(StoredIndexError, match="another order"):
        load_index(list(reversed(analysed.entries)), stored(analysed))
