"""The one settings object, read from the environment, with defaults that run the demo."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_BASE_URL = "http://127.0.0.1:8000"
DEFAULT_INTAKE_MAX_BYTES = 10 * 1024 * 1024
DEFAULT_STALE_BUILD_SECONDS = 15 * 60
DEFAULT_EMBEDDING_CACHE = PROJECT_ROOT / ".cache" / "ask-vectors.sqlite3"
DEFAULT_BUILD_WAIT_SECONDS = 30 * 60
DEFAULT_ASK_MODELS = PROJECT_ROOT / ".cache" / "ask-models"
# How a build trains the ask encoder when no model was trained on its library yet: ``full``, the
# recipe a real library needs (minutes); ``long``, twelve times its pairs; ``short``, a few small
# steps (the machinery, for CI); each with ``-6``, distilled into six layers; ``off``, never (the
# build uses the publisher's latest model and says how stale it is).
ASK_TRAINING_CHOICES = ("full", "long", "short", "full-6", "long-6", "short-6", "off")  # ask.training.recipes, off
DEFAULT_QUESTION_RETENTION_DAYS = 90
DEFAULT_DUCKDB_MEMORY_LIMIT = "3GB"
_MEMORY_LIMIT = re.compile(r"^\d+(\.\d+)?\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)$", re.IGNORECASE)


class SettingsError(ValueError):
    """An environment variable the settings cannot use."""


@dataclass(frozen=True)
class Settings:
    """Where state lives and what the service calls itself.

    home: every data file (build warehouse, snapshots, Dagster home, inbox); ``REUSE_DATA_HOME``.
    inputs: the raw inputs a build reads (bench sheets and editorial export); ``REUSE_DATA_INPUTS``.
    base_url: the public address page URLs are built on; ``REUSE_DATA_BASE_URL``.
    intake_max_bytes: the largest bench sheet the intake accepts; ``REUSE_DATA_INTAKE_MAX_BYTES``.
    stale_build_seconds: how long a build may log nothing before the intake sensor deems its
        process gone and builds again; ``REUSE_DATA_STALE_BUILD_SECONDS``.
    embedding_cache: the ask engine's entry vectors by model and text hash, shared by every
        home on the machine (``ask.dense.cache``); ``REUSE_DATA_EMBEDDING_CACHE``.
    publish_to: the object store each publish also uploads its release to, ``s3://bucket/prefix``
        (None: local disk only); ``REUSE_DATA_PUBLISH_TO``. Its endpoint and credentials are the
        usual ``AWS_*`` variables (``release.object_store``).
    dagster_postgres_url: the PostgreSQL database of the production Dagster instance (None: the
        embedded SQLite instance under ``home``); ``REUSE_DATA_DAGSTER_POSTGRES_URL``.
    build_wait_seconds: how long a build waits for another one to finish before it gives up
        (builds run one at a time); ``REUSE_DATA_BUILD_WAIT_SECONDS``.
    serve_from: the object store a replica serves from, ``s3://bucket/prefix`` (None: the local
        releases under ``home``); ``REUSE_DATA_SERVE_FROM``, or `reuse-data serve --from`.
    access_log: whether the server writes one JSON line per request to its standard output;
        ``REUSE_DATA_ACCESS_LOG`` (``json``, the default, or ``off``).
    metrics: whether the server counts its requests for ``/metrics``; ``REUSE_DATA_METRICS``
        (``on``, the default, or ``off``; the release's own metrics are always there).
    ask_models: the ask encoders trained on a library, by what they were trained on, shared by
        every home on the machine like the vector cache; ``REUSE_DATA_ASK_MODELS``.
    ask_training: how a build trains the ask encoder when none was trained on its library yet
        (``ASK_TRAINING_CHOICES``); ``REUSE_DATA_ASK_TRAINING``, ``full`` by default.
    question_log: whether the server keeps the questions asked of ask.json, without who asked
        (``serve.operations.question_log``); ``REUSE_DATA_QUESTION_LOG`` (``on``, the default, or ``off``).
    question_retention_days: how many days of questions a build keeps before dropping the older
        day files; ``REUSE_DATA_QUESTION_RETENTION_DAYS``, 90 by default.
    tester_token: the token `reuse-data upload` sends for a tester, on the tester's machine
        (``--token`` wins); ``REUSE_DATA_TOKEN``. Kept out of the settings' repr.
    duckdb_memory_limit: the most memory DuckDB takes while dbt builds the warehouse and while
        publish writes the release (beyond it DuckDB spills to disk), as DuckDB writes sizes
        (``3GB``, ``512MB``);
        ``REUSE_DATA_DUCKDB_MEMORY_LIMIT``, 3GB by default.
    """

    home: Path
    inputs: Path
    base_url: str
    intake_max_bytes: int = DEFAULT_INTAKE_MAX_BYTES
    stale_build_seconds: int = DEFAULT_STALE_BUILD_SECONDS
    embedding_cache: Path = DEFAULT_EMBEDDING_CACHE
    publish_to: str | None = None
    dagster_postgres_url: str | None = None
    build_wait_seconds: int = DEFAULT_BUILD_WAIT_SECONDS
    serve_from: str | None = None
    access_log: bool = True
    metrics: bool = True
    ask_models: Path = DEFAULT_ASK_MODELS
    ask_training: str = "full"
    question_log: bool = True
    question_retention_days: int = DEFAULT_QUESTION_RETENTION_DAYS
    tester_token: str = field(default="", repr=False)
    duckdb_memory_limit: str = DEFAULT_DUCKDB_MEMORY_LIMIT

    @property
    def warehouse_path(self) -> Path:
        return self.home / "warehouse" / "build.duckdb"

    @property
    def bench_digests_path(self) -> Path:
        """The bench sheets' sha256 by their stat (``foundations.file_digests``), beside the warehouse."""
        return self.warehouse_path.with_name("bench-sheet-digests.json")

    @property
    def snapshots_dir(self) -> Path:
        return self.home / "snapshots"

    @property
    def replica_cache(self) -> Path:
        """Where a replica keeps the releases it downloaded from ``serve_from``."""
        return self.home / "replica"

    @property
    def questions_dir(self) -> Path:
        """The questions asked, one file per day and server process (``warehouse.asked_questions``);
        a deployment's replicas put theirs in folders under it."""
        return self.home / "questions"

    @property
    def reports_dir(self) -> Path:
        """What a build writes for editors to read (the unanswered questions as CSV)."""
        return self.home / "reports"

    @property
    def dagster_home(self) -> Path:
        return self.home / "dagster"

    @property
    def dbt_target_dir(self) -> Path:
        return self.home / "dbt" / "target"

    @property
    def dbt_profiles_dir(self) -> Path:
        """Where dbt's profile, written from these settings (``pipelines.project``), is kept."""
        return self.home / "dbt"

    def ensure_dirs(self) -> None:
        for path in (self.warehouse_path.parent, self.snapshots_dir, self.dagster_home):
            path.mkdir(parents=True, exist_ok=True)


def load_settings(environ: os._Environ[str] | dict[str, str] | None = None) -> Settings:
    """Read the settings from ``environ`` (the process environment by default)."""
    env = os.environ if environ is None else environ
    home = Path(env.get("REUSE_DATA_HOME") or PROJECT_ROOT / "var").expanduser().resolve()
    inputs = Path(env.get("REUSE_DATA_INPUTS") or PROJECT_ROOT / "demo").expanduser().resolve()
    base_url = (env.get("REUSE_DATA_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
    return Settings(
        home=home,
        inputs=inputs,
        base_url=base_url,
        intake_max_bytes=_non_negative_integer(env, "REUSE_DATA_INTAKE_MAX_BYTES", DEFAULT_INTAKE_MAX_BYTES),
        stale_build_seconds=_non_negative_integer(env, "REUSE_DATA_STALE_BUILD_SECONDS", DEFAULT_STALE_BUILD_SECONDS),
        embedding_cache=Path(env.get("REUSE_DATA_EMBEDDING_CACHE") or DEFAULT_EMBEDDING_CACHE).expanduser().resolve(),
        publish_to=env.get("REUSE_DATA_PUBLISH_TO", "").strip() or None,
        dagster_postgres_url=env.get("REUSE_DATA_DAGSTER_POSTGRES_URL", "").strip() or None,
        build_wait_seconds=_non_negative_integer(env, "REUSE_DATA_BUILD_WAIT_SECONDS", DEFAULT_BUILD_WAIT_SECONDS),
        serve_from=env.get("REUSE_DATA_SERVE_FROM", "").strip() or None,
        access_log=_choice(env, "REUSE_DATA_ACCESS_LOG", ("json", "off"), "json") == "json",
        metrics=_choice(env, "REUSE_DATA_METRICS", ("on", "off"), "on") == "on",
        ask_models=Path(env.get("REUSE_DATA_ASK_MODELS") or DEFAULT_ASK_MODELS).expanduser().resolve(),
        ask_training=_choice(env, "REUSE_DATA_ASK_TRAINING", ASK_TRAINING_CHOICES, "full"),
        question_log=_choice(env, "REUSE_DATA_QUESTION_LOG", ("on", "off"), "on") == "on",
        question_retention_days=_non_negative_integer(
            env, "REUSE_DATA_QUESTION_RETENTION_DAYS", DEFAULT_QUESTION_RETENTION_DAYS
        ),
        tester_token=env.get("REUSE_DATA_TOKEN", "").strip(),
        duckdb_memory_limit=_memory_size(env, "REUSE_DATA_DUCKDB_MEMORY_LIMIT", DEFAULT_DUCKDB_MEMORY_LIMIT),
    )


def _choice(env: os._Environ[str] | dict[str, str], name: str, choices: tuple[str, ...], default: str) -> str:
    text = env.get(name, "").strip().lower() or default
    if text not in choices:
        raise SettingsError(f"{name} must be one of {', '.join(choices)}, got {text!r}; unset it for {default}")
    return text


def _non_negative_integer(env: os._Environ[str] | dict[str, str], name: str, default: int) -> int:
    text = env.get(name, "").strip()
    if not text:
        return default
    if not text.isdigit():
        raise SettingsError(f"{name} must be a whole number, got {text!r}; unset it for the default ({default})")
    return int(text)


def _memory_size(env: os._Environ[str] | dict[str, str], name: str, default: str) -> str:
    text = env.get(name, "").strip() or default
    if not _MEMORY_LIMIT.match(text):
        raise SettingsError(f"{name} must be a size such as 3GB or 512MB, got {text!r}; unset it for {default}")
    return text.replace(" ", "")
