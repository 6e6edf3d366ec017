"""The ask encoder trained by the pipeline: a library no model was trained on is trained on (the
short recipe, which this module asks for), the trained model travels with the release and answers,
an unchanged library trains nothing, and `reuse-data ask train` ships a model with the inputs,
with its vectors of the library's texts.

One module-scoped history over the demo cut to two categories' answers and scenarios (a library
the demo's shipped model was not trained on, which a build trains on and embeds whole in a minute
rather than the whole demo's five): a first build, which trains; the same inputs built again;
`reuse-data ask train --recipe short`; and a third build from the inputs that now ship the model.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pytest
import yaml

from ask.dense.cache import SHIPPED_VECTORS_FILE, read_shipped, text_key
from ask.engine import AskEngine
from ask.model.delta import apply_model_delta
from ask.model.file import layer_count
from ask.model.store import ModelStore, TrainedModel, base_model_bytes, trained_model_id
from ask.training.data import training_set
from ask.training.library import choose_encoder
from inputs.ask_inputs import SHIPPED_ENCODER_FOLDER, SPLITS, load_questions
from pipelines.build import latest_materialization_metadata
from release.local_store import current_version
from release.snapshot import load_snapshot
from tests.conftest import copy_demo, run_cli
from tests.support.harness import edit_sheet_readings, home_layout
from warehouse.reference_data import LANGUAGES

KEPT_CATEGORIES = {"insulated-bottles", "french-presses"}


def cut_to_categories(inputs: Path, categories: set[str]) -> None:
    """Keep only the editors' answers and scenarios of ``categories``: a smaller library."""
    for name in ("answers.yml", "scenarios.yml"):
        path = inputs / "editorial" / name
        items = yaml.safe_load(path.read_text(encoding="utf-8"))
        kept = [item for item in items if item["category"] in categories]
        path.write_text(yaml.safe_dump(kept, allow_unicode=True, sort_keys=False), encoding="utf-8")


@dataclass
class Training:
    home: Path
    inputs: Path
    outputs: list[str]
    # A model store and a vector cache of its own: what other runs on this machine trained and
    # embedded (the same short training gives the same model) must not count here.
    environ: dict[str, str]

    def metadata(self, asset: str) -> dict[str, object]:
        return latest_materialization_metadata(self.home / "dagster", ["marts", asset])


def build(home: Path, inputs: Path, environ: dict[str, str]) -> str:
    result = run_cli("build", home=home, inputs=inputs, environ=environ)
    assert result.returncode == 0, result.output[-4000:]
    return result.output


@pytest.fixture(scope="module")
def training(tmp_path_factory) -> Training:
    root = tmp_path_factory.mktemp("ask-training")
    inputs, home = copy_demo(root / "inputs"), root / "home"
    cut_to_categories(inputs, KEPT_CATEGORIES)
    environ = {
        "REUSE_DATA_ASK_MODELS": str(root / "models"),
        "REUSE_DATA_EMBEDDING_CACHE": str(root / "vectors.sqlite3"),
        "REUSE_DATA_ASK_TRAINING": "short",
    }
    return Training(home, inputs, [build(home, inputs, environ)], environ)


def test_a_library_no_model_was_trained_on_is_trained_on_and_the_release_carries_the_model(training: Training):
    output = training.outputs[0]
    assert "trained on entries other than the current ones" in output  # the demo's shipped model
    assert "training step 3/3" in output
    encoder = training.metadata("ask_encoder")
    assert encoder["how"] == "trained" and encoder["recipe"] == "short"
    store = training.home / "snapshots"
    snapshot = load_snapshot(store, current_version(store))
    ((model_id, sha256, delta, manifest),) = snapshot.connection.execute(
        "SELECT model_id, model_sha256, model_delta, training::VARCHAR FROM ask_encoder"
    ).fetchall()
    model = apply_model_delta(base_model_bytes(), bytes(delta))
    assert hashlib.sha256(model).hexdigest() == sha256 and model_id == trained_model_id(sha256)
    assert model != base_model_bytes()  # training changed the weights
    manifest = json.loads(manifest)
    assert manifest["recipe"] == "short" and manifest["trained_on"]["questions"] > 0
    assert {row[0] for row in snapshot.connection.execute("SELECT DISTINCT model FROM ask_vectors").fetchall()} == {
        model_id
    }
    ((decision_model, figures),) = snapshot.connection.execute(
        "SELECT model_id, test_figures::VARCHAR FROM ask_decision"
    ).fetchall()
    figures = json.loads(figures)
    assert decision_model == model_id and figures["questions"]["by_language"]["all"]["answerable"] > 0
    assert {"product", "problem", "no-match"} <= set(figures["queries"]["by_kind"])
    engine = AskEngine.from_snapshot(snapshot.tables, snapshot.connection, ModelStore(tmp_models(training)))
    assert engine.encoder.model_id == model_id
    assert engine.search("insulated bottle that keeps tea hot all day", 5)


def tmp_models(training: Training) -> Path:
    return Path(training.environ["REUSE_DATA_ASK_MODELS"])


def test_an_unchanged_library_trains_embeds_and_fits_nothing(training: Training):
    if len(training.outputs) < 2:
        training.outputs.append(build(training.home, training.inputs, training.environ))
    assert training.metadata("ask_encoder")["how"] == "kept"
    assert training.metadata("ask_vectors")["embedded"] == 0
    assert training.metadata("ask_decision")["unchanged"] is True
    assert "training step" not in training.outputs[1]


def recommendation_answers(training: Training) -> dict[str, str]:
    warehouse = home_layout(training.home).warehouse_path
    with duckdb.connect(str(warehouse), read_only=True) as connection:
        return dict(connection.execute("SELECT scenario_slug, answer.en FROM marts.recommendations").fetchall())


def test_a_sheet_that_changes_a_recommendations_figure_trains_nothing_and_embeds_only_that_answer(
    training: Training,
):
    """The bench writes a recommendation's answer (its pick and figure): a tester's sheet that
    changes one is embedded with the model trained before, which is not trained again."""
    if len(training.outputs) < 2:
        training.outputs.append(build(training.home, training.inputs, training.environ))
    before = recommendation_answers(training)
    edit_sheet_readings(training.inputs, "copperleaf-meridian-750-ml", "heat-retention", delta=0.5)
    output = build(training.home, training.inputs, training.environ)
    after = recommendation_answers(training)
    moved = {scenario for scenario in after if after[scenario] != before[scenario]}
    assert moved == {"insulated-bottles-hot-tea-workday"} and "79.7 °C" in after["insulated-bottles-hot-tea-workday"]
    assert training.metadata("ask_encoder")["how"] == "kept" and "training step" not in output
    assert 0 < training.metadata("ask_vectors")["embedded"] <= len(LANGUAGES)  # the answer, in each language
    assert training.metadata("ask_decision")["unchanged"] is False  # fitted again: an entry's text moved


def test_ask_train_ships_the_model_with_the_inputs_and_the_next_build_uses_it(training: Training):
    result = run_cli(
        "ask", "train", "--recipe", "short", home=training.home, inputs=training.inputs, environ=training.environ
    )
    assert result.returncode == 0, result.output
    assert "trained on before with the short recipe" in result.output  # the build's training, not another
    shipped = TrainedModel.read(training.inputs / SHIPPED_ENCODER_FOLDER)
    assert shipped is not None and shipped.manifest["recipe"] == "short"
    vectors = read_shipped(training.inputs / SHIPPED_ENCODER_FOLDER / SHIPPED_VECTORS_FILE, shipped.model_id)
    texts = (
        training.metadata("ask_vectors")["dagster/row_count"]
        + training.metadata("ask_uncovered_vectors")["dagster/row_count"]
    )
    # The library's texts and the labelled questions (a few of which are also an entry's phrasing).
    questions = {text_key(q.question) for split in SPLITS for q in load_questions(training.inputs, split, LANGUAGES)}
    assert questions <= vectors.keys() and texts <= len(vectors) <= texts + len(questions)
    # A machine that never embedded this library (an empty vector cache) embeds none of it.
    empty_cache = {**training.environ, "REUSE_DATA_EMBEDDING_CACHE": str(training.home.parent / "empty-cache.sqlite3")}
    output = build(training.home, training.inputs, empty_cache)
    assert "training step" not in output
    assert training.metadata("ask_encoder")["how"] == "shipped"
    assert training.metadata("ask_encoder")["model_sha256"] == shipped.sha256
    assert training.metadata("ask_vectors")["embedded"] == 0
    assert training.metadata("ask_uncovered_vectors")["embedded"] == 0


def test_ask_train_without_a_build_says_to_build_first(tmp_path: Path):
    result = run_cli("ask", "train", home=tmp_path / "empty-home")
    assert result.returncode == 2 and "run `reuse-data build` first" in result.output


def test_with_training_off_a_build_says_what_the_shipped_model_was_not_trained_on(tmp_path: Path):
    library = [("insulated-bottles-01", "a text"), ("travel-mugs-01", "another text")]
    trained_on = training_set(library, {}, [], [])
    manifest = {
        "key": "k",
        "recipe": "full",
        "data_digest": trained_on.digest(),
        "entries": sorted(trained_on.entry_texts),
    }
    TrainedModel.of(base_model_bytes(), manifest).write(tmp_path / SHIPPED_ENCODER_FOLDER)
    grown = training_set([*library, ("shampoo-bars-02", "a new entry")], {}, [], [])
    chosen = choose_encoder(grown, tmp_path, ModelStore(tmp_path / "models"), "off", print)
    assert chosen.how == "stale" and chosen.model is not None
    assert "1 new to it (shampoo-bars-02), 0 gone" in chosen.note
    assert "`reuse-data ask train`" in chosen.note
    same = choose_encoder(trained_on, tmp_path, ModelStore(tmp_path / "models"), "off", print)
    assert same.how == "shipped"


def test_what_the_bench_writes_counts_in_the_digest_but_does_not_train_again(tmp_path: Path):
    question, answer, remeasured = "which bottle keeps tea hot", "Our pick is X: 79.2 °C", "Our pick is X: 79.7 °C"
    trained_on = training_set([("bottles-01", question), ("bottles-01", answer)], {}, [], [], [answer])
    manifest = {
        "key": "k",
        "recipe": "full",
        "data_digest": trained_on.digest(),
        "retraining_digest": trained_on.retraining_digest(),
        "entries": sorted(trained_on.entry_texts),
    }
    TrainedModel.of(base_model_bytes(), manifest).write(tmp_path / SHIPPED_ENCODER_FOLDER)
    figure = training_set([("bottles-01", question), ("bottles-01", remeasured)], {}, [], [], [remeasured])
    reworded = training_set([("bottles-01", question + " all day"), ("bottles-01", answer)], {}, [], [], [answer])
    assert figure.digest() != trained_on.digest() and figure.retraining_digest() == trained_on.retraining_digest()
    assert reworded.retraining_digest() != trained_on.retraining_digest()
    store = ModelStore(tmp_path / "models")
    assert choose_encoder(figure, tmp_path, store, "off", print).how == "shipped"
    assert choose_encoder(reworded, tmp_path, store, "off", print).how == "stale"


def test_a_six_layer_student_ships_travels_with_the_release_and_answers(training: Training):
    """`ask train --recipe short-6` distils the short model (kept from the build) into six layers; the
    release carries it as a delta of the second form, and a server runs it on ONNX Runtime and answers with it."""
    result = run_cli(
        "ask", "train", "--recipe", "short-6", home=training.home, inputs=training.inputs, environ=training.environ
    )
    assert result.returncode == 0, result.output
    assert "distilling the ask encoder" in result.output and "training step 3/3" in result.output
    shipped = TrainedModel.read(training.inputs / SHIPPED_ENCODER_FOLDER)
    assert shipped is not None and shipped.manifest["recipe"] == "short-6"
    assert shipped.manifest["layers"] == 6 and shipped.manifest["kept_layers"] == [0, 2, 4, 6, 8, 10]
    assert shipped.delta.startswith(b"E5DELTA2")
    output = build(training.home, training.inputs, training.environ)
    assert "training step" not in output
    assert training.metadata("ask_encoder")["how"] == "shipped"
    store = training.home / "snapshots"
    snapshot = load_snapshot(store, current_version(store))
    ((delta,),) = snapshot.connection.execute("SELECT model_delta FROM ask_encoder").fetchall()
    assert layer_count(apply_model_delta(base_model_bytes(), bytes(delta))) == 6
    engine = AskEngine.from_snapshot(snapshot.tables, snapshot.connection, ModelStore(tmp_models(training)))
    assert engine.encoder.model_id == shipped.model_id
    assert engine.search("insulated bottle that keeps tea hot all day", 5)
