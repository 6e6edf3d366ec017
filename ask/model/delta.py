"""A trained model file as a small delta against the base file it was trained from.

A fine-tune changes the layers (12 MB in Q4_0) and leaves the word embeddings (54 MB) and the
tokenizer alone, so the two files XORed are mostly zeros and compress to about 2 MB with lzma.
Applying a delta to another base, or a damaged delta, would silently give a different model; so
the delta records the sha256 of its base and of its result, and applying it checks both.

Layout: ``E5DELTA1``, sha256 of the base (32 bytes), sha256 of the result (32 bytes), the
length of both files (u64), then the XOR of the two files in lzma's xz container.
"""

from __future__ import annotations

import hashlib
import lzma
import struct

import numpy as np

MAGIC = b"E5DELTA1"
_HEADER = struct.Struct("<8s32s32sQ")


class ModelDeltaError(ValueError):
    """A delta that does not apply: to another base, damaged, or not a delta at all."""


def model_delta(base: bytes, trained: bytes) -> bytes:
    """The delta that makes ``trained`` from ``base`` (two model files of the same layout, hence length)."""
    if len(base) != len(trained):
        raise ModelDeltaError(
            f"the trained file ({len(trained)} bytes) does not have the base's layout ({len(base)} bytes)"
        )
    header = _HEADER.pack(MAGIC, hashlib.sha256(base).digest(), hashlib.sha256(trained).digest(), len(base))
    return header + lzma.compress(_xor(base, trained), preset=6)


def apply_model_delta(base: bytes, delta: bytes) -> bytes:
    """The trained file ``delta`` makes from ``base``; ``ModelDeltaError`` unless both are the ones it was made for."""
    if len(delta) < _HEADER.size or delta[: len(MAGIC)] != MAGIC:
        raise ModelDeltaError("not a model delta (no E5DELTA1 header)")
    _, base_sha256, result_sha256, length = _HEADER.unpack_from(delta)
    if len(base) != length or hashlib.sha256(base).digest() != base_sha256:
        raise ModelDeltaError(
            f"this delta was made against another base model (sha256 {base_sha256.hex()[:16]}…, {length} bytes)"
        )
    try:
        difference = lzma.decompress(delta[_HEADER.size :], format=lzma.FORMAT_XZ)
    except lzma.LZMAError as error:
        raise ModelDeltaError(f"the delta is damaged: {error}") from error
    if len(difference) != length:
        raise ModelDeltaError(f"the delta is damaged: it holds {len(difference)} bytes, not {length}")
    result = _xor(base, difference)
    if hashlib.sha256(result).digest() != result_sha256:
        raise ModelDeltaError("the delta is damaged: its result does not have the sha256 it records")
    return result


def _xor(left: bytes, right: bytes) -> bytes:
    return np.bitwise_xor(np.frombuffer(left, dtype=np.uint8), np.frombuffer(right, dtype=np.uint8)).tobytes()
