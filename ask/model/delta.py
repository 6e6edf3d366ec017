"""A trained model file as a small delta against the base file it was trained from.

A fine-tune changes the layers (12 MB in Q4_0) and leaves the word embeddings (54 MB) and the
tokenizer alone, so the two files XORed are mostly zeros and compress to about 2 MB with lzma.
Applying a delta to another base, or a damaged delta, would silently give a different model; so
the delta records the sha256 of its base and of its result, and applying it checks both.

Layout: ``E5DELTA1``, sha256 of the base (32 bytes), sha256 of the result (32 bytes), the
length of both files (u64), then the XOR of the two files in lzma's xz container.

A smaller network (fewer layers, distilled from a trained one) is a shorter file. Its delta,
``E5DELTA2``, is made against the base cut to as many layers (``ask.model.file.first_layers``: the
word embeddings and tokenizer then sit at the same offsets in both) and records that count after
the length (u32); everything else is as in the first form.
"""

from __future__ import annotations

import hashlib
import lzma
import struct

import numpy as np

from ask.model.file import ModelFileError, first_layers, layer_count

MAGIC = b"E5DELTA1"
FEWER_LAYERS_MAGIC = b"E5DELTA2"
_HEADER = struct.Struct("<8s32s32sQ")
_LAYERS = struct.Struct("<I")


class ModelDeltaError(ValueError):
    """A delta that does not apply: to another base, damaged, or not a delta at all."""


def model_delta(base: bytes, trained: bytes) -> bytes:
    """The delta that makes ``trained`` from ``base``: two files of the same layout, or ``trained`` a
    network of fewer layers than ``base`` (the second form)."""
    reference, layers = _reference(base, trained)
    if len(reference) != len(trained):
        raise ModelDeltaError(
            f"the trained file ({len(trained)} bytes) does not have the base's layout ({len(reference)} bytes)"
        )
    magic = MAGIC if layers is None else FEWER_LAYERS_MAGIC
    header = _HEADER.pack(magic, hashlib.sha256(base).digest(), hashlib.sha256(trained).digest(), len(trained))
    if layers is not None:
        header += _LAYERS.pack(layers)
    return header + lzma.compress(_xor(reference, trained), preset=6)


def apply_model_delta(base: bytes, delta: bytes) -> bytes:
    """The trained file ``delta`` makes from ``base``; ``ModelDeltaError`` unless both are the ones it was made for."""
    magic = delta[: len(MAGIC)]
    if len(delta) < _HEADER.size or magic not in (MAGIC, FEWER_LAYERS_MAGIC):
        raise ModelDeltaError("not a model delta (no E5DELTA1 or E5DELTA2 header)")
    _, base_sha256, result_sha256, length = _HEADER.unpack_from(delta)
    if hashlib.sha256(base).digest() != base_sha256:
        raise ModelDeltaError(
            f"this delta was made against another base model (sha256 {base_sha256.hex()[:16]}…, {length} bytes)"
        )
    body = _HEADER.size
    reference = base
    if magic == FEWER_LAYERS_MAGIC:
        (layers,) = _LAYERS.unpack_from(delta, body)
        body += _LAYERS.size
        try:
            reference = first_layers(base, layers)
        except ModelFileError as error:
            raise ModelDeltaError(f"the delta is damaged: {error}") from error
    if len(reference) != length:  # the base is the one it names, so its header is what is wrong
        raise ModelDeltaError(f"the delta is damaged: it makes a file of {length} bytes from one of {len(reference)}")
    try:
        difference = lzma.decompress(delta[body:], format=lzma.FORMAT_XZ)
    except lzma.LZMAError as error:
        raise ModelDeltaError(f"the delta is damaged: {error}") from error
    if len(difference) != length:
        raise ModelDeltaError(f"the delta is damaged: it holds {len(difference)} bytes, not {length}")
    result = _xor(reference, difference)
    if hashlib.sha256(result).digest() != result_sha256:
        raise ModelDeltaError("the delta is damaged: its result does not have the sha256 it records")
    return result


def _reference(base: bytes, trained: bytes) -> tuple[bytes, int | None]:
    """What ``trained`` is XORed with: ``base`` itself, or (a network of fewer layers) ``base`` cut to as
    many, and that count."""
    if len(trained) == len(base):
        return base, None
    try:
        layers, base_layers = layer_count(trained), layer_count(base)
    except ModelFileError:
        return base, None  # not model files: the length check says what is wrong
    if layers >= base_layers:
        return base, None
    return first_layers(base, layers), layers


def _xor(left: bytes, right: bytes) -> bytes:
    return np.bitwise_xor(np.frombuffer(left, dtype=np.uint8), np.frombuffer(right, dtype=np.uint8)).tobytes()
