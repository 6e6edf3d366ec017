"""Choosing the answer language: Accept-Language negotiation and the script of the question."""

import pytest

from ask.lexical.script import script_language
from serve.api.language import AcceptLanguage, code_of, negotiate


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("哪款保温杯泡茶最好？", "zh"),
        ("Ποιο μπουκάλι κρατάει το τσάι ζεστό;", "el"),
        ("أي زجاجة تحافظ على الشاي ساخناً؟", "ar"),
        ("ਕਿਹੜੀ ਬੋਤਲ ਚਾਹ ਗਰਮ ਰੱਖਦੀ ਹੈ?", "pa"),
        ("Bình giữ nhiệt nào giữ trà nóng lâu nhất?", "vi"),
        ("Which bottle keeps tea hot?", "en"),
        ("Is a café mug worth it?", "en"),  # an acute accent alone is not Vietnamese
        ("Bình nào tốt?", "vi"),  # two marked words, no letter of Vietnamese's own
        ("crème brûlée in a food jar?", "en"),  # û is not Vietnamese
        ("Copperleaf 保温杯能放进dishwasher吗", "zh"),  # a Latin brand does not outvote the Han text
        ("Copperleaf ਬੋਤਲ dishwasher ਵਿੱਚ?", "pa"),
        ("12345 ???", "en"),
    ],
)
def test_the_script_of_the_question_decides_last(question, expected):
    assert script_language(question) == expected


@pytest.mark.parametrize(
    ("tag", "code"),
    [
        ("zh-CN", "zh"),
        ("zh-Hans", "zh"),
        ("zh-TW", "zh"),
        ("zh-Hant-HK", "zh"),
        ("pa-IN", "pa"),
        ("pa-Guru", "pa"),
        ("ar-EG", "ar"),
        ("el-GR", "el"),
        ("vi-VN", "vi"),
        ("EN-gb", "en"),
        ("fr-FR", None),
        ("zhx", None),
    ],
)
def test_region_and_script_subtags_fall_back_to_their_language(tag, code):
    assert code_of(tag) == code


@pytest.mark.parametrize(
    ("header", "question", "expected"),
    [
        ("el", "Which bottle?", "el"),  # the header outranks the script
        ("fr;q=1, ar;q=0.9, en;q=0.5", "bottle", "ar"),  # unsupported languages are skipped
        ("en;q=0.4, vi;q=0.8", "bottle", "vi"),  # q-values, not order, rank
        ("vi, en", "bottle", "vi"),  # equal q: the first named wins
        ("zh-TW;q=0.9, el;q=0.3", "bottle", "zh"),  # a regional tag counts for its language
        ("zh-TW;q=0, zh;q=0.8", "bottle", "zh"),  # a refused region does not refuse the language
        ("en;q=0, *", "Which bottle?", "zh"),  # * = anything unnamed: the script (en) is refused, next is zh
        ("*", "Ποιο μπουκάλι;", "el"),  # * picks the question's own language
        ("*;q=0.1, ar", "Ποιο μπουκάλι;", "ar"),
        ("fr-FR, de", "哪款保温杯？", "zh"),  # nothing served: the script decides
        ("", "Bình nào?", "vi"),
        ("el;q=0", "Ποιο μπουκάλι;", "en"),  # refused: not chosen from the script either
        ("el;q=0, en;q=0", "Ποιο μπουκάλι;", "zh"),
        ("en;q=abc, el", "bottle", "el"),  # a malformed q drops that entry only
        ("en;q=1.5, ar;q=0.2", "bottle", "ar"),  # q above 1 is malformed
        (";;;, ,,q=, 🙂", "bottle", "en"),
    ],
)
def test_accept_language_is_negotiated_with_q_values_wildcards_and_refusals(header, question, expected):
    assert negotiate(header, question) == expected


def test_a_header_with_only_unknown_languages_names_nothing():
    assert AcceptLanguage.parse("fr, de;q=0.5").choose(preferred="en") is None
