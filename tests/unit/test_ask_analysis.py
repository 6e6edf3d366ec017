"""Text analysis and ranking of the ask engine, on small hand-made libraries."""

import dataclasses

import pytest

from ask.lexical.analysis import document_terms, han_terms, is_common_word, question_slots
from ask.lexical.index import AskIndex
from benchmarks.lexical_baseline import LexicalBaseline, Thresholds
from tests.support.ask_libraries import SMALL_LIBRARY, index_of, library_answer, recommendation


def terms_of_question(text: str) -> set[str]:
    return {term for slot in question_slots(text) for term, _ in slot.readings}


@pytest.mark.parametrize(
    ("variants", "language"),
    [
        # Arabic: hamza forms, teh marbuta, alef maksura, harakat, tatweel, the article and clitics
        (["الزجاجة", "زجاجه", "زُجاجَة", "بالزجاجة", "زجـــاجة"], "ar"),
        (["إبريق", "ابريق", "الإبريق"], "ar"),
        # Greek: case, accents, final sigma, inflection (Snowball)
        (["μπουκάλι", "ΜΠΟΥΚΑΛΙ", "μπουκαλι", "μπουκάλια"], "el"),
        (["ζεστός", "ζεστοσ", "ΖΕΣΤΟΣ"], "el"),
        # Gurmukhi: nukta, tippi/bindi, addak
        (["ਸ਼ੀਸ਼ਾ", "ਸੀਸਾ"], "pa"),
        (["ਰੱਖਦੀ", "ਰਖਦੀ"], "pa"),
        (["ਇੰਸੂਲੇਟਿਡ", "ਇਂਸੂਲੇਟਿਡ"], "pa"),
        # Gurmukhi: number and gender endings (light stemmer)
        (["ਥੈਲੀ", "ਥੈਲੀਆਂ"], "pa"),
        (["ਬੋਤਲ", "ਬੋਤਲਾਂ"], "pa"),
        # English: Snowball stemming, accents folded
        (["bottles", "bottle", "Bottle"], "en"),
        (["leaking", "leaks", "leak"], "en"),
    ],
)
def test_spelling_variants_analyse_to_the_same_terms(variants, language):
    analysed = {tuple(document_terms(word, language)) for word in variants}
    assert len(analysed) == 1 and analysed != {()}, analysed


def test_stop_words_are_dropped_in_every_language():
    assert document_terms("which is the one for you", "en") == ["one"]
    assert document_terms("και το για με", "el") == []
    assert document_terms("هل في على من", "ar") == []
    assert document_terms("ਦੇ ਦੀ ਨੂੰ ਵਿੱਚ ਹੈ", "pa") == []


def test_han_text_becomes_bigrams_split_at_function_characters():
    assert han_terms("保温杯") == ["保温", "温杯"]
    assert han_terms("茶的杯") == ["茶", "杯"]  # 的 splits the run; lone characters stay unigrams
    assert document_terms("Copperleaf保温杯", "zh") == ["copperleaf", "保温", "温杯"]


def test_vietnamese_keeps_the_exact_syllable_and_its_folded_form():
    assert document_terms("Bình giữ nhiệt", "vi") == ["binh", "bình", "giu", "giữ", "nhiet", "nhiệt"]
    marked = question_slots("bình")[0].readings
    assert marked[0] == ("bình", 1.0) and marked[1][0] == "binh" and marked[1][1] < 1.0
    assert terms_of_question("binh") == {"binh"}


def test_an_unmarked_latin_word_in_a_question_may_be_english_or_vietnamese():
    (slot,) = question_slots("bottles")
    assert dict(slot.readings) == {"bottl": 1.0, "bottles": pytest.approx(0.9)}
    assert question_slots("the which") == []  # English stop words are not re-read as Vietnamese


def test_a_mixed_script_question_is_analysed_word_by_word():
    assert terms_of_question("Copperleaf 保温杯 dishwasher") == {"copperleaf", "保温", "温杯", "dishwash", "dishwasher"}


def urls(index: AskIndex, question: str, thresholds: Thresholds = SMALL_LIBRARY) -> list[str]:
    return [match.entry.row["url"] for match in LexicalBaseline(index, thresholds).search(question, 5)]


def test_a_recommendation_backed_by_bench_evidence_outranks_an_equally_relevant_answer():
    index = index_of(
        library_answer("Which bottle keeps tea hot?", "/answer"),
        recommendation("Which bottle keeps tea hot?", "/with-evidence"),
        recommendation("Which bottle keeps tea hot?", "/without-evidence", figure=None),
    )
    assert urls(index, "bottle for hot tea")[0] == "/with-evidence"


def test_the_exact_vietnamese_spelling_ranks_above_a_folded_match():
    index = index_of(
        library_answer("x", "/bính", vi="bính giữ nhiệt"),
        library_answer("x", "/bình", vi="bình giữ nhiệt"),
    )
    assert urls(index, "bình giữ nhiệt") == ["/bình", "/bính"]
    assert set(urls(index, "binh giu nhiet")) == {"/bình", "/bính"}


def test_a_typo_is_corrected_to_a_word_of_the_library():
    index = index_of(library_answer("Can the bottle go in the dishwasher?", "/dishwasher"))
    assert urls(index, "can my botle go in the dishwahser") == ["/dishwasher"]


def test_a_common_word_the_library_lacks_is_not_corrected_into_one_it_has():
    index = index_of(library_answer("Which fine mesh bag is best?", "/mesh"))
    assert urls(index, "fine mesh bag") == ["/mesh"]
    assert urls(index, "wine bag") == []  # "wine" is a word, not a typo of "fine"
    assert urls(index, "fnie mesh") == ["/mesh"]


@pytest.mark.parametrize(
    ("word", "common"),
    [
        ("wine", True),
        ("mugg", False),
        ("điện", True),  # marked: Vietnamese
        ("dien", False),  # unmarked: read as English
        ("ηλεκτρική", True),
        ("σιλικονένιο", False),
        ("الطائرة", True),
        ("ਫ਼ੋਨ", False),  # no Punjabi word list: every unknown Punjabi word may be a typo
        ("保温杯", False),
    ],
)
def test_common_words_are_known_per_script(word: str, common: bool):
    assert is_common_word(word) is common


def test_a_question_sharing_only_common_words_does_not_match():
    index = index_of(
        library_answer("Can the bottle go in the dishwasher?", "/dishwasher"),
        library_answer("How do I clean a bottle?", "/clean"),
        library_answer("Which bottle is lightest?", "/light"),
    )
    assert urls(index, "How do I fix a leaking kitchen tap?") == []
    assert urls(index, "what is the capital of Peru") == []
    assert urls(index, "") == [] and urls(index, "???") == []


def test_a_question_in_one_language_finds_the_entry_written_in_all():
    index = index_of(
        library_answer(
            "Can the bottle go in the dishwasher?", "/dishwasher", el="Μπαίνει το μπουκάλι στο πλυντήριο πιάτων;"
        ),
        library_answer("How do I clean a bottle?", "/clean", el="Πώς καθαρίζω ένα μπουκάλι;"),
    )
    assert urls(index, "μπουκαλι πλυντηριο πιατων")[0] == "/dishwasher"


BOTTLE_IN_TWO_LANGUAGES = library_answer(
    "Which insulated bottle keeps tea hot all day?", "/bottle", vi="Bình giữ nhiệt nào giữ trà nóng cả ngày?"
)


@pytest.mark.parametrize(
    ("question", "language"),
    [
        ("binh giu nhiet nao giu tra nong", "vi"),  # unmarked, but its words are the library's Vietnamese
        ("Bình nào giữ nóng?", "vi"),
        ("which bottle keeps tea hot", "en"),
        ("can the bottle go in the dishwasher", "en"),  # "can", "the", "go" are Vietnamese syllables too
        ("保温杯 Copperleaf", "zh"),
        ("Ποιο μπουκάλι;", "el"),
    ],
)
def test_the_question_language_sets_the_score_scale(question, language):
    assert index_of(BOTTLE_IN_TWO_LANGUAGES).question_language(question) == language


def test_the_score_threshold_is_the_question_language_s():
    english_only = dataclasses.replace(
        SMALL_LIBRARY, min_score={**SMALL_LIBRARY.min_score, "vi": 1e9}, sure_coverage=2.0
    )
    index = index_of(BOTTLE_IN_TWO_LANGUAGES)
    assert urls(index, "insulated bottle for hot tea", english_only) == ["/bottle"]
    assert urls(index, "binh giu nhiet giu tra nong", english_only) == []
