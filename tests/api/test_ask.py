"""ask.json on a real server over the demo build, and the engine's accuracy on the labelled set."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import pytest

from benchmarks.harness import Server
from serve.ask.evaluation import (
    FLOOR_FALSE_POSITIVE_RATE,
    FLOOR_TOP1_OVERALL,
    FLOOR_TOP1_PER_LANGUAGE,
    load_questions,
    run,
    score,
)
from serve.ask.index import AskIndex
from serve.ask.language import LANGUAGES
from serve.snapshot import load_snapshot
from tests.api.conftest import BASE_URL
from warehouse.snapshots import current_version

FALLBACK = f"{BASE_URL}/guides/start-here"


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
    assert len(ask(server, "bottle")["results"]) == 5
    assert len(ask(server, "bottle", "&limit=999")["results"]) == 20
    assert ask(server, "bottle", "&limit=0")["results"] == []


# --- accuracy on the labelled set (tests/ask_eval/) ------------------------------------------


@pytest.fixture(scope="module")
def demo_index(demo_home: Path) -> AskIndex:
    store = demo_home / "snapshots"
    tables = load_snapshot(store, current_version(store)).tables
    return AskIndex.from_tables(tables["recommendations"], tables["answers"], tables["categories"])


def test_the_labelled_set_is_large_enough_in_every_language():
    questions = load_questions()
    for language in LANGUAGES:
        own = [q for q in questions if q.language == language]
        assert sum(q.expected is not None for q in own) >= 30, language
        assert sum(q.expected is None for q in own) >= 20, language


def test_accuracy_on_the_labelled_set_does_not_fall_below_its_floors(demo_index: AskIndex):
    outcomes = run(demo_index, load_questions())
    *by_language, overall = score(outcomes)
    misses = [
        f"{o.item.language}: {o.item.question!r} -> {o.paths[:1]} (expected {o.item.expected})"
        for o in outcomes
        if (o.rank != 1 if o.item.expected else bool(o.paths))
    ]
    assert overall.top1 >= FLOOR_TOP1_OVERALL, misses
    assert all(s.top1 >= FLOOR_TOP1_PER_LANGUAGE for s in by_language), [(s.label, s.top1) for s in by_language]
    assert overall.false_positive_rate <= FLOOR_FALSE_POSITIVE_RATE, misses
