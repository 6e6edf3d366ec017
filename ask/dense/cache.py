"""Entry vectors already computed, by model and text hash, shared by every home on the machine.

Embedding the demo's texts cold takes about 20 s on two cores; a build whose texts are
unchanged should take none of it, and neither should the next fresh home a test makes. So
vectors are kept outside any one home, in a SQLite file (``REUSE_DATA_EMBEDDING_CACHE``),
keyed by the model that made them and the sha256 of the text. SQLite serialises writers
across processes, so builds running side by side (the suite does) share it safely; a cache
that cannot be read is rebuilt, never trusted: it only ever saves time.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterable, Iterator
from pathlib import Path

import numpy as np

from ask.dense.encoder import DIMENSIONS

_SCHEMA = """
CREATE TABLE IF NOT EXISTS vectors (
    model TEXT NOT NULL,
    text_sha256 TEXT NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (model, text_sha256)
) WITHOUT ROWID
"""
_LOOKUP_CHUNK = 500  # SQLite's bound-parameter limit is 999 by default


class VectorCache:
    def __init__(self, path: Path):
        self.path = path

    @contextlib.contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        connection = sqlite3.connect(self.path, timeout=60)
        try:
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute(_SCHEMA)
            yield connection
            connection.commit()
        finally:
            connection.close()

    def get(self, model: str, hashes: Iterable[str]) -> dict[str, np.ndarray]:
        """The cached vectors among ``hashes``; a damaged cache file answers nothing."""
        wanted = list(dict.fromkeys(hashes))
        found: dict[str, np.ndarray] = {}
        try:
            with self._connect() as connection:
                for start in range(0, len(wanted), _LOOKUP_CHUNK):
                    chunk = wanted[start : start + _LOOKUP_CHUNK]
                    rows = connection.execute(
                        f"SELECT text_sha256, vector FROM vectors WHERE model = ? AND text_sha256 IN "
                        f"({','.join('?' * len(chunk))})",
                        [model, *chunk],
                    ).fetchall()
                    for sha, blob in rows:
                        vector = np.frombuffer(blob, dtype=np.float32)
                        if vector.shape == (DIMENSIONS,):
                            found[sha] = vector
        except sqlite3.OperationalError:  # busy past the timeout, or a read-only disk: embed instead
            return found
        except sqlite3.DatabaseError:  # not a database any more: start a new one
            self._discard()
        return found

    def put(self, model: str, vectors: dict[str, np.ndarray]) -> None:
        """Keep ``vectors`` (text hash -> vector); a cache that cannot be written is left alone."""
        rows = [(model, sha, np.asarray(v, dtype=np.float32).tobytes()) for sha, v in vectors.items()]
        try:
            with self._connect() as connection:
                connection.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)", rows)
        except sqlite3.OperationalError:
            return
        except sqlite3.DatabaseError:
            self._discard()

    def _discard(self) -> None:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{self.path}{suffix}").unlink(missing_ok=True)
