"""The lexical index as tables: written by the pipeline, loaded by the server without analysis.

Analysing every entry's texts in six languages is the slow part of building the index (20,000
entries took 40 s inside the server). The pipeline does it once per build and stores the
result in the snapshot: one row per term (its IDF, the entries holding it and its weight in
each, and whether English or Vietnamese text uses it), the typo-correction neighbourhoods, and
the order of the entries the postings count in. A server turns those rows into arrays.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ask.entries import Entry
from ask.lexical.index import TUNED, AskIndex
from foundations.arrow_buffers import flat_values
from warehouse.contract import ASK_ENTRY_ORDER_TABLE, ASK_LEXICON_TABLE, ASK_NEIGHBOURS_TABLE, SNAPSHOT_SCHEMA


class StoredIndexError(RuntimeError):
    """A snapshot whose stored index does not fit its entries."""


def index_tables(index: AskIndex) -> dict[str, pa.Table]:
    """The tables that hold ``index``, by name."""
    terms = list(index.postings)
    entries = [index.postings[term][0] for term in terms]
    weights = [index.postings[term][1] for term in terms]
    offsets = np.concatenate([[0], np.cumsum([len(e) for e in entries])]).astype(np.int32)
    flat_entries = np.concatenate(entries) if entries else np.empty(0, np.int32)
    flat_weights = np.concatenate(weights) if weights else np.empty(0, np.float32)
    neighbours = sorted((index.neighbourhoods or {}).items())
    return {
        ASK_LEXICON_TABLE: pa.table(
            {
                "term": pa.array(terms, pa.string()),
                "idf": pa.array([index.idf[term] for term in terms], pa.float64()),
                "entries": pa.ListArray.from_arrays(pa.array(offsets), pa.array(flat_entries, pa.int32())),
                "weights": pa.ListArray.from_arrays(pa.array(offsets), pa.array(flat_weights, pa.float32())),
                "latin_en": pa.array([term in index.latin_vocabulary["en"] for term in terms]),
                "latin_vi": pa.array([term in index.latin_vocabulary["vi"] for term in terms]),
            }
        ),
        ASK_NEIGHBOURS_TABLE: pa.table(
            {
                "deletion": pa.array([key for key, _ in neighbours], pa.string()),
                "terms": pa.array([sorted(near) for _, near in neighbours], pa.list_(pa.string())),
            }
        ),
        ASK_ENTRY_ORDER_TABLE: pa.table(
            {
                "entry_number": pa.array(range(len(index.entries)), pa.int32()),
                "entry_id": pa.array([entry.id for entry in index.entries], pa.string()),
            }
        ),
    }


def _column(table: pa.Table, name: str) -> pa.Array:
    return table[name].combine_chunks()


class StoredPostings(Mapping[str, tuple[np.ndarray, np.ndarray]]):
    """Postings as loaded: one flat array of entries and one of weights, a term's being a slice
    of each, cut when the term is looked up (a dict of 60,000 pairs of arrays took half a second)."""

    def __init__(self, terms: list[str], offsets: np.ndarray, entries: np.ndarray, weights: np.ndarray):
        self._row = {term: row for row, term in enumerate(terms)}
        self._offsets, self._entries, self._weights = offsets, entries, weights

    def __getitem__(self, term: str) -> tuple[np.ndarray, np.ndarray]:
        row = self._row[term]
        start, end = self._offsets[row], self._offsets[row + 1]
        return self._entries[start:end], self._weights[start:end]

    def __contains__(self, term: object) -> bool:
        return term in self._row

    def __iter__(self) -> Iterator[str]:
        return iter(self._row)

    def __len__(self) -> int:
        return len(self._row)


def stored_neighbours(table: pa.Table) -> Callable[[set[str]], set[str]]:
    """Typo-correction lookups from the snapshot's neighbourhood table: its keys in a dict (half a
    second at 20,000 entries), a key's terms read from Arrow only when a question's word needs them.
    (Asking DuckDB at each lookup instead cost 5 ms a word.)"""
    rows = dict(zip(_column(table, "deletion").to_pylist(), range(table.num_rows), strict=True))
    terms = _column(table, "terms")

    def neighbours(keys: set[str]) -> set[str]:
        return {term for key in keys if key in rows for term in terms[rows[key]].as_py()}

    return neighbours


def load_index(entries: list[Entry], connection: duckdb.DuckDBPyConnection, schema: str = SNAPSHOT_SCHEMA) -> AskIndex:
    """The index stored in a snapshot (in ``schema``), for ``entries`` in the order the snapshot's tables give them."""
    order = connection.sql(f"SELECT entry_id FROM {schema}.{ASK_ENTRY_ORDER_TABLE} ORDER BY entry_number").fetchall()
    if [row[0] for row in order] != [entry.id for entry in entries]:
        raise StoredIndexError("the stored ask index counts its entries in another order than the snapshot's")
    lexicon = connection.sql(
        f"SELECT term, idf, entries, weights, latin_en, latin_vi FROM {schema}.{ASK_LEXICON_TABLE}"
    ).to_arrow_table()
    terms = _column(lexicon, "term").to_pylist()
    offsets, entry_numbers = flat_values(lexicon["entries"])
    postings = StoredPostings(
        terms,
        offsets,
        entry_numbers.astype(np.int32, copy=False),
        flat_values(lexicon["weights"])[1].astype(np.float32, copy=False),
    )
    idf = dict(zip(terms, _column(lexicon, "idf").to_pylist(), strict=True))
    latin = {
        language: set(pc.filter(_column(lexicon, "term"), _column(lexicon, f"latin_{language}")).to_pylist())
        for language in ("en", "vi")
    }
    neighbourhoods = connection.sql(f"SELECT deletion, terms FROM {schema}.{ASK_NEIGHBOURS_TABLE}").to_arrow_table()
    return AskIndex(entries, TUNED, postings, idf, latin, stored_neighbours(neighbourhoods))
