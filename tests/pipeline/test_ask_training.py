"""The ask encoder is trained apart from the build: a build embeds with the model it has and says how
far that model lags the library; `reuse-data ask train` (and the Dagster job ``train_ask_encoder``)
trains one and ships it with the inputs, with its vectors of every text; the next build serves it and
embeds nothing.

One module-scoped history over the demo cut to two categories' answers and scenarios (a library
the demo's shipped model was not trained on, which a training embeds whole in a minute rather than
the whole demo's five): a first build, which trains nothing; `reuse-data ask train --recipe short`; a
build from the inputs that now ship the model (on an empty vector cache); the same inputs built
again; a tester's sheet that moves one recommendation's figure, built.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import pytest
import yaml
from dagster import DagsterInstance

from ask.dense.cache import SHIPPED_VECTORS_FILE, read_shipped, text_key
from ask.engine import AskEngine
from ask.model.delta import apply_model_delta
from ask.model.file import layer_count
from ask.model.store import ModelStore, TrainedModel, base_model_bytes, shipped_model, trained_model_id
from ask.training.data import TrainingSet, training_set
from ask.training.library import choose_encoder
from foundations.settings import load_settings
from inputs.ask_inputs import SHIPPED_ENCODER_FOLDER, Split, load_questions
from pipelines.ask_keys import ASK_INPUTS
from pipelines.build import latest_materialization_metadata
from pipelines.encoder_training import train_ask_encoder
from pipelines.kept_work import SHOWN_KEY
from pipelines.resources import SettingsResource
from release.local_store import current_version
from release.snapshot import load_snapshot
from tests.conftest import DEMO, copy_demo, run_cli
from tests.support.harness import edit_sheet_readings, home_layout, without_pytorch
from warehouse.contract import ASK_LEXICON_TABLE
from warehouse.reference_data import LANGUAGES

KEPT_CATEGORIES = {"insulated-bottles", "french-presses"}
ASSETS = ("ask_encoder", "ask_vectors", "ask_uncovered_vectors", ASK_LEXICON_TABLE, "ask_decision")


def cut_to_categories(inputs: Path, categories: set[str]) -> None:
    """Keep only the editors' answers and scenarios of ``categories``: a smaller library."""
    for name in ("answers.yml", "scenarios.yml"):
        path = inputs / "editorial" / name
        items = yaml.safe_load(path.read_text(encoding="utf-8"))
        kept = [item for item in items if item["category"] in categories]
        path.write_text(yaml.safe_dump(kept, allow_unicode=True, sort_keys=False), encoding="utf-8")


@dataclass
class Stage:
    """One command of the history: what it printed, and (a build) its ask assets' metadata."""

    output: str
    metadata: dict[str, dict[str, object]] = field(default_factory=dict)
    steps: dict[str, str] = field(default_factory=dict)  # the build's steps: key -> status (SUCCESS, SKIPPED, …)


@dataclass
class Training:
    home: Path
    inputs: Path
    # A model store and a vector cache of its own: what other runs on this machine trained and
    # embedded (the same short training gives the same model) must not count here.
    environ: dict[str, str]
    stages: dict[str, Stage] = field(default_factory=dict)

    def build(self, environ: dict[str, str] | None = None) -> Stage:
        result = run_cli("build", home=self.home, inputs=self.inputs, environ={**self.environ, **(environ or {})})
        assert result.returncode == 0, result.output[-4000:]
        dagster = self.home / "dagster"
        metadata = {name: latest_materialization_metadata(dagster, ["marts", name]) for name in ASSETS}
        metadata["inputs"] = latest_materialization_metadata(dagster, list(ASK_INPUTS.path))
        with DagsterInstance.from_config(str(dagster)) as instance:
            [record] = instance.get_run_records(limit=1)
            stats = instance.get_run_step_stats(record.dagster_run.run_id)
        steps = {step.step_key: step.status.value for step in stats}
        return Stage(result.output, metadata, steps)

    def train(self, recipe: str) -> Stage:
        result = run_cli("ask", "train", "--recipe", recipe, home=self.home, inputs=self.inputs, environ=self.environ)
        assert result.returncode == 0, result.output[-4000:]
        return Stage(result.output)

    def snapshot(self):
        store = self.home / "snapshots"
        return load_snapshot(store, current_version(store))


@pytest.fixture(scope="module")
def training(tmp_path_factory) -> Training:
    root = tmp_path_factory.mktemp("ask-training")
    inputs, home = copy_demo(root / "inputs"), root / "home"
    cut_to_categories(inputs, KEPT_CATEGORIES)
    environ = {
        "REUSE_DATA_ASK_MODELS": str(root / "models"),
        "REUSE_DATA_EMBEDDING_CACHE": str(root / "vectors.sqlite3"),
    }
    history = Training(home, inputs, environ)
    # The first build on an install without PyTorch: a build never needs it.
    history.stages["first"] = history.build(without_pytorch(root))
    history.stages["trained"] = history.train("short")
    # A machine that never embedded this library (an empty vector cache) embeds none of it.
    history.stages["shipped"] = history.build({"REUSE_DATA_EMBEDDING_CACHE": str(root / "empty-cache.sqlite3")})
    history.stages["again"] = history.build()
    history.stages["recommendations before the sheet"] = Stage(json.dumps(recommendation_answers(history)))
    edit_sheet_readings(inputs, "copperleaf-meridian-750-ml", "heat-retention", delta=0.5)
    history.stages["sheet"] = history.build()
    return history


def recommendation_answers(training: Training) -> dict[str, str]:
    warehouse = home_layout(training.home).warehouse_path
    with duckdb.connect(str(warehouse), read_only=True) as connection:
        return dict(connection.execute("SELECT scenario_slug, answer.en FROM marts.recommendations").fetchall())


def test_a_build_trains_nothing_publishes_and_says_how_far_the_model_lags(training: Training):
    """The demo's model was trained on the whole library: against the cut one it lags by the answers
    and scenarios cut, which the build says, and it publishes with that model."""
    first = training.stages["first"]
    assert "training step" not in first.output and "PyTorch" not in first.output
    encoder = first.metadata["ask_encoder"]
    demo_model = shipped_model(DEMO)
    assert encoder["how"] == "lagging" and encoder["model_sha256"] == demo_model.sha256
    assert encoder["lag_new"] == {} and {"answer", "scenario", "phrasing"} <= set(encoder["lag_gone"])
    assert "since removed" in first.output and "`reuse-data ask train` brings it up to date" in first.output
    assert first.metadata["ask_vectors"]["model"] == demo_model.model_id


def test_ask_train_trains_and_ships_the_model_with_every_vector_a_build_needs(training: Training):
    output = training.stages["trained"].output
    assert "training step 3/3" in output and "the next build from these inputs serves it" in output
    shipped = TrainedModel.read(training.inputs / SHIPPED_ENCODER_FOLDER)
    assert shipped is not None and shipped.manifest["recipe"] == "short"
    assert shipped.manifest["trained_texts"]["phrasing"]  # what the next build measures its lag by
    vectors = read_shipped(training.inputs / SHIPPED_ENCODER_FOLDER / SHIPPED_VECTORS_FILE, shipped.model_id)
    shipped_build = training.stages["shipped"].metadata
    texts = (
        shipped_build["ask_vectors"]["dagster/row_count"] + shipped_build["ask_uncovered_vectors"]["dagster/row_count"]
    )
    # The library's texts and the labelled questions (a few of which are also an entry's phrasing).
    questions = {text_key(q.question) for split in Split for q in load_questions(training.inputs, split, LANGUAGES)}
    assert questions <= vectors.keys() and texts <= len(vectors) <= texts + len(questions)


def test_the_next_build_serves_the_trained_model_and_embeds_nothing(training: Training):
    shipped = TrainedModel.read(training.inputs / SHIPPED_ENCODER_FOLDER)
    stage = training.stages["shipped"]
    assert "training step" not in stage.output
    assert stage.metadata["ask_encoder"]["how"] == "shipped"
    assert stage.metadata["ask_encoder"]["model_sha256"] == shipped.sha256
    assert stage.metadata["ask_vectors"]["embedded"] == 0 and stage.metadata["ask_uncovered_vectors"]["embedded"] == 0


def test_the_release_carries_the_trained_model_and_answers_with_it(training: Training):
    snapshot = training.snapshot()
    ((model_id, sha256, delta, manifest),) = snapshot.connection.execute(
        "SELECT model_id, model_sha256, model_delta, training::VARCHAR FROM ask_encoder"
    ).fetchall()
    model = apply_model_delta(base_model_bytes(), bytes(delta))
    assert hashlib.sha256(model).hexdigest() == sha256 and model_id == trained_model_id(sha256)
    assert model != base_model_bytes()  # training changed the weights
    manifest = json.loads(manifest)
    assert manifest["recipe"] == "short" and manifest["trained_on"]["questions"] > 0
    assert "trained_texts" not in manifest  # only a build reads those, from the model itself
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


def test_an_unchanged_library_runs_no_ask_step(training: Training):
    """The same inputs again: the ask gate finds every ask table holding the key it was made from,
    says so with each key, and no ask step runs; the publish runs all the same."""
    again, shipped = training.stages["again"], training.stages["shipped"]
    assert again.metadata["inputs"]["moved"] == "nothing"
    for name in ASSETS:
        key = str(shipped.metadata[name]["key"])
        assert f"kept marts.{name}: made from the same inputs before (key {key[:SHOWN_KEY]})" in again.output, name
        assert again.metadata[name] == shipped.metadata[name], name  # no materialisation since
    ask_steps = ["ask_lexical_index", *(f"marts__{name}" for name in ASSETS if name != ASK_LEXICON_TABLE)]
    assert {step: again.steps[step] for step in ask_steps} == dict.fromkeys(ask_steps, "SKIPPED")
    assert again.steps["ask_inputs"] == again.steps["published__snapshot.publish"] == "SUCCESS"


def test_a_sheet_that_changes_a_recommendations_figure_embeds_only_that_answer(training: Training):
    """The bench writes a recommendation's answer (its pick and figure): a tester's sheet that
    changes one is embedded with the model as it is, which does not lag for it."""
    before = json.loads(training.stages["recommendations before the sheet"].output)
    after = recommendation_answers(training)
    moved = {scenario for scenario in after if after[scenario] != before[scenario]}
    assert moved == {"insulated-bottles-hot-tea-workday"} and "79.7 °C" in after["insulated-bottles-hot-tea-workday"]
    sheet = training.stages["sheet"].metadata
    assert sheet["ask_encoder"]["how"] == "shipped"
    assert 0 < sheet["ask_vectors"]["embedded"] <= len(LANGUAGES)  # the answer, in each language
    assert sheet["ask_vectors"]["unchanged"] is False and sheet["ask_uncovered_vectors"]["unchanged"] is True
    assert sheet["ask_decision"]["unchanged"] is False  # fitted again: an entry's text moved


def test_the_dagster_training_job_reuses_the_kept_model_and_ships_it(training: Training, tmp_path: Path):
    """The job an operator schedules does what `ask train` does, in Dagster: the library was trained on
    with the short recipe, so it ships that model again without training."""
    environ = {**training.environ, "REUSE_DATA_HOME": str(training.home), "REUSE_DATA_INPUTS": str(training.inputs)}
    settings = load_settings(environ)
    (training.inputs / SHIPPED_ENCODER_FOLDER / "training.json").unlink()  # as if never shipped
    instance = DagsterInstance.ephemeral()
    result = train_ask_encoder.execute_in_process(
        run_config={"ops": {"train_ask_encoder_op": {"config": {"recipe": "short"}}}},
        resources={"settings": SettingsResource.of(settings)},
        instance=instance,
    )
    assert result.success
    logged = " ".join(record.user_message for record in instance.all_logs(result.run_id))
    assert "trained on before with the short recipe" in logged and "training step" not in logged
    shipped = TrainedModel.read(training.inputs / SHIPPED_ENCODER_FOLDER)
    assert shipped is not None and shipped.manifest["recipe"] == "short"


def test_ask_train_without_a_build_says_to_build_first(tmp_path: Path):
    result = run_cli("ask", "train", home=tmp_path / "empty-home")
    assert result.returncode == 2 and "run `reuse-data build` first" in result.output


def test_ask_train_without_pytorch_says_what_to_install(training: Training, tmp_path: Path):
    environ = {**training.environ, **without_pytorch(tmp_path)}
    result = run_cli("ask", "train", "--recipe", "long", home=training.home, inputs=training.inputs, environ=environ)
    assert result.returncode == 2, result.output
    assert "training the ask encoder needs PyTorch" in result.output and "make setup" in result.output
    assert "Traceback" not in result.output


def ship_model_trained_on(inputs: Path, data: TrainingSet, digests: bool = True) -> None:
    """Make ``inputs`` ship a model (the base's bytes) whose manifest says it was trained on ``data``:
    with its texts' digests, or (``digests`` off) as a model trained before those were kept."""
    manifest = {
        "key": "k",
        "recipe": "full",
        "data_digest": data.digest(),
        "retraining_digest": data.retraining_digest(),
        "entries": sorted(data.entry_texts),
        **({"trained_texts": data.edited_texts()} if digests else {}),
    }
    TrainedModel.of(base_model_bytes(), manifest).write(inputs / SHIPPED_ENCODER_FOLDER)


def test_a_model_predating_its_texts_digests_still_says_what_it_was_not_trained_on(tmp_path: Path):
    library = [("insulated-bottles-01", "a text"), ("travel-mugs-01", "another text")]
    trained_on = training_set(library, {}, [], [])
    ship_model_trained_on(tmp_path, trained_on, digests=False)
    grown = training_set([*library, ("shampoo-bars-02", "a new entry")], {}, [], [])
    chosen = choose_encoder(grown, tmp_path, ModelStore(tmp_path / "models"), "full")
    assert chosen.how == "lagging" and chosen.model is not None
    assert "(1 entries new to it, 0 gone)" in chosen.note
    assert "`reuse-data ask train`" in chosen.note
    same = choose_encoder(trained_on, tmp_path, ModelStore(tmp_path / "models"), "full")
    assert same.how == "shipped"


def test_a_build_counts_the_phrasings_and_answers_the_model_was_not_trained_on(tmp_path: Path):
    rows = [("bottles-01", "which bottle keeps tea hot", "question"), ("bottles-01", "tea flask", "phrasing")]

    def library(rows: list[tuple[str, str, str]]):
        return training_set([(e, t) for e, t, _ in rows], {}, [], [], (), {(e, t): kind for e, t, kind in rows})

    trained_on = library(rows)
    ship_model_trained_on(tmp_path, trained_on)
    added = [
        ("bottles-01", "thermos for tea", "phrasing"),
        ("bottles-01", "hot tea bottle", "phrasing"),
        ("mugs-01", "Our mug keeps coffee hot for 3 hours.", "answer"),
    ]
    chosen = choose_encoder(library([*rows[:1], *added]), tmp_path, ModelStore(tmp_path / "models"), "full")
    assert chosen.how == "lagging" and chosen.new == {"phrasing": 2, "answer": 1} and chosen.gone == {"phrasing": 1}
    assert "trained before 2 phrasings and 1 answer of this library and on 1 phrasing since removed" in chosen.note
    assert "the new texts are embedded with it and answered now" in chosen.note


def test_what_the_bench_writes_counts_in_the_digest_but_the_model_does_not_lag_for_it(tmp_path: Path):
    question, answer, remeasured = "which bottle keeps tea hot", "Our pick is X: 79.2 °C", "Our pick is X: 79.7 °C"
    trained_on = training_set([("bottles-01", question), ("bottles-01", answer)], {}, [], [], [answer])
    ship_model_trained_on(tmp_path, trained_on)
    figure = training_set([("bottles-01", question), ("bottles-01", remeasured)], {}, [], [], [remeasured])
    reworded = training_set([("bottles-01", question + " all day"), ("bottles-01", answer)], {}, [], [], [answer])
    assert figure.digest() != trained_on.digest() and figure.retraining_digest() == trained_on.retraining_digest()
    assert reworded.retraining_digest() != trained_on.retraining_digest()
    store = ModelStore(tmp_path / "models")
    assert choose_encoder(figure, tmp_path, store, "full").how == "shipped"
    assert choose_encoder(reworded, tmp_path, store, "full").new == {"text": 1}


def test_a_six_layer_student_ships_travels_with_the_release_and_answers(training: Training):
    """`ask train --recipe short-6` distils the short model (kept from the build) into six layers; the
    release carries it as a delta of the second form, and a server runs it on ONNX Runtime and answers with it."""
    output = training.train("short-6").output
    assert "distilling the ask encoder" in output and "training step 3/3" in output
    shipped = TrainedModel.read(training.inputs / SHIPPED_ENCODER_FOLDER)
    assert shipped is not None and shipped.manifest["recipe"] == "short-6"
    assert shipped.manifest["layers"] == 6 and shipped.manifest["kept_layers"] == [0, 2, 4, 6, 8, 10]
    assert shipped.delta.startswith(b"E5DELTA2")
    stage = training.build()
    assert "training step" not in stage.output
    assert stage.metadata["ask_encoder"]["how"] == "shipped"
    snapshot = training.snapshot()
    ((delta,),) = snapshot.connection.execute("SELECT model_delta FROM ask_encoder").fetchall()
    assert layer_count(apply_model_delta(base_model_bytes(), bytes(delta))) == 6
    engine = AskEngine.from_snapshot(snapshot.tables, snapshot.connection, ModelStore(tmp_models(training)))
    assert engine.encoder.model_id == shipped.model_id
    assert engine.search("insulated bottle that keeps tea hot all day", 5)
