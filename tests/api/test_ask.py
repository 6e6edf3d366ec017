"""ask.json on a real server over the demo build, and the engine's accuracy on the labelled set."""

from __future__ import annotations

import csv
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import pytest

from ask.decision.fusion import Fusion
from ask.decision.verdict import Refusal
from ask.engine import AskEngine
from ask.evaluation import fit_on_dev, run, score, score_by_kind
from ask.lexical.script import WORD
from ask.model.store import ModelStore
from benchmarks.lexical_baseline import LexicalBaseline
from foundations.settings import load_settings
from inputs.ask_inputs import FITTED_SPLIT, HELD_OUT_SPLIT, load_questions
from release.local_store import current_version
from release.snapshot import load_snapshot
from tests.api.conftest import BASE_URL
from tests.conftest import DEMO, PROJECT_ROOT
from tests.support.harness import Server
from warehouse.reference_data import LANGUAGES

FALLBACK = f"{BASE_URL}/guides/start-here"
SEEDS = PROJECT_ROOT / "sql" / "seeds"

# Regressions of the engine trained on the queries (issue 40, benchmarks/RESULTS.md): questions that
# name only a category give each of its entries a probability under the decision's threshold, so
# nothing answers. Strict: a fix makes these fail until the mark goes.
BARE_KEYWORD = "a bare category keyword: its best entry's probability (0.18) is under the threshold (0.55)"
BARE_BEST_X = "a bare 'best X' in Chinese: its best entry's probability (0.34) is under the threshold (0.55)"


# The regression test fails below these: the test splits' figures of the engine as shipped with the
# encoder trained on the demo's library (benchmarks/RESULTS.md, 2026-11-27), less a little for
# arithmetic that differs between machines. They sit under the targets (``benchmarks/ask_engine.py``),
# which the engine does not reach yet: raise them as it improves, never lower them.
@dataclass(frozen=True)
class Floors:
    top1_overall: float
    top1_per_language: float
    false_negative_rate: float  # at most
    false_positive_rate: float  # at most
    top1_per_kind: float = 0.0


QUERY_KINDS = {"product", "keywords", "constraint", "problem", "spoken", "unmarked", "no-match"}
FLOORS = {
    "questions": Floors(0.77, 0.73, 0.19, 0.03, top1_per_kind=0.70),
    "queries": Floors(0.75, 0.67, 0.19, 0.10, top1_per_kind=0.52),
}

# A labelled question may not copy this many consecutive words of an entry (Han: characters).
COPIED_RUN = {language: 7 if language == "zh" else 4 for language in LANGUAGES}
# In Chinese, a run of Latin letters or digits (a brand, a model, a size) counts as one word.
_CHINESE_WORDS = re.compile(r"[a-z0-9]+|[^\W\d_a-z]")


def words(text: str, language: str) -> list[str]:
    """The words of ``text`` as the copy rule counts them: in Chinese each Han character, and a
    Latin name or a number as one word."""
    text = unicodedata.normalize("NFC", text).lower()
    if language == "zh":
        return _CHINESE_WORDS.findall(text)
    return WORD.findall(text)


def runs(sequence: list[str], length: int) -> set[tuple[str, ...]]:
    """Every run of ``length`` consecutive words of ``sequence``."""
    return {tuple(sequence[i : i + length]) for i in range(len(sequence) - length + 1)}


def ask(server: Server, question: str, query: str = "", headers: dict[str, str] | None = None) -> dict:
    reply = server.get(f"/api/public/ask.json?q={quote(question)}{query}", headers)
    assert reply.status == 200, reply.body
    return reply.json()


def test_the_answer_is_the_first_result_and_cite_its_url(server: Server):
    body = ask(server, "Which insulated bottle keeps tea hot all day?")
    results = body["results"]
    assert results and len(results) <= 5
    assert body["answer"] == results[0]["answer"] and body["cite"] == results[0]["url"]
    confidences = [r["confidence"] for r in results]
    assert confidences[0] == 1 and all(c < 1 for c in confidences[1:])
    assert confidences == sorted(confidences, reverse=True)
    first = results[0]
    assert first["type"] == "recommendation" and {"evidence", "product"} <= set(first)
    assert first["url"] == f"{BASE_URL}/guides/best-insulated-bottles"


def test_supported_languages_name_each_language_and_its_hreflang(server: Server):
    languages = ask(server, "bottle")["supported_languages"]
    assert [lang["code"] for lang in languages] == list(LANGUAGES)
    assert {lang["code"]: lang["hreflang"] for lang in languages}["zh"] == "zh-Hans"
    assert {lang["code"]: lang["native"] for lang in languages}["el"] == "Ελληνικά"


@pytest.mark.parametrize(
    ("question", "expected_language"),
    [
        ("Which insulated bottle keeps tea hot all day?", "en"),
        ("哪款保温杯能让茶从早到晚一直热？", "zh"),
        ("Ποιο θερμός κρατάει το τσάι ζεστό όλη μέρα;", "el"),
        ("Bình giữ nhiệt nào giữ trà nóng cả ngày?", "vi"),
        ("أي قارورة معزولة تحافظ على الشاي ساخنًا طوال اليوم؟", "ar"),
        ("ਕਿਹੜੀ ਇੰਸੂਲੇਟਡ ਬੋਤਲ ਚਾਹ ਨੂੰ ਸਾਰਾ ਦਿਨ ਗਰਮ ਰੱਖਦੀ ਹੈ?", "pa"),
    ],
)
def test_a_question_in_each_language_is_answered_in_it_from_the_same_entry(server: Server, question, expected_language):
    body = ask(server, question)
    assert body["language"] == expected_language
    assert body["cite"] == f"{BASE_URL}/guides/best-insulated-bottles"
    entry = body["results"][0]
    english = ask(server, question, "&lang=en")  # cross-language: same entry, answered in English
    assert english["language"] == "en" and english["cite"] == body["cite"]
    assert english["results"][0]["url"] == entry["url"]
    if expected_language != "en":
        assert english["answer"] != body["answer"]


def test_accept_language_and_lang_take_precedence_in_that_order(server: Server):
    question = "Which insulated bottle keeps tea hot all day?"
    assert ask(server, question, headers={"Accept-Language": "el-GR, en;q=0.5"})["language"] == "el"
    assert ask(server, question, "&lang=vi", {"Accept-Language": "el-GR"})["language"] == "vi"
    assert ask(server, question, headers={"Accept-Language": "fr-FR, de"})["language"] == "en"
    assert ask(server, "哪款保温杯最好？", headers={"Accept-Language": "zh;q=0, pa-Guru;q=0.4"})["language"] == "pa"
    reply = server.get("/api/public/ask.json?q=bottle", {"Accept-Language": "ar"})
    assert "accept-language" in reply.headers["vary"].lower()


@pytest.mark.parametrize(
    ("language", "question"),
    [
        ("en", "What is the capital of Peru?"),
        ("zh", "明天北京会下雨吗？"),
        ("el", "Ποιος κέρδισε το πρωτάθλημα ποδοσφαίρου πέρσι;"),
        ("vi", "Giá vàng hôm nay bao nhiêu?"),
        ("ar", "ما هي عاصمة البيرو؟"),
        ("pa", "ਭਾਰਤ ਦੀ ਰਾਜਧਾਨੀ ਕਿਹੜੀ ਹੈ?"),
    ],
)
def test_no_match_in_each_language_is_200_with_the_fallback(server: Server, language, question):
    body = ask(server, question)
    assert body["language"] == language
    assert (body["answer"], body["results"]) == (None, [])
    expected = FALLBACK if language == "en" else f"{FALLBACK}?lang={language}"
    assert body["cite"] == body["fallback"]["url"] == expected
    assert body["fallback"]["note"]


def test_limit_defaults_to_five_and_is_clamped_at_twenty(server: Server):
    question = "Which insulated bottle keeps tea hot all day?"
    assert len(ask(server, question)["results"]) == 5
    assert len(ask(server, question, "&limit=999")["results"]) == 20
    assert ask(server, question, "&limit=0")["results"] == []


# --- the engine on the demo, and its accuracy on the labelled set (demo/ask_questions/) --------


@pytest.fixture(scope="module")
def demo_engine(demo_home: Path) -> AskEngine:
    store = demo_home / "snapshots"
    snapshot = load_snapshot(store, current_version(store))
    return AskEngine.from_snapshot(snapshot.tables, snapshot.connection, ModelStore(load_settings().ask_models))


def first_id(engine: AskEngine, question: str) -> str | None:
    matches = engine.search(question, 5)
    return matches[0].entry.id if matches else None


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("how do I get coffee smell out of my flask", "insulated-bottles-01"),  # flask: no word of the entry's
        pytest.param(  # 保温水瓶 for the library's 保温杯
            "最好的保温水瓶是哪一款？",
            "insulated-bottles-cold-summer-hike",
            marks=pytest.mark.xfail(strict=True, reason=BARE_BEST_X),
        ),
        ("ਚਾਹ ਸਾਰਾ ਦਿਨ ਗਰਮ ਰੱਖਣ ਵਾਲਾ ਥਰਮਸ", "insulated-bottles-hot-tea-workday"),  # thermos, in Gurmukhi
    ],
)
def test_the_fused_engine_finds_what_the_lexical_engine_alone_cannot(
    demo_engine: AskEngine, question: str, expected: str
):
    assert first_id(demo_engine, question) == expected
    assert [m.entry.id for m in LexicalBaseline(demo_engine.lexical).search(question, 1)] != [expected]


@pytest.mark.parametrize("question", ["refillable nespresso pods", "what's the weather in Lisbon tomorrow"])
def test_a_question_the_library_does_not_cover_gets_no_match(demo_engine: AskEngine, question: str):
    assert demo_engine.search(question, 5) == []


def test_a_punjabi_question_answered_in_english_finds_the_entry_a_punjabi_speaker_meant(server: Server):
    question = "ਚਾਹ ਸਾਰਾ ਦਿਨ ਗਰਮ ਰੱਖਣ ਵਾਲਾ ਥਰਮਸ"  # "a thermos that keeps tea hot all day"
    english, punjabi = ask(server, question, "&lang=en"), ask(server, question)
    assert (english["language"], punjabi["language"]) == ("en", "pa")
    assert english["cite"] == punjabi["cite"] == f"{BASE_URL}/guides/best-insulated-bottles"
    assert (
        english["results"][0]["question"] == "Which insulated bottle keeps tea hot from breakfast until late afternoon?"
    )


def test_the_labelled_sets_are_large_enough_and_split_once():
    dev, test = load_questions(DEMO, FITTED_SPLIT, LANGUAGES), load_questions(DEMO, HELD_OUT_SPLIT, LANGUAGES)
    for language in LANGUAGES:
        questions = [q for q in dev + test if q.language == language and q.labelled_set == "questions"]
        assert sum(bool(q.expected) for q in questions) >= 80, language
        assert sum(not q.expected for q in questions) >= 25, language
        assert any(q.language == language for q in test) and any(q.language == language for q in dev)
        # The queries: at least 20 of each kind per language in the test part, which nothing is fitted on.
        kinds = Counter(q.kind for q in test if q.language == language and q.labelled_set == "queries")
        assert set(kinds) == QUERY_KINDS and min(kinds.values()) >= 20, (language, kinds)
    assert not {q.question for q in dev} & {q.question for q in test}


def test_labels_name_entries_of_the_library_and_no_question_copies_one(demo_engine: AskEngine):
    ids = {entry.id for entry in demo_engine.entries}
    questions = load_questions(DEMO, FITTED_SPLIT, LANGUAGES) + load_questions(DEMO, HELD_OUT_SPLIT, LANGUAGES)
    assert {label for q in questions for label in q.expected} <= ids
    for language in LANGUAGES:
        run = COPIED_RUN[language]
        library = set()
        for entry in demo_engine.entries:
            for field in ("question", "scenario", "answer"):
                text = (entry.row.get(field) or {}).get(language)
                if text:
                    library |= runs(words(text, language), run)
        copied = [
            q.question for q in questions if q.language == language and runs(words(q.question, language), run) & library
        ]
        assert copied == [], f"{language}: questions copying {run} consecutive words of an entry"


def test_the_published_decision_is_the_fit_of_the_dev_split(demo_engine: AskEngine):
    unfitted = AskEngine(demo_engine.lexical, demo_engine.vectors, demo_engine.encoder, Fusion.unfitted())
    shipped = demo_engine.fusion
    refitted = fit_on_dev(unfitted, load_questions(DEMO, FITTED_SPLIT, LANGUAGES), shipped.fitted_on)
    assert refitted.fitted_on == shipped.fitted_on
    for name, weight in {**shipped.ranking, **shipped.decision, **shipped.decision_bias}.items():
        again = {**refitted.ranking, **refitted.decision, **refitted.decision_bias}[name]
        assert again == pytest.approx(weight, rel=1e-3, abs=1e-3), name
    assert refitted.threshold == pytest.approx(shipped.threshold, abs=1e-3)


@pytest.mark.parametrize("labelled_set", list(FLOORS))
def test_accuracy_on_the_test_split_does_not_fall_below_its_floors(demo_engine: AskEngine, labelled_set: str):
    floors = FLOORS[labelled_set]
    outcomes = run(demo_engine.search, load_questions(DEMO, HELD_OUT_SPLIT, LANGUAGES, sets=(labelled_set,)))
    *by_language, overall = score(outcomes)
    assert overall.top1 >= floors.top1_overall, overall
    assert all(s.top1 >= floors.top1_per_language for s in by_language), [(s.label, s.top1) for s in by_language]
    assert overall.false_negative_rate <= floors.false_negative_rate, overall
    assert overall.false_positive_rate <= floors.false_positive_rate, overall
    by_kind = [s for s in score_by_kind(outcomes)[:-1] if s.answerable]
    assert all(s.top1 >= floors.top1_per_kind for s in by_kind), [(s.label, s.top1) for s in by_kind]


# --- regressions of the trained encoder ---------------------------------------------------------

BEST_INSULATED_BOTTLE = {
    "en": "which is the best insulated bottle",
    "zh": "哪款保温杯最好？",
    "el": "Ποιο είναι το καλύτερο θερμός νερού;",
    "vi": "bình giữ nhiệt nào tốt nhất?",
    "ar": "ما هي أفضل زجاجة معزولة حرارياً؟",
    "pa": "ਸਭ ਤੋਂ ਵਧੀਆ ਇੰਸੂਲੇਟਿਡ ਬੋਤਲ ਕਿਹੜੀ ਹੈ?",
}


@pytest.mark.parametrize(
    ("keyword", "category"),
    [
        pytest.param("bottle", "insulated-bottles", marks=pytest.mark.xfail(strict=True, reason=BARE_KEYWORD)),
        ("french press", "french-presses"),
        ("shampoo bar", "shampoo-bars"),
    ],
)
def test_a_keyword_about_a_covered_product_type_gets_results(demo_engine: AskEngine, keyword: str, category: str):
    matches = demo_engine.search(keyword, 20)
    assert len(matches) > 5, [m.entry.id for m in matches]
    assert matches[0].entry.row["category_slug"] == category, [m.entry.id for m in matches]


@pytest.mark.xfail(strict=True, reason=BARE_KEYWORD)
def test_a_one_word_question_lists_more_than_five_entries(server: Server):
    assert len(ask(server, "bottle", "&limit=20")["results"]) > 5


# Known misses of the trained engine (benchmarks/RESULTS.md): a bare "which is the best X" in Chinese,
# Greek and Punjabi gives its best insulated bottle a probability under the decision's threshold
# (0.39, 0.17 and 0.44 against 0.55: no entry answers a question with no scenario), and in Vietnamese
# the travel mugs come first. Punjabi passed before the queries were trained on. Strict: a fix makes
# these fail until the mark goes.
KNOWN_MISSES = {"zh", "el", "vi", "pa"}


@pytest.mark.parametrize(
    "language",
    [
        pytest.param(lang, marks=pytest.mark.xfail(strict=True, reason="a known miss"))
        if lang in KNOWN_MISSES
        else lang
        for lang in LANGUAGES
    ],
)
def test_the_best_insulated_bottle_is_found_in_every_language(demo_engine: AskEngine, language: str):
    matches = demo_engine.search(BEST_INSULATED_BOTTLE[language], 5)
    assert matches and matches[0].entry.id.startswith("insulated-bottles"), [m.entry.id for m in matches]


def test_the_uncovered_topics_get_no_answer(demo_engine: AskEngine):
    with SEEDS.joinpath("ask_uncovered_topics.csv").open(encoding="utf-8", newline="") as seed:
        questions = [row["question"] for row in csv.DictReader(seed)]
    answered = [q for q in questions if demo_engine.search(q, 5)]
    assert len(questions) > 300 and answered == []


def test_answered_or_not_the_ranking_names_the_entry_that_came_closest_and_why_it_fell_short(demo_engine: AskEngine):
    threshold = demo_engine.fusion.threshold
    cited = demo_engine.rank("how do I get coffee smell out of my flask", 5)
    assert cited.matches and cited.nearest == cited.matches[0].entry
    assert cited.refusal is None and cited.probability >= threshold
    with SEEDS.joinpath("ask_uncovered_topics.csv").open(encoding="utf-8", newline="") as seed:
        questions = [row["question"] for row in csv.DictReader(seed)][:60]
    refused = [demo_engine.rank(question, 5) for question in [*questions, "what's the weather in Lisbon tomorrow"]]
    assert all(not r.matches and r.nearest is not None for r in refused)
    assert {r.refusal for r in refused} == {Refusal.BELOW_THRESHOLD, Refusal.UNCOVERED_TOPIC}  # both happen on the demo
    assert all(r.probability < threshold for r in refused if r.refusal == Refusal.BELOW_THRESHOLD)
    assert all(r.probability >= threshold for r in refused if r.refusal == Refusal.UNCOVERED_TOPIC)
