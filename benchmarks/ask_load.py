"""The ask engine under load: how its threads share the cores, what the server answers with one
and two workers and beside a process that embeds, and what a flood of clients gets.

Every question is distinct (the labelled questions of the inputs, asked in turn; an answer
engine never asks the same one twice), so none is answered from the per-release memo.

1. **Threads** (the choice ``ask.dense.threads`` makes): 1 or 2 processes embedding distinct
   questions through the project's encoder (ONNX Runtime), one question a call: a question at a
   time on every core, spinning or sleeping, or several at once on a thread each.
2. **Serving**: `reuse-data serve` over the built demo with 1 and 2 workers, on a quiet machine
   and beside a process embedding the library's texts without pause (what a build does when it
   embeds or trains on the serving machine); ``--connections`` clients asking in turn. The
   baseline is one worker on a quiet machine, in the same run. With ``--previous REF``, one
   worker of that commit too (a worktree of it, its demo built by its own code in a home of its
   own), asked the same way in the same run: what the server answered before.
3. **Flood**: ``--flood`` clients at once on one worker, more than the questions it admits:
   how soon a refusal comes, the share refused, the p99 of the questions it answered, and the
   p99 of ``products.json`` asked meanwhile (beside its p99 on a quiet server).

Run ``make build`` first (this reads the home the settings name).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from ask.dense.threads import EncoderThreads, cores
from benchmarks.results import add_record_option, machine, markdown_table, percentile, report
from foundations.ask_limits import ASK_DEFAULT_LIMIT
from foundations.settings import PROJECT_ROOT, load_settings
from inputs.ask_inputs import Split, load_questions
from tests.support.harness import serving
from warehouse.reference_data import LANGUAGES

PRODUCTS = "/api/public/products.json"
WORKERS_AT_LEAST_ONE = 1.0  # 2 workers answer at least what 1 does (a ratio of questions a second)
SLOWER_AT_MOST = 2.0  # no configuration more than this many times slower a question than 1 worker alone
ACCEPTED_P99_SECONDS = 1.0  # an admitted question is answered within this, under a flood
HTTP_OVER_IN_PROCESS = 1.3  # one client's p50 over HTTP against the same engine's in process
GAIN_OVER_PREVIOUS = 4.0  # one worker against the previous commit's one worker, distinct questions a second
TWO_WORKERS_AT_LEAST = 1.6  # two workers against one

# One process of the threads table: the project's encoder alone, its runs and threads given, each run
# a thread asking questions one a call from a shared start time for a fixed time; prints the
# questions answered and the seconds.
EMBEDDER = """
import json, sys, threading, time
from pathlib import Path
from ask.dense.encoder import Encoder
from ask.dense.threads import EncoderThreads, use_encoder_threads
from ask.model.store import ModelStore
questions = json.loads(open(sys.argv[1], encoding="utf-8").read())[int(sys.argv[2]) :: int(sys.argv[3])]
start = float(sys.argv[4]); seconds = float(sys.argv[5])
runs, threads, spinning = int(sys.argv[6]), int(sys.argv[7]), sys.argv[8] == "spinning"
use_encoder_threads(EncoderThreads(runs=runs, threads=threads, spinning=spinning))
encoder = Encoder.base(ModelStore(Path(sys.argv[9])))
encoder.query(questions[0])
done = [0] * runs
def ask(run):
    mine = questions[run::runs]
    while time.time() < start:
        time.sleep(0.001)
    while time.time() < start + seconds:
        encoder.query(mine[done[run] % len(mine)]); done[run] += 1
askers = [threading.Thread(target=ask, args=(run,)) for run in range(runs)]
for asker in askers: asker.start()
for asker in askers: asker.join()
print(json.dumps({"questions": sum(done), "seconds": time.time() - start}))
"""

# What embeds beside a server: the library's entry texts through the project's encoder, as a
# build's ask_vectors asset does (with the threads and wait policy every embedding process gets).
EMBEDDING_BUILD = """
import sys
from ask.dense.encoder import Encoder
from ask.model.store import ModelStore
from foundations.settings import load_settings
texts = [line for line in open(sys.argv[1], encoding="utf-8").read().splitlines() if line]
encoder = Encoder.base(ModelStore(load_settings().ask_models))
while True:
    encoder.texts(texts)
"""


def progress(message: str) -> None:
    print(f"[ask-load] {message}", file=sys.stderr, flush=True)


def distinct_questions() -> list[str]:
    """Every labelled question of the inputs, once each."""
    inputs = load_settings().inputs
    labelled = (q.question for split in Split for q in load_questions(inputs, split, LANGUAGES))
    return list(dict.fromkeys(labelled))


# --- 1. threads --------------------------------------------------------------------------------


@dataclass(frozen=True)
class ThreadRun:
    processes: int
    choice: EncoderThreads  # each process's
    ms_per_question: float  # mean over the processes, from a question asked to its vector
    questions_per_second: float  # all processes together


def embedding_processes(questions: Path, processes: int, choice: EncoderThreads, seconds: float) -> ThreadRun:
    """``processes`` processes embedding distinct questions (every ``processes``-th of the file
    ``questions`` each) at once, each with the encoder ``choice``."""
    start = time.time() + 8.0  # every process loaded its model by then
    models = str(load_settings().ask_models)
    waiting = "spinning" if choice.spinning else "sleeping"
    shape = [str(choice.runs), str(choice.threads), waiting, models]
    runs = [
        subprocess.Popen(
            [sys.executable, "-c", EMBEDDER, str(questions), str(n), str(processes), str(start), str(seconds), *shape],
            stdout=subprocess.PIPE,
            text=True,
            cwd=PROJECT_ROOT,
        )
        for n in range(processes)
    ]
    results = [json.loads(run.communicate()[0]) for run in runs]
    return ThreadRun(
        processes,
        choice,
        statistics.mean(1000 * r["seconds"] * choice.runs / r["questions"] for r in results),
        sum(r["questions"] / r["seconds"] for r in results),
    )


def thread_table(runs: list[ThreadRun]) -> str:
    chosen = [r for r in runs if r.choice == EncoderThreads.sharing(r.processes)]
    alone = next(r for r in chosen if r.processes == 1)
    rows = [
        [
            str(r.processes),
            f"{r.choice.runs} x {r.choice.threads}",
            "spinning" if r.choice.spinning else "sleeping",
            "yes" if r in chosen else "",
            f"{r.ms_per_question:.1f}",
            f"{r.questions_per_second:.0f}",
            f"{r.questions_per_second / alone.questions_per_second:.2f}",
        ]
        for r in runs
    ]
    header = ["processes", "questions at once x threads each", "waiting threads", "the choice", "ms a question"]
    return markdown_table([*header, "questions/s, all", "vs the choice, alone"], rows, text_columns=4)


# --- a client of many connections ----------------------------------------------------------------


@dataclass(frozen=True)
class Answer:
    path: str
    status: int
    seconds: float
    retry_after: str | None


async def _exchange(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, path: str) -> tuple[int, dict]:
    writer.write(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
    head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in head[1:] if ": " in line)
    headers = {name.lower(): value for name, value in headers.items()}
    await reader.readexactly(int(headers["content-length"]))
    return int(head[0].split()[1]), headers


async def _keep_asking(port: int, paths: Iterator[str], deadline: float, answers: list[Answer]) -> None:
    """One keep-alive connection asking the next path as soon as the last answer came, until
    ``deadline``; after a 503 it waits what ``Retry-After`` says, as docs/api.md asks clients to."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        while time.monotonic() < deadline:
            path = next(paths)
            started = time.monotonic()
            status, headers = await _exchange(reader, writer, path)
            answers.append(Answer(path, status, time.monotonic() - started, headers.get("retry-after")))
            if status == 200 and isinstance(paths, UnansweredQuestions):
                paths.answered.add(path)
            if status == 503:
                await asyncio.sleep(min(float(headers.get("retry-after", 1)), deadline - time.monotonic()))
    finally:
        writer.close()


def ask_at_once(port: int, streams: dict[str, tuple[Iterator[str], int]], seconds: float) -> dict[str, list[Answer]]:
    """For ``seconds``, each stream's connections asking its paths in turn; the answers by stream."""

    async def run() -> dict[str, list[Answer]]:
        deadline = time.monotonic() + seconds
        answers: dict[str, list[Answer]] = {name: [] for name in streams}
        await asyncio.gather(
            *(
                _keep_asking(port, paths, deadline, answers[name])
                for name, (paths, connections) in streams.items()
                for _ in range(connections)
            )
        )
        return answers

    return asyncio.run(run())


# --- 2. serving ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ServingRun:
    name: str
    answered_per_second: float
    p50_ms: float
    p99_ms: float
    failed: int
    refused: int


@contextmanager
def embedding_beside(texts: list[str], work: Path) -> Iterator[None]:
    """A process embedding ``texts`` without pause, as a build's embedding does, until the block ends."""
    listing = work / "texts.txt"
    listing.write_text("\n".join(text.replace("\n", " ") for text in texts), encoding="utf-8")
    process = subprocess.Popen([sys.executable, "-c", EMBEDDING_BUILD, str(listing)], cwd=PROJECT_ROOT)
    time.sleep(5)  # its model loaded and embedding
    try:
        yield
    finally:
        process.kill()
        process.wait()


def question_paths(questions: list[str]) -> Iterator[str]:
    """Each question once, in turn; never the same twice (each run is a new server, whose memo
    starts empty, so a run may ask what another asked)."""
    for question in questions:
        yield f"/api/public/ask.json?q={quote(question)}"
    raise SystemExit("ran out of distinct questions: lower --seconds")


class UnansweredQuestions:
    """The questions in turn, again and again, but never one already answered: a refused question
    is asked again later, as its client would, and none comes from the memo."""

    def __init__(self, questions: list[str]) -> None:
        self.paths = [f"/api/public/ask.json?q={quote(question)}" for question in questions]
        self.answered: set[str] = set()
        self.position = 0

    def __iter__(self) -> Iterator[str]:
        return self

    def __next__(self) -> str:
        for _ in range(len(self.paths)):
            path = self.paths[self.position % len(self.paths)]
            self.position += 1
            if path not in self.answered:
                return path
        raise SystemExit("every distinct question was answered: lower --seconds")


def serve_and_ask(
    name: str,
    workers: int,
    questions: list[str],
    connections: int,
    seconds: float,
    environ: dict[str, str] | None = None,
) -> ServingRun:
    """``reuse-data serve --workers N`` asked ``questions`` in turn by ``connections`` clients (the
    server of another checkout where ``environ`` says so)."""
    home = Path(environ["REUSE_DATA_HOME"]) if environ else load_settings().home
    progress(f"{name}: {connections} clients for {seconds:g} s")
    with serving(home, "--workers", str(workers), "--access-log", "off", environ=environ) as server:
        answers = ask_at_once(server.port, {"ask": (question_paths(questions), connections)}, seconds)["ask"]
    answered = [a for a in answers if a.status == 200]
    latencies = [a.seconds * 1000 for a in answered]
    refused = sum(a.status == 503 for a in answers)
    return ServingRun(
        name,
        len(answered) / seconds,
        percentile(latencies, 0.5),
        percentile(latencies, 0.99),
        len(answers) - len(answered) - refused,
        refused,
    )


def serving_table(runs: list[ServingRun]) -> str:
    alone = runs[0]
    rows = [
        [
            f"{r.name}{' (baseline)' if r is alone else ''}",
            f"{r.answered_per_second:.1f}",
            f"{r.p50_ms:.0f} / {r.p99_ms:.0f}",
            f"{alone.answered_per_second / r.answered_per_second:.2f}",
            str(r.refused),
            str(r.failed),
        ]
        for r in runs
    ]
    header = ["configuration", "answered/s", "p50 / p99 ms", "time a question vs baseline", "refused", "failed"]
    return markdown_table(header, rows)


# --- 3. flood ------------------------------------------------------------------------------------


def flood(questions: list[str], clients: int, seconds: float) -> str:
    """``clients`` asking distinct questions at once on one worker, and 4 asking for products.json."""
    home = load_settings().home
    with serving(home, "--access-log", "off") as server:
        progress("products.json on the quiet server")
        quiet = ask_at_once(server.port, {"products": (_forever(PRODUCTS), 4)}, seconds)["products"]
        progress(f"flood: {clients} clients asking distinct questions for {seconds:g} s")
        streams = {"ask": (UnansweredQuestions(questions), clients), "products": (_forever(PRODUCTS), 4)}
        answers = ask_at_once(server.port, streams, seconds)
        metrics = server.get("/metrics").body.decode()
    asked = answers["ask"]
    accepted = [a.seconds for a in asked if a.status == 200]
    refusals = [a for a in asked if a.status == 503]
    other = len(asked) - len(accepted) - len(refusals)
    retry_after = sorted({a.retry_after or "missing" for a in refusals})
    counted = [line for line in metrics.splitlines() if line.startswith("reuse_data_http_refused_requests_total")]
    p99_accepted = percentile(accepted, 0.99)
    verdict = "met" if p99_accepted <= ACCEPTED_P99_SECONDS else "**missed**"
    rows = [
        ["questions asked", f"{len(asked)}", ""],
        ["answered (200)", f"{len(accepted)} ({len(accepted) / seconds:.1f}/s)", ""],
        ["refused (503)", f"{len(refusals)} ({len(refusals) / max(1, len(asked)):.0%} of those asked)", ""],
        ["anything else", str(other), ""],
        [
            "time to a 503, p50 / p99",
            f"{1000 * percentile([a.seconds for a in refusals], 0.5):.1f} / "
            f"{1000 * percentile([a.seconds for a in refusals], 0.99):.1f} ms",
            "",
        ],
        ["Retry-After given", ", ".join(retry_after) or "none refused", ""],
        [
            "answered questions, p50 / p99",
            f"{1000 * percentile(accepted, 0.5):.0f} / {1000 * p99_accepted:.0f} ms",
            f"under {ACCEPTED_P99_SECONDS:g} s ({verdict})",
        ],
        [
            "`products.json` meanwhile, p99 (quiet server: baseline)",
            f"{1000 * percentile([a.seconds for a in answers['products']], 0.99):.1f} ms "
            f"({1000 * percentile([a.seconds for a in quiet], 0.99):.1f} ms)",
            "",
        ],
    ]
    table = markdown_table(["flood on one worker", "measured", "target"], rows)
    return table + "\n\nCounted in `/metrics`: " + ("; ".join(f"`{line}`" for line in counted) or "nothing")


def _forever(path: str) -> Iterator[str]:
    while True:
        yield path


# --- the run -------------------------------------------------------------------------------------


def entry_texts() -> list[str]:
    """The library's entry texts in every language, as the build embeds them (from the warehouse)."""
    import duckdb

    from warehouse.contract import ASK_TEXTS_TABLE, MARTS_SCHEMA

    warehouse = load_settings().warehouse_path
    if not warehouse.exists():
        raise SystemExit(f"no warehouse at {warehouse}: run `make build` first")
    with duckdb.connect(str(warehouse), read_only=True) as connection:
        rows = connection.execute(f"SELECT DISTINCT text FROM {MARTS_SCHEMA}.{ASK_TEXTS_TABLE}").fetchall()
    return [text for (text,) in rows]


def previous_checkout(ref: str, work: Path) -> dict[str, str]:
    """A worktree of ``ref`` with its demo built by its own code, in a home of its own: the environment
    that serves it (its packages first on the path, its own vector cache and model store)."""
    folder = work / "previous"
    if folder.exists():
        subprocess.run(["git", "worktree", "remove", "--force", str(folder)], cwd=PROJECT_ROOT, check=False)
    subprocess.run(["git", "worktree", "add", "--force", "--detach", str(folder), ref], cwd=PROJECT_ROOT, check=True)
    environ = {
        "PYTHONPATH": str(folder),
        "REUSE_DATA_HOME": str(folder / "var"),
        "REUSE_DATA_INPUTS": str(folder / "demo"),
        "REUSE_DATA_EMBEDDING_CACHE": str(folder / ".cache" / "vectors.sqlite"),
        "REUSE_DATA_ASK_MODELS": str(folder / ".cache" / "ask-models"),
        "DAGSTER_HOME": str(folder / "var" / "dagster"),
    }
    progress(f"building the demo of {ref} with its own code in {folder}")
    subprocess.run(
        [sys.executable, "-m", "reuse_data.cli", "build"],
        cwd=folder,
        env={**os.environ, **environ},
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return environ


def in_process_ms(questions: list[str]) -> list[float]:
    """Each question's time through the published engine in this process (no HTTP), as one worker
    answers it: the encoder's threads as a lone server's."""
    from ask.engine import AskEngine
    from ask.model.store import ModelStore
    from release.local_store import current_version
    from release.snapshot import load_snapshot

    settings = load_settings()
    snapshot = load_snapshot(settings.snapshots_dir, current_version(settings.snapshots_dir))
    engine = AskEngine.from_snapshot(snapshot.tables, snapshot.connection, ModelStore(settings.ask_models))
    engine.search(questions[0], ASK_DEFAULT_LIMIT)
    timings = []
    for question in questions[1:]:
        started = time.perf_counter()
        engine.search(question, ASK_DEFAULT_LIMIT)
        timings.append(1000 * (time.perf_counter() - started))
    return timings


def one_client(questions: list[str], seconds: float) -> str:
    """One client asking distinct questions one after another over HTTP, beside the same engine in process."""
    over_http = serve_and_ask("1 worker, one client", 1, questions, 1, seconds)
    used = round(over_http.answered_per_second * seconds) + 1
    progress("the same engine in process")
    alone = percentile(in_process_ms(questions[used : used + 400]), 0.5)
    ratio = over_http.p50_ms / alone
    verdict = "met" if ratio <= HTTP_OVER_IN_PROCESS else "**missed**"
    return (
        f"One client asking distinct questions one after another: p50 {over_http.p50_ms:.1f} ms over HTTP "
        f"(p99 {over_http.p99_ms:.1f}), {alone:.1f} ms in process for the next 400 questions: {ratio:.2f}x "
        f"(at most {HTTP_OVER_IN_PROCESS:g}x: {verdict})."
    )


def run(args: argparse.Namespace) -> str:
    questions = distinct_questions()
    progress(f"{len(questions)} distinct questions")
    work = load_settings().home / "run" / "ask-load"
    work.mkdir(parents=True, exist_ok=True)
    listed = work / "questions.json"
    listed.write_text(json.dumps(questions), encoding="utf-8")
    thread_runs = []
    for processes, choice in [
        (1, EncoderThreads(runs=1, threads=cores(), spinning=True)),
        (1, EncoderThreads(runs=1, threads=cores())),
        (1, EncoderThreads(runs=1, threads=1)),
        (1, EncoderThreads.sharing(1)),
        (2, EncoderThreads(runs=1, threads=cores(), spinning=True)),
        (2, EncoderThreads(runs=1, threads=cores())),
        (2, EncoderThreads.sharing(2)),
    ]:
        progress(f"threads: {processes} process(es), each {choice}")
        thread_runs.append(embedding_processes(listed, processes, choice, args.seconds))

    texts = entry_texts()
    lone = one_client(questions[1500:], args.seconds)  # questions the threads table did not embed
    serving_runs = [
        serve_and_ask("1 worker, quiet machine", 1, questions, args.connections, args.seconds),
        serve_and_ask("2 workers, quiet machine", 2, questions, args.connections, args.seconds),
    ]
    if args.previous:
        environ = previous_checkout(args.previous, work)
        name = f"1 worker of {args.previous}, quiet machine"
        serving_runs.append(serve_and_ask(name, 1, questions, args.connections, args.seconds, environ))
    with embedding_beside(texts, work):
        for workers in (1, 2):
            name = f"{workers} worker{'s' if workers > 1 else ''}, a build embedding beside"
            serving_runs.append(serve_and_ask(name, workers, questions, args.connections, args.seconds))
    flooded = flood(questions, args.flood, args.seconds)

    alone, two = serving_runs[0], serving_runs[1]
    before = next((r for r in serving_runs if args.previous and args.previous in r.name), None)
    slowest = max(alone.answered_per_second / r.answered_per_second for r in serving_runs)
    scaled = two.answered_per_second >= WORKERS_AT_LEAST_ONE * alone.answered_per_second
    verdicts = [
        f"- 2 workers answer at least what 1 does: {two.answered_per_second:.1f}/s against "
        f"{alone.answered_per_second:.1f}/s ({'met' if scaled else '**missed**'})",
        f"- no configuration more than {SLOWER_AT_MOST:g}x slower a question than one worker alone: at most "
        f"{slowest:.2f}x ({'met' if slowest <= SLOWER_AT_MOST else '**missed**'})",
    ]
    if before is not None:
        gain = alone.answered_per_second / before.answered_per_second
        verdicts.append(
            f"- one worker answers {gain:.1f}x the distinct questions a second of {args.previous}'s one worker "
            f"({alone.answered_per_second:.1f}/s against {before.answered_per_second:.1f}/s; at least "
            f"{GAIN_OVER_PREVIOUS:g}x: {'met' if gain >= GAIN_OVER_PREVIOUS else '**missed**'}), and two workers "
            f"{two.answered_per_second / alone.answered_per_second:.2f}x one (at least {TWO_WORKERS_AT_LEAST:g}x: "
            f"{'met' if two.answered_per_second >= TWO_WORKERS_AT_LEAST * alone.answered_per_second else '**missed**'})"
        )
    return "\n\n".join(
        [
            f"Machine: {machine()}. Command: `python -m benchmarks.ask_load --seconds {args.seconds:g} "
            f"--connections {args.connections} --flood {args.flood}"
            f"{f' --previous {args.previous}' if args.previous else ''}`. "
            f"{len(questions)} distinct labelled questions, "
            "none asked twice in a run.",
            "Threads: processes embedding distinct questions at once, one question a call, the project's encoder "
            "(ONNX Runtime int8) alone.",
            thread_table(thread_runs),
            f"Serving: `reuse-data serve` over the demo, {args.connections} clients asking distinct questions "
            'in turn; "a build embedding beside" is a process embedding the library\'s texts without pause '
            "through the project's encoder.",
            serving_table(serving_runs),
            "\n".join(verdicts),
            lone,
            f"Flood: {args.flood} clients asking distinct questions at once on one worker, and 4 asking for "
            "`products.json`.",
            flooded,
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.ask_load", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=8, help="each measurement's length (default 8)")
    parser.add_argument("--connections", type=int, default=8, help="clients asking at once when serving (default 8)")
    parser.add_argument("--flood", type=int, default=256, help="clients asking at once in the flood (default 256)")
    parser.add_argument(
        "--previous",
        metavar="REF",
        help="also serve one worker of this commit (a worktree, its demo built by its own code) as the baseline",
    )
    add_record_option(parser)
    args = parser.parse_args()
    if args.seconds <= 0 or min(args.connections, args.flood) < 1:
        parser.error("--seconds, --connections and --flood must be positive")
    report("Ask under load", run(args), args.record)


if __name__ == "__main__":
    main()
