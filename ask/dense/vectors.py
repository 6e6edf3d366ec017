"""Dense retrieval: every entry text's vector from the snapshot, searched with the question's.

An entry's similarity to a question is the best cosine over its texts (its question and
scenario and answer in six languages, and the analysts' phrasings), so a Punjabi question meets the
Punjabi wording of the entry whatever language the answer is given in.

Vectors are kept in two forms. Each entry's centroid (float32) is compared with every
question: one matrix-vector product over the entries. The texts themselves are compared only
for the ``CANDIDATES`` entries whose centroid is closest, plus any the caller names (the
lexical engine's best), and only those entries are weighed for the question at all, so what
follows the search costs the same at 200 entries as at 20,000; a library of up to
``CANDIDATES`` entries is searched exactly, every entry, every text in float32. A larger one keeps its texts
in 8 bits with a float32 scale per text (a quarter of float32's memory: an entry has about 27
texts once its answers are among them), which moves a cosine by 0.0005 on average and 0.002
at most.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import duckdb
import numpy as np

from ask.dense.encoder import DIMENSIONS
from foundations.arrow_buffers import numbers_of
from warehouse.contract import ASK_VECTORS_TABLE, SNAPSHOT_SCHEMA

CANDIDATES = 256


class VectorsError(RuntimeError):
    """A snapshot whose vectors this server cannot use."""


def quantised(texts: np.ndarray, rows_at_once: int = 65536) -> tuple[np.ndarray, np.ndarray]:
    """(int8 rows, float32 scale per row): each row divided by its largest magnitude over 127,
    rounded; converted a block at a time, so no second full-size copy is made."""
    values = np.empty(texts.shape, np.int8)
    scales = np.empty(len(texts), np.float32)
    for first in range(0, len(texts), rows_at_once):
        block = texts[first : first + rows_at_once].astype(np.float32)
        scale = np.abs(block).max(axis=1) / 127
        scale[scale == 0] = 1.0
        values[first : first + len(block)] = np.rint(block / scale[:, None])
        scales[first : first + len(block)] = scale
    return values, scales


class EntryVectors:
    def __init__(self, entry_of_text: np.ndarray, texts: np.ndarray, entries: int):
        # A small library is searched whole at every question: float32. A large one only at its
        # candidates' rows: 8 bits and a scale per row (``quantised``).
        texts, scales = quantised(texts) if entries > CANDIDATES else (texts.astype(np.float32, copy=False), None)
        if len(entry_of_text) and np.any(np.diff(entry_of_text) < 0):
            order = np.argsort(entry_of_text, kind="stable")
            entry_of_text, texts = entry_of_text[order], texts[order]
            scales = scales[order] if scales is not None else None
        present = np.unique(entry_of_text)
        if len(present) != entries:
            raise VectorsError(f"{entries - len(present)} of {entries} ask entries have no vector")
        self.starts = np.searchsorted(entry_of_text, np.arange(entries)).astype(np.int64)
        self.ends = np.append(self.starts[1:], len(texts))
        self.entry_of_text = entry_of_text
        self.texts = texts
        self.scales = scales
        self.centroids = self._centroids()
        self._every_entry = np.arange(entries)

    def rows(self, first: int, last: int) -> np.ndarray:
        """Text vectors ``first`` to ``last`` in float32."""
        block = self.texts[first:last].astype(np.float32)
        return block if self.scales is None else block * self.scales[first:last, None]

    def _centroids(self, entries_at_once: int = 2048) -> np.ndarray:
        """Each entry's mean text vector, normalised; summed in float32 a block of entries at a time."""
        entries = len(self.starts)
        ends = self.ends
        sums = np.empty((entries, self.texts.shape[1]), np.float32)
        for first in range(0, entries, entries_at_once):
            last = min(first + entries_at_once, entries)
            block = self.rows(int(self.starts[first]), int(ends[last - 1]))
            sums[first:last] = np.add.reduceat(block, self.starts[first:last] - self.starts[first], axis=0)
        return sums / np.linalg.norm(sums, axis=1, keepdims=True)

    @classmethod
    def from_snapshot(
        cls,
        connection: duckdb.DuckDBPyConnection,
        entry_numbers: Mapping[str, int],
        model_id: str,
        schema: str = SNAPSHOT_SCHEMA,
    ) -> EntryVectors:
        """The vectors of a snapshot (in ``schema``), refused unless ``model_id`` (the encoder questions
        go through) made them."""
        table_name = f"{schema}.{ASK_VECTORS_TABLE}"
        models = {row[0] for row in connection.execute(f"SELECT DISTINCT model FROM {table_name}").fetchall()}
        if models != {model_id}:
            raise VectorsError(
                f"the snapshot's ask vectors were made by {sorted(models)}, its questions would be embedded "
                f"with {model_id}"
            )
        table = connection.sql(f"SELECT entry_id, vector FROM {table_name}").to_arrow_table()
        entry_ids = table["entry_id"].to_pylist()
        entry_of_text = np.asarray([entry_numbers.get(entry_id, -1) for entry_id in entry_ids], dtype=np.int32)
        if (entry_of_text < 0).any():
            unknown = {entry_id for entry_id in entry_ids if entry_id not in entry_numbers}
            raise VectorsError(f"ask vectors of {len(unknown)} entries the snapshot does not hold, e.g. {min(unknown)}")
        flat = numbers_of(table["vector"].combine_chunks().flatten())
        return cls(entry_of_text, flat.reshape(-1, DIMENSIONS), len(entry_numbers))

    @property
    def nbytes(self) -> int:
        scales = self.scales.nbytes if self.scales is not None else 0
        indexes = self.entry_of_text.nbytes + self.starts.nbytes + self.ends.nbytes
        return self.texts.nbytes + scales + self.centroids.nbytes + indexes

    def similarities(self, question: np.ndarray, also: np.ndarray | None = None) -> Similarities:
        """The entries worth weighing for ``question`` and their cosines (``Similarities``).

        A small library's entries are all weighed, each by its best text. A large one's are the
        ``CANDIDATES`` whose centroid is closest, plus ``also``: any other entry's best text is at
        most a little above its centroid, which is below theirs, so it could not come first.
        """
        centroid = self.centroids @ question
        entries = len(self.starts)
        if entries <= CANDIDATES:
            best = np.maximum.reduceat(self.texts @ question, self.starts)
            return Similarities(self._every_entry, best, float(centroid.mean()))
        chosen = np.argpartition(-centroid, CANDIDATES)[:CANDIDATES]
        chosen = np.union1d(chosen, also if also is not None else []).astype(np.int64)  # sorted: rows ascend
        # The chosen entries' rows, ascending (each entry's are consecutive): one arange, shifted per entry.
        lengths = self.ends[chosen] - self.starts[chosen]
        rows = np.repeat(self.starts[chosen] - (np.cumsum(lengths) - lengths), lengths) + np.arange(lengths.sum())
        sims = (self.texts[rows].astype(np.float32) @ question) * self.scales[rows]
        best = np.maximum.reduceat(sims, np.searchsorted(rows, self.starts[chosen]))
        return Similarities(chosen, best, float(centroid.mean()))


@dataclass(frozen=True)
class Similarities:
    """A question's cosines with the entries weighed for it (``EntryVectors.similarities``)."""

    entries: np.ndarray  # their numbers in the library, ascending
    best: np.ndarray  # each one's best cosine over its texts
    centroid_mean: float  # the question's mean cosine to every entry's centroid, weighed or not
