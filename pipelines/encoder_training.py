"""Training the ask encoder, apart from every build: `reuse-data ask train` and the Dagster job
``train_ask_encoder`` (its schedule off until an operator turns it on) run it where PyTorch is.

A build never trains (``ask.training.library.choose_encoder``), so an editor's phrasing is live at
the next build on any install; this brings the model up to date with what the editors wrote since.
It reads the last build's library from the warehouse (read-only, for a moment: a build meanwhile is
neither blocked nor failed), trains on it (or reuses the model kept for the same library and
recipe), embeds every text a build embeds and every labelled question with the new model, and
writes both into the inputs (``<inputs>/ask_encoder/``): the next build serves the new model and
embeds nothing.
"""

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import duckdb
from dagster import Config, OpExecutionContext, RetryRequested, job, op

from ask.dense.cache import SHIPPED_VECTORS_FILE, text_key, write_shipped
from ask.dense.embedding import ENTRY_TEXTS_SQL, UNCOVERED_TEXTS_SQL, known_vectors
from ask.dense.encoder import Encoder
from ask.model.store import ModelStore, TrainedModel
from ask.training.data import TrainingSet
from ask.training.library import library_training_set, train_or_reuse
from ask.training.recipes import RECIPES
from foundations.settings import Settings
from inputs.ask_inputs import SHIPPED_ENCODER_FOLDER, Split, load_questions
from pipelines.resources import SettingsResource
from warehouse.reference_data import LANGUAGES

T = TypeVar("T")
BUSY_RETRIES = 6  # the Dagster job waits out a build writing the warehouse: up to half an hour
BUSY_WAIT_SECONDS = 300


class LastBuildUnreadable(Exception):
    """The last build's warehouse cannot be read: the message says why and what to do."""


class BuildWriting(LastBuildUnreadable):
    """A build holds the warehouse: read it again once that build has finished."""


def read_last_build(settings: Settings, read: Callable[[duckdb.DuckDBPyConnection], T], lacking: str) -> T:
    """What ``read`` takes from the last build's warehouse, opened read-only; ``lacking`` names what
    ``read`` needs of it, for the error when a build never made it."""
    if not settings.warehouse_path.exists():
        raise LastBuildUnreadable(f"no build warehouse at {settings.warehouse_path}; run `reuse-data build` first")
    try:
        with duckdb.connect(str(settings.warehouse_path), read_only=True) as connection:
            return read(connection)
    except duckdb.IOException as error:
        raise BuildWriting("a build is writing the warehouse; run this again when it has finished") from error
    except duckdb.CatalogException as error:
        raise LastBuildUnreadable(
            f"the build warehouse lacks {lacking} ({error}); run `reuse-data build` first"
        ) from error


@dataclass(frozen=True)
class ShippedEncoder:
    """What ``train_and_ship`` wrote: the model, whether it was trained now (not kept from before),
    the inputs' folder it went to, and how many vectors went with it (how many embedded now)."""

    model: TrainedModel
    trained_now: bool
    folder: Path
    vectors: int
    embedded: int


def library_of_last_build(settings: Settings) -> tuple[TrainingSet, dict[str, str]]:
    """The last build's training set, and every text its embedding steps embed (sha256 -> text)."""

    def read(connection: duckdb.DuckDBPyConnection) -> tuple[TrainingSet, dict[str, str]]:
        texts = dict(connection.execute(ENTRY_TEXTS_SQL).fetchall())
        texts.update(connection.execute(UNCOVERED_TEXTS_SQL).fetchall())
        return library_training_set(connection, settings.inputs), texts

    return read_last_build(settings, read, "the ask engine's tables")


def train_and_ship(
    settings: Settings, recipe_name: str, log: Callable[[str], None], again: bool = False
) -> ShippedEncoder:
    """Train the ask encoder on the last build's library with ``recipe_name`` (or reuse the model
    trained on it before, unless ``again``) and ship it, with its vectors, in the inputs."""
    recipe = RECIPES.get(recipe_name)
    if recipe is None:
        raise ValueError(f"no ask-training recipe {recipe_name!r}: choose one of {', '.join(sorted(RECIPES))}")
    data, texts = library_of_last_build(settings)
    store = ModelStore(settings.ask_models)
    trained, trained_now = train_or_reuse(data, recipe, store, log, again=again)
    if not trained_now:
        log(f"this library was trained on before with the {recipe.name} recipe (key {trained.manifest['key'][:12]})")
    # The labelled questions too: a build embeds every split's to fit the decision.
    questions = [q.question for split in Split for q in load_questions(settings.inputs, split, LANGUAGES)]
    texts.update((text_key(question), question) for question in questions)
    encoder = Encoder.shared(trained.model_id, store.model_file(trained.sha256, trained.delta), trained.sha256, store)
    vectors, embedded = known_vectors(texts, encoder, settings.inputs, settings.embedding_cache, log)
    folder = settings.inputs / SHIPPED_ENCODER_FOLDER
    # The vectors first: a build reading the folder meanwhile finds the old model (whose id the new
    # vectors do not match, so it ignores them) or the new model with its vectors.
    folder.mkdir(parents=True, exist_ok=True)
    write_shipped(folder / SHIPPED_VECTORS_FILE, trained.model_id, vectors)
    trained.write(folder)
    return ShippedEncoder(trained, trained_now, folder, len(vectors), embedded)


class EncoderTrainingConfig(Config):
    """The job's run configuration: the recipe (none: ``REUSE_DATA_ASK_TRAINING``), and whether to
    train even when this library was trained on before."""

    recipe: str | None = None
    again: bool = False


@op(
    description="Train the ask encoder on the last build's library (PyTorch, minutes) and ship it with the "
    "inputs: the next build serves it. Never holds the build lock: a build meanwhile is not delayed.",
    tags={"kind": "pytorch"},
)
def train_ask_encoder_op(
    context: OpExecutionContext, config: EncoderTrainingConfig, settings: SettingsResource
) -> None:
    configured = settings.settings
    try:
        shipped = train_and_ship(configured, config.recipe or configured.ask_training, context.log.info, config.again)
    except BuildWriting as busy:
        context.log.info(f"{busy}: trying again in {BUSY_WAIT_SECONDS // 60} minutes")
        raise RetryRequested(max_retries=BUSY_RETRIES, seconds_to_wait=BUSY_WAIT_SECONDS) from busy
    context.log.info(shipped_sentence(shipped))


def shipped_sentence(shipped: ShippedEncoder) -> str:
    """What a training shipped, and what happens next: the same words for the CLI and the job's log."""
    return (
        f"wrote {shipped.folder} ({len(shipped.model.delta) / 1e6:.1f} MB delta, model sha256 "
        f"{shipped.model.sha256[:16]}, {shipped.vectors} vectors of the library's texts and labelled questions, "
        f"{shipped.embedded} embedded now): the next build from these inputs serves it and embeds none of them"
    )


@job(
    description="Train the ask encoder on the last build's library and ship it with the inputs (off the build: "
    "a publish never waits for it). Run it from the Launchpad, or turn on its schedule.",
)
def train_ask_encoder() -> None:
    train_ask_encoder_op()
