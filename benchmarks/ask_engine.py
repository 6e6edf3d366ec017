"""The ask engine's quality and speed: the fused engine beside the lexical one, in the same run.

Quality is reported on the **test split** of ``tests/ask_eval/``, which nothing is fitted on
(per language and overall: top-1 accuracy, MRR@5, false negatives, false positives). The dev
split's figures follow, labelled in-sample: the fusion model was fitted on it.

Speed: in-process latency of distinct questions (every labelled question of both splits,
each asked once: nothing replayed from a memo), p50 and p99, at the size of the current
snapshot and at ``--entries`` (default 20,000) synthetic entries made from it; what loading
a snapshot of that size costs (the lexical index and the vectors), and what the loaded
engine holds in memory; and what embedding the demo's texts cold costs.

The baseline is the lexical engine alone (``ask.index``, as served before the fusion).

    python benchmarks/ask_engine.py [--entries 20000] [--record]
    python benchmarks/ask_engine.py --fit      # fit the fusion model on the dev split, write it

Reads the snapshot ``CURRENT`` names under ``REUSE_DATA_HOME`` (``make bench-ask`` builds it).
"""

from __future__ import annotations

import argparse
import shutil
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

from ask.encoder import DIMENSIONS, MODEL_ID, Encoder  # noqa: E402
from ask.engine import AskEngine  # noqa: E402
from ask.evaluation import (  # noqa: E402
    TARGET_FALSE_NEGATIVE_RATE,
    TARGET_FALSE_POSITIVE_RATE,
    TARGET_TOP1_OVERALL,
    TARGET_TOP1_PER_LANGUAGE,
    Scores,
    fit_on_dev,
    load_questions,
    percentile,
    run,
    score,
)
from ask.fusion import MODEL_PATH, FusionModel  # noqa: E402
from ask.index import AskIndex  # noqa: E402
from ask.language import LANGUAGES  # noqa: E402
from ask.stored_index import index_tables  # noqa: E402
from benchmarks.results import machine, markdown_table, record  # noqa: E402
from foundations.settings import load_settings  # noqa: E402
from serve.snapshot import Snapshot, load_snapshot  # noqa: E402
from warehouse.contract import (
    ASK_VECTORS_TABLE,
    TABLE_QUERIES,
)
from warehouse.snapshots import current_version, read_tables  # noqa: E402

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
    ends = np.append(vectors.starts[1:], len(vectors.texts))
    rows = np.concatenate([np.arange(vectors.starts[o], ends[o]) for o in copied])
    owners = np.concatenate([np.full(ends[o] - vectors.starts[o], n) for n, o in enumerate(copied)])
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
                "model": pa.array([MODEL_ID] * len(rows)),
            }
        ),
        **index_tables(lexical),
    }
    with duckdb.connect(str(path)) as connection:
        for name, table in tables.items():
            connection.register("incoming", table)
            connection.execute(f'CREATE TABLE "{name}" AS SELECT * FROM incoming')
            connection.unregister("incoming")


def quality_table(fused: list[Scores], lexical: list[Scores]) -> str:
    rows = [
        [
            ours.label,
            f"{ours.answerable} + {ours.unrelated}",
            f"{ours.top1:.3f}",
            f"{ours.mrr:.3f}",
            f"{ours.false_negative_rate:.3f}",
            f"{ours.false_positive_rate:.3f}",
            f"{base.top1:.3f}",
            f"{base.mrr:.3f}",
            f"{base.false_negative_rate:.3f}",
            f"{base.false_positive_rate:.3f}",
        ]
        for ours, base in zip(fused, lexical, strict=True)
    ]
    header = [
        "language",
        "questions (answerable + no-match)",
        "top-1",
        "MRR@5",
        "false negatives",
        "false positives",
        "lexical top-1",
        "lexical MRR@5",
        "lexical false negatives",
        "lexical false positives",
    ]
    return markdown_table(header, rows)


def latencies_ms(search: Callable[[str, int], list], questions: list[str]) -> list[float]:
    timings = []
    for question in questions:
        started = time.perf_counter()
        search(question, 5)
        timings.append((time.perf_counter() - started) * 1000)
    return timings


def loaded(path: Path, encoder: Encoder) -> tuple[AskEngine, float, float, float]:
    """What a server does for the ask engine when the snapshot at ``path`` lands: (the engine,
    seconds to read the entries' rows, seconds to load the engine from them, MB the engine holds
    as tracemalloc counts, the rows, which the server keeps for its other answers, left out)."""
    started = time.perf_counter()
    tables = read_tables(path, {name: TABLE_QUERIES[name] for name in ("recommendations", "answers", "categories")})
    read = time.perf_counter() - started
    connection = duckdb.connect(str(path), read_only=True)
    started = time.perf_counter()
    engine = AskEngine.from_snapshot(tables, connection, encoder)
    seconds = time.perf_counter() - started
    tracemalloc.start()
    held = AskEngine.from_snapshot(tables, connection, encoder)
    megabytes = tracemalloc.get_traced_memory()[0] / 1e6
    tracemalloc.stop()
    del held
    return engine, read, seconds, megabytes


def speed_report(snapshot: Snapshot, engine: AskEngine, questions: list[str], entries: int) -> str:
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        demo, synthetic = Path(scratch) / "demo.duckdb", Path(scratch) / "synthetic.duckdb"
        shutil.copyfile(snapshot.path, demo)  # a file of its own: this process holds the snapshot open already
        synthetic_snapshot(synthetic, snapshot, engine, entries)
        for label, path in (("demo snapshot", demo), ("synthetic", synthetic)):
            rows.append(timed_row(label, path, engine.encoder, questions))
            print(f"  timed {label}", file=sys.stderr)
    header = ["engine", "entries", "rows read (s)", "engine loaded (s)", "engine holds (MB)", "p50 (ms)", "p99 (ms)"]
    header += ["lexical p50 (ms)", "lexical p99 (ms)"]
    return markdown_table(header, rows)


def timed_row(label: str, path: Path, encoder: Encoder, questions: list[str]) -> list[object]:
    """One row of the speed table: loading the snapshot's engine, then every question once."""
    sized, read, seconds, megabytes = loaded(path, encoder)
    fused = latencies_ms(sized.search, questions)
    lexical = latencies_ms(sized.lexical.search, questions)
    figures = [percentile(fused, 0.5), percentile(fused, 0.99), percentile(lexical, 0.5), percentile(lexical, 0.99)]
    loading = [f"{read:.2f}", f"{seconds:.2f}", f"{megabytes:.0f}"]
    return [label, len(sized.entries), *loading, *(f"{f:.2f}" for f in figures)]


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
        f"Embedding the demo's {len(texts)} entry texts cold ({MODEL_ID}): {cold:.1f} s "
        f"({len(texts) / cold:.0f} texts/s); a build whose texts are all in the vector cache embeds none."
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--entries", type=int, default=20_000, help="size of the synthetic library (default 20000)")
    parser.add_argument(
        "--fit", action="store_true", help=f"fit the fusion model on the dev split into {MODEL_PATH.name}"
    )
    parser.add_argument("--record", action="store_true", help="append the results to benchmarks/RESULTS.md")
    args = parser.parse_args()

    store = load_settings().snapshots_dir
    version = current_version(store)
    if version is None:
        sys.exit(f"no published snapshot under {store}: run `make build` (or `make bench-ask`) first")
    snapshot = load_snapshot(store, version)
    if args.fit:
        unfitted = FusionModel.unfitted()
        model = fit_on_dev(AskEngine.from_snapshot(snapshot.tables, snapshot.connection, Encoder.shared(), unfitted))
        model.save()
        print(f"fitted on the {model.fitted_on}: wrote {MODEL_PATH}")
        return
    engine = AskEngine.from_snapshot(snapshot.tables, snapshot.connection, Encoder.shared())

    test, dev = load_questions("test"), load_questions("dev")
    print(f"snapshot {version}: {len(test)} test and {len(dev)} dev questions", file=sys.stderr)
    on_test = score(run(engine.search, test))
    on_test_lexical = score(run(engine.lexical.search, test))
    on_dev = score(run(engine.search, dev))
    on_dev_lexical = score(run(engine.lexical.search, dev))
    distinct = list(dict.fromkeys(q.question for q in test + dev))
    overall, by_language = on_test[-1], on_test[:-1]
    verdict = (
        f"Targets on the test split: top-1 >= {TARGET_TOP1_OVERALL} overall ({overall.top1:.3f}) and >= "
        f"{TARGET_TOP1_PER_LANGUAGE} in every language (lowest {min(s.top1 for s in by_language):.3f}); "
        f"false negatives <= {TARGET_FALSE_NEGATIVE_RATE} ({overall.false_negative_rate:.3f}); "
        f"false positives <= {TARGET_FALSE_POSITIVE_RATE} ({overall.false_positive_rate:.3f})."
    )
    report = "\n\n".join(
        [
            f"Machine: {machine()}. Snapshot {version}. "
            f"Command: `python benchmarks/ask_engine.py --entries {args.entries}`. "
            f"Fusion model: {engine.model.fitted_on}.",
            "**Test split** (never fitted on): the fused engine beside the lexical engine alone.",
            quality_table(on_test, on_test_lexical),
            verdict,
            "Dev split, **in-sample** (the fusion model was fitted on it; not a result):",
            quality_table(on_dev, on_dev_lexical),
            f"In-process latency of {len(distinct)} distinct questions, each asked once, and what loading costs:",
            speed_report(snapshot, engine, distinct, args.entries),
            encoder_report(snapshot, engine.encoder),
        ]
    )
    print(report)
    if args.record:
        print(f"appended to {record('Ask engine', report)}", file=sys.stderr)


if __name__ == "__main__":
    main()
