"""The one settings object, read from the environment, with defaults that run the demo.

Each setting is declared once, as a field of ``Settings`` whose metadata is its ``Variable``:
the environment variable's name, how its text is read, and what it means. ``load_settings``
reads them, and the command line's help and ``docs/configuration.md`` are written from them
(``settings_reference``), so no list of variables can fall behind the code.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import os
import re
import socket
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

PROJECT_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_BASE_URL = "http://127.0.0.1:8000"
DEFAULT_DAGSTER_URL = "http://127.0.0.1:3000"  # where `dagster dev` (make dev) serves its webserver
# How a build trains the ask encoder when no model was trained on its library yet: ``full``, the
# recipe a real library needs (minutes); ``long``, twelve times its pairs; ``short``, a few small
# steps (the machinery, for CI); each with ``-6``, distilled into six layers; ``off``, never (the
# build uses the publisher's latest model and says how stale it is).
ASK_TRAINING_CHOICES = ("full", "long", "short", "full-6", "long-6", "short-6")  # ask.training.recipes
# The names a server always answers for: a client on the machine itself.
LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1")
_MEMORY_LIMIT = re.compile(r"^\d+(\.\d+)?\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)$", re.IGNORECASE)
# A replica's name is a folder of the object store (``release.question_store``): one path segment.
REPLICA_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
_HOST_NAME = re.compile(r"^(\*\.)?[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$")

Environment = Mapping[str, str]


class SettingsError(ValueError):
    """An environment variable the settings cannot use."""


@dataclass(frozen=True)
class Variable:
    """One environment variable: its name, how its text (stripped; never empty) becomes the
    setting's value, how the default reads in the reference, and what it means."""

    name: str
    read: Callable[[str, str], Any]  # (name, text) -> value, SettingsError when it cannot
    default_text: str
    meaning: str
    secret: bool = False
    words: tuple[str, str] | None = None  # a yes-or-no setting's words for yes and no
    computed: bool = False  # the default is worked out on each machine: ``default_text`` says how

    def written(self, value: Any) -> str:
        """``value`` as this variable's text (what ``read`` reads back); a secret only says whether it is set."""
        if self.secret:
            return "(set)" if value else "(not set)"
        if self.words is not None:
            return self.words[0] if value else self.words[1]
        if value is None:
            return ""
        if isinstance(value, tuple):
            return ",".join(value)
        return str(value)


def _setting(
    name: str,
    default: Any,
    meaning: str,
    read: Callable[[str, str], Any],
    shown: str | None = None,
    secret: bool = False,
    computed: bool = False,
) -> Any:
    """A field of ``Settings`` read from ``name``; ``shown`` is how the default reads where
    it is not the value itself (a path in the checkout, none), and with ``computed`` how it is
    worked out where it differs from machine to machine (the host name)."""
    words = getattr(read, "words", None)
    if shown is None:
        shown = words[0 if default else 1] if words else str(default)
    variable = Variable(name, read, shown, meaning, secret, words, computed)
    return field(default=default, repr=not secret, metadata={"variable": variable})


def _text(name: str, text: str) -> str:
    """Any text, as written (an unset variable keeps its default: None for an optional one)."""
    return text


def _path(name: str, text: str) -> Path:
    return Path(text).expanduser().resolve()


def _count(name: str, text: str) -> int:
    if not text.isdigit():
        raise SettingsError(f"{name} must be a whole number, got {text!r}")
    return int(text)


def _choice(*choices: str) -> Callable[[str, str], str]:
    def read(name: str, text: str) -> str:
        if text.lower() not in choices:
            raise SettingsError(f"{name} must be one of {', '.join(choices)}, got {text!r}")
        return text.lower()

    return read


def _switch(on: str, off: str = "off") -> Callable[[str, str], bool]:
    """A yes-or-no setting written as one of two words (``on``/``off``, ``json``/``off``)."""
    choose = _choice(on, off)

    def read(name: str, text: str) -> bool:
        return choose(name, text) == on

    read.words = (on, off)  # type: ignore[attr-defined]
    return read


def _memory_size(name: str, text: str) -> str:
    if not _MEMORY_LIMIT.match(text):
        raise SettingsError(f"{name} must be a size such as 3GB or 512MB, got {text!r}")
    return text.replace(" ", "")


def _base_url(name: str, text: str) -> str:
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise SettingsError(
            f"{name} must be an http:// or https:// address such as https://data.example.org, got {text!r}"
        )
    return text.rstrip("/")


def _url_or_off(name: str, text: str) -> str | None:
    """An http(s) address, or ``off`` for none."""
    return None if text.lower() == "off" else _base_url(name, text)


def _host_names(name: str, text: str) -> tuple[str, ...]:
    names = tuple(dict.fromkeys(part.lower().rstrip(".") for part in re.split(r"[\s,]+", text) if part))
    for host in names:
        if not (_HOST_NAME.match(host) or _is_address(host)):
            raise SettingsError(
                f"{name} lists {host!r}, which is not a host name or address; list names such as "
                "data.example.org or *.example.org, separated by commas, without scheme or port"
            )
    return names


def _replica_name(name: str, text: str) -> str:
    if not REPLICA_NAME.match(text):
        raise SettingsError(
            f"{name} must be one folder name (letters, digits, '.', '_' or '-', at most 100), got {text!r}"
        )
    return text


def host_replica_name() -> str:
    """A replica's name by default: the host name, made one path segment whatever it holds."""
    return re.sub(r"[^A-Za-z0-9._-]", "-", socket.gethostname()).lstrip("._-")[:100] or "replica"


def _is_address(text: str) -> bool:
    try:
        ipaddress.ip_address(text.strip("[]"))
    except ValueError:
        return False
    return True


def _in_checkout(*parts: str) -> tuple[Path, str]:
    """A default path under the checkout, and how the reference shows it (the same on every machine)."""
    return PROJECT_ROOT.joinpath(*parts), "the checkout's " + "/".join(parts)


_HOME, _HOME_SHOWN = _in_checkout("var")
_INPUTS, _INPUTS_SHOWN = _in_checkout("demo")
_EMBEDDING_CACHE, _EMBEDDING_CACHE_SHOWN = _in_checkout(".cache", "ask-vectors.sqlite3")
_ASK_MODELS, _ASK_MODELS_SHOWN = _in_checkout(".cache", "ask-models")


@dataclass(frozen=True)
class Settings:
    """Where state lives, what the service calls itself, and how it runs: one field per
    environment variable (its ``Variable`` says which), each default one that runs the demo."""

    home: Path = _setting(
        "REUSE_DATA_HOME",
        _HOME,
        "Where the build's state lives: the build warehouse, the published releases, the Dagster "
        "instance, the intake's inbox, the questions asked and the reports.",
        _path,
        _HOME_SHOWN,
    )
    inputs: Path = _setting(
        "REUSE_DATA_INPUTS",
        _INPUTS,
        "The raw inputs a build reads: bench sheets, the editorial export, the labelled ask questions "
        "and the publisher's ask encoder (`reuse-data build --inputs` wins).",
        _path,
        _INPUTS_SHOWN,
    )
    base_url: str = _setting(
        "REUSE_DATA_BASE_URL",
        DEFAULT_BASE_URL,
        "The public address every cited URL is built on, fixed in each release; the server also "
        "answers for its host name.",
        _base_url,
    )
    trusted_hosts: tuple[str, ...] = _setting(
        "REUSE_DATA_TRUSTED_HOSTS",
        (),
        "More host names the server answers for, besides the base URL's, the loopback names and the "
        "address a request arrives on: comma-separated names or addresses, `*.example.org` for every "
        "subdomain. Any other Host (or, on /mcp, Origin) is refused with 421 or 403.",
        _host_names,
        "none",
    )
    intake_max_bytes: int = _setting(
        "REUSE_DATA_INTAKE_MAX_BYTES", 10 * 1024 * 1024, "The largest bench sheet the intake accepts, in bytes.", _count
    )
    dagster_url: str | None = _setting(
        "REUSE_DATA_DAGSTER_URL",
        DEFAULT_DAGSTER_URL,
        "The Dagster webserver the intake asks for a build the moment it accepts or withdraws a sheet "
        "(`make dev` serves one there); `off`: none, the pipeline's sensor starts the build at its next tick.",
        _url_or_off,
    )
    stale_build_seconds: int = _setting(
        "REUSE_DATA_STALE_BUILD_SECONDS",
        15 * 60,
        "How long a build may log nothing before the intake sensor deems its process gone and builds again.",
        _count,
    )
    build_wait_seconds: int = _setting(
        "REUSE_DATA_BUILD_WAIT_SECONDS",
        30 * 60,
        "How long a build waits for the one already running (builds run one at a time) before it gives up.",
        _count,
    )
    duckdb_memory_limit: str = _setting(
        "REUSE_DATA_DUCKDB_MEMORY_LIMIT",
        "3GB",
        "The most memory DuckDB takes while dbt builds the warehouse and while publish writes a "
        "release, written as DuckDB writes sizes (`3GB`, `512MB`); beyond it DuckDB spills to disk.",
        _memory_size,
    )
    dagster_postgres_url: str | None = _setting(
        "REUSE_DATA_DAGSTER_POSTGRES_URL",
        None,
        "The PostgreSQL database of a production Dagster instance, `postgresql+psycopg2://user:password@host/db` "
        "(unset: an embedded SQLite instance under the home).",
        _text,
        "none",
    )
    publish_to: str | None = _setting(
        "REUSE_DATA_PUBLISH_TO",
        None,
        "An object store each publish also uploads its release to, `s3://bucket/prefix` (unset: local "
        "disk only). Its endpoint and keys are the `AWS_*` variables.",
        _text,
        "none",
    )
    serve_from: str | None = _setting(
        "REUSE_DATA_SERVE_FROM",
        None,
        "Serve as a replica of this object store, `s3://bucket/prefix`, instead of the home's "
        "releases (`reuse-data serve --from` wins).",
        _text,
        "none",
    )
    access_log: bool = _setting(
        "REUSE_DATA_ACCESS_LOG",
        True,
        "`json`: the server writes one JSON line per request on its standard output; `off`: none "
        "(`reuse-data serve --access-log` wins).",
        _switch("json"),
    )
    metrics: bool = _setting(
        "REUSE_DATA_METRICS",
        True,
        "`on`: the server counts its requests for /metrics; `off`: only the release's own figures.",
        _switch("on"),
    )
    question_log: bool = _setting(
        "REUSE_DATA_QUESTION_LOG",
        True,
        "`on`: the server keeps the questions asked of ask.json and /mcp, without who asked, for the "
        "unanswered-questions report; `off`: none.",
        _switch("on"),
    )
    question_retention_days: int = _setting(
        "REUSE_DATA_QUESTION_RETENTION_DAYS",
        90,
        "How many days of questions a build keeps before it deletes the older day files.",
        _count,
    )
    replica_name: str = _setting(
        "REUSE_DATA_REPLICA_NAME",
        host_replica_name(),
        "A replica's folder in the object store, `<store>/questions/<name>/`, where it uploads the "
        "questions asked of it; unique per replica.",
        _replica_name,
        "the machine's host name",
        computed=True,
    )
    question_upload_seconds: int = _setting(
        "REUSE_DATA_QUESTION_UPLOAD_SECONDS",
        60,
        "How often a replica uploads its day files of questions to the store (and once more when it "
        "stops; 0: only then). A replica killed outright loses at most this much.",
        _count,
    )
    embedding_cache: Path = _setting(
        "REUSE_DATA_EMBEDDING_CACHE",
        _EMBEDDING_CACHE,
        "The ask engine's entry vectors by model and text, shared by every home on the machine.",
        _path,
        _EMBEDDING_CACHE_SHOWN,
    )
    ask_models: Path = _setting(
        "REUSE_DATA_ASK_MODELS",
        _ASK_MODELS,
        "Where the ask encoders trained on a library and the networks ONNX Runtime runs are kept, shared by "
        "every home on the machine.",
        _path,
        _ASK_MODELS_SHOWN,
    )
    ask_training: str = _setting(
        "REUSE_DATA_ASK_TRAINING",
        "full",
        "The recipe the `train_ask_encoder` job trains the ask encoder with, and `reuse-data ask train`'s "
        "default: `full` (minutes), `long` (40 minutes on two cores), `short` (a few steps, for CI), each with "
        "`-6` for a 6-layer model. A build never trains: it embeds with the inputs' model.",
        _choice(*ASK_TRAINING_CHOICES),
    )
    tester_token: str = _setting(
        "REUSE_DATA_TOKEN",
        "",
        "On a tester's machine, the token `reuse-data upload` sends (`--token` wins).",
        _text,
        "none",
        secret=True,
    )

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

    @property
    def answered_hosts(self) -> tuple[str, ...]:
        """The host names a server answers for (``serve.http.trusted_hosts``): the base URL's,
        the loopback names and the operator's ``trusted_hosts``."""
        own = urlsplit(self.base_url).hostname or ""
        return tuple(dict.fromkeys((own, *LOOPBACK_HOSTS, *self.trusted_hosts)))


def variables() -> list[tuple[str, Variable]]:
    """Each setting's field name and environment variable, in the order ``Settings`` declares them."""
    return [(item.name, item.metadata["variable"]) for item in dataclasses.fields(Settings)]


def load_settings(environ: Environment | None = None) -> Settings:
    """Read the settings from ``environ`` (the process environment by default): an unset or blank
    variable keeps its default."""
    env = os.environ if environ is None else environ
    values = {}
    for name, variable in variables():
        text = env.get(variable.name, "").strip()
        if text:
            try:
                values[name] = variable.read(variable.name, text)
            except SettingsError as error:
                raise SettingsError(
                    f"{error}; set it again, or unset it for the default ({variable.default_text})"
                ) from None
    return Settings(**values)


def variable_name(field_name: str) -> str:
    """The environment variable of the setting ``field_name`` (``Settings.<field_name>``)."""
    return dict(variables())[field_name].name


# Variables read by the parts the service is built on rather than by ``Settings``.
OTHER_VARIABLES = (
    (
        "AWS_ENDPOINT_URL, AWS_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY",
        "The object store's endpoint, region and keys, read by its client (obstore) wherever "
        "REUSE_DATA_PUBLISH_TO or REUSE_DATA_SERVE_FROM names a store.",
    ),
    (
        "FORWARDED_ALLOW_IPS",
        "uvicorn's: the balancer addresses whose `X-Forwarded-For` names the client in the access log "
        "(default: loopback).",
    ),
)


def settings_reference() -> str:
    """Every setting as Markdown, what ``docs/configuration.md`` holds (``reuse-data settings --reference``)."""
    lines = [
        "# Configuration",
        "",
        "Every setting of reuse-data is an environment variable, read when a command starts. An unset "
        "or blank variable keeps its default; a value the service cannot use stops the command with a "
        "sentence naming the variable. `reuse-data settings` prints the values in effect.",
        "",
        "This file is written by `reuse-data settings --reference > docs/configuration.md` from the "
        "declarations in `foundations/settings.py`; a test keeps it the same.",
        "",
        "| variable | default | what it sets |",
        "| --- | --- | --- |",
    ]
    for _, variable in variables():
        default = f"`{variable.default_text}`" if variable.default_text not in ("", "none") else "none"
        if variable.default_text.startswith("the checkout's "):
            default = "the checkout's `" + variable.default_text.removeprefix("the checkout's ") + "`"
        if variable.computed:  # not a value to copy: how each machine works it out
            default = f"*({variable.default_text})*"
        lines.append(f"| `{variable.name}` | {default} | {variable.meaning} |")
    lines += ["", "Read by the parts underneath:", "", "| variable | what it sets |", "| --- | --- |"]
    lines += [f"| `{names}` | {meaning} |" for names, meaning in OTHER_VARIABLES]
    return "\n".join(lines) + "\n"
