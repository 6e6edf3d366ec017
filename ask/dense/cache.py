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
import hashlib
import sqlite3
from collections.abc import Iterable, Iterator, Mapping
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
SHIPPED_VECTORS_FILE = "vectors.npz"  # beside a shipped model: the vectors it made of its library's texts
_LOOKUP_CHUNK = 500  # SQLite's bound-parameter limit is 999 by default


def text_key(text: str) -> str:
    """The key a text's vector is kept by: the sha256 of its UTF-8, as DuckDB's ``sha256()`` makes
    ``text_sha256`` in ``marts.ask_texts``."""
    return hashlib.sha256(text.encode()).hexdigest()


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


def write_shipped(path: Path, model: str, vectors: Mapping[str, np.ndarray]) -> None:
    """Keep ``vectors`` (text sha256 -> vector, made by ``model``) in one file that travels with a
    publisher's inputs beside the model that made them, so that a fresh machine's first build of
    that library embeds nothing (minutes on two cores once the answers are texts)."""
    hashes = sorted(vectors)
    matrix = np.stack([vectors[sha] for sha in hashes]).astype(np.float32) if hashes else np.empty((0, DIMENSIONS))
    partial = path.with_name(f".{path.name}.partial")
    with partial.open("wb") as out:
        np.savez_compressed(out, model=np.array(model), sha256=np.array(hashes), vectors=matrix)
    partial.replace(path)


def read_shipped(path: Path, model: str) -> dict[str, np.ndarray]:
    """The shipped vectors made by ``model``; none where the file is missing, damaged or made by
    another model (a file that cannot be used only costs the embedding it would have saved)."""
    try:
        with np.load(path, allow_pickle=False) as shipped:
            if str(shipped["model"]) != model or shipped["vectors"].shape[1:] != (DIMENSIONS,):
                return {}
            return dict(zip(shipped["sha256"].tolist(), shipped["vectors"].astype(np.float32), strict=True))
    except (OSError, ValueError, KeyError):
        return {}
