"""Calibrating the ask engine's no-match thresholds on labelled questions."""

from serve.ask.evaluation import LabelledQuestion, Ranking, calibrate_min_scores
from serve.ask.index import Entry, Match
from serve.ask.language import LANGUAGES


def ranking(expected: str | None, *scored: tuple[str, float], language: str = "en") -> Ranking:
    item = LabelledQuestion(language, "a question", expected, "test")
    matches = tuple(Match(Entry("answer-library", {"url": url}, False), score, 0.5) for url, score in scored)
    return Ranking(item, language, matches)


def test_the_threshold_falls_midway_between_the_weakest_answer_and_the_strongest_unrelated_match():
    ranked = [
        ranking("/a", ("/a", 20.0)),
        ranking("/b", ("/b", 15.0), ("/a", 9.0)),
        ranking(None, ("/a", 10.0)),
        ranking(None, ("/b", 5.0)),
    ]
    thresholds = calibrate_min_scores(ranked, sure_coverage=0.8)
    assert thresholds["en"] == 12.5
    assert set(thresholds) == set(LANGUAGES)


def test_among_equally_good_thresholds_the_lowest_wins():
    ranked = [
        ranking("/a", ("/a", 20.0)),
        ranking("/b", ("/a", 14.0), ("/b", 13.0)),  # answered wrongly at 13 or at 17: the same top-1
        ranking(None, ("/b", 12.0)),
    ]
    assert calibrate_min_scores(ranked, sure_coverage=0.8)["en"] == 13.0


def test_each_language_gets_its_own_threshold():
    ranked = [
        ranking("/a", ("/a", 10.0), language="zh"),
        ranking(None, ("/a", 4.0), language="zh"),
        ranking("/a", ("/a", 30.0), language="vi"),
        ranking(None, ("/a", 20.0), language="vi"),
    ]
    thresholds = calibrate_min_scores(ranked, sure_coverage=0.8)
    assert (thresholds["zh"], thresholds["vi"]) == (7.0, 25.0)
