"""A vector for each of a set of texts, computed at most once per model: the vectors the inputs
ship beside their model (``reuse-data ask train`` writes them), then the machine's vector cache,
and only the rest embedded now. A build that changed no text embeds nothing, a changed answer
costs only its own texts, and training ships what the next build would otherwise embed.

The texts are those a build embeds (``ENTRY_TEXTS_SQL``, ``UNCOVERED_TEXTS_SQL``): the pipeline's
embedding assets and the encoder's training both read them here.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from pathlib import Path

import numpy as np

from ask.dense.cache import SHIPPED_VECTORS_FILE, VectorCache, read_shipped
from ask.dense.encoder import Encoder
from inputs.ask_inputs import SHIPPED_ENCODER_FOLDER
from warehouse.contract import ASK_TEXTS_TABLE, ASK_UNCOVERED_TOPICS_SEED, MARTS_SCHEMA, SEEDS_SCHEMA

# The (sha256, text) rows a build embeds, from the build warehouse: the library's texts, and the
# questions of the topics it does not cover.
ENTRY_TEXTS_SQL = f"SELECT DISTINCT text_sha256, text FROM {MARTS_SCHEMA}.{ASK_TEXTS_TABLE} ORDER BY text_sha256"
UNCOVERED_TEXTS_SQL = (
    f"SELECT DISTINCT sha256(question), question FROM {SEEDS_SCHEMA}.{ASK_UNCOVERED_TOPICS_SEED} ORDER BY 1"
)


def entry_vectors(
    texts: dict[str, str],
    encoder: Encoder,
    cache: VectorCache,
    log: Callable[[str], None],
    shipped: Mapping[str, np.ndarray] | None = None,
) -> tuple[dict[str, np.ndarray], int]:
    """A vector for each text (sha256 -> text): from ``shipped``, from the cache, or embedded now
    (and cached); and how many were embedded."""
    vectors = {sha: vector for sha, vector in (shipped or {}).items() if sha in texts}
    vectors.update(cache.get(encoder.model_id, [sha for sha in texts if sha not in vectors]))
    missing = [sha for sha in texts if sha not in vectors]
    if missing:
        log(f"embedding {len(missing)} new texts of {len(texts)} ({len(vectors)} cached)")
        started = time.perf_counter()

        def progress(done: int, total: int) -> None:
            rate = done / max(time.perf_counter() - started, 1e-9)
            log(f"embedded {done}/{total} texts ({rate:.0f}/s, about {(total - done) / rate:.0f} s left)")

        embedded = encoder.texts([texts[sha] for sha in missing], progress)
        fresh = dict(zip(missing, embedded, strict=True))
        cache.put(encoder.model_id, fresh)
        vectors.update(fresh)
    return vectors, len(missing)


def known_vectors(
    texts: dict[str, str], encoder: Encoder, inputs: Path, embedding_cache: Path, log: Callable[[str], None]
) -> tuple[dict[str, np.ndarray], int]:
    """``entry_vectors`` with what a build already knows: the vectors shipped beside the model in
    ``inputs`` and the machine's vector cache at ``embedding_cache``."""
    shipped = read_shipped(inputs / SHIPPED_ENCODER_FOLDER / SHIPPED_VECTORS_FILE, encoder.model_id)
    return entry_vectors(texts, encoder, VectorCache(embedding_cache), log, shipped)
