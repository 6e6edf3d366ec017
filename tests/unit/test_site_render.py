"""Rendering pieces of the HTML pages (serve/html/site.py) that no demo record exercises."""

from serve.html.site import LABELS, long_date, render_markdown, script_json, translated, without_bench_section


def test_markdown_escapes_raw_html_and_refuses_unsafe_links():
    html = render_markdown(
        "<script>alert(1)</script>\n\n[x](javascript:alert(1)) [y](https://example.org) <img src=x onerror=alert(1)>"
    )
    assert "<script" not in html and "<img" not in html
    assert 'href="javascript:' not in html and 'href="https://example.org"' in html


def test_json_for_a_script_element_cannot_close_it():
    assert "</" not in script_json({"name": "</script><script>alert(1)</script>"})


def test_a_translated_field_falls_back_to_english_and_a_plain_one_is_itself():
    assert translated({"en": "Hello", "el": "Γεια"}, "el") == "Γεια"
    assert translated({"en": "Hello", "el": ""}, "el") == "Hello"
    assert translated("Hello", "zh") == "Hello" and translated(None, "zh") == ""


def test_the_bench_section_leaves_the_body_and_the_sections_after_it_stay():
    body = (
        "## How we tested it\n\nBy hand.\n\n## Bench results\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n## Verdict\n\nGood."
    )
    assert without_bench_section(body) == "## How we tested it\n\nBy hand.\n\n## Verdict\n\nGood."
    assert without_bench_section("## Bench results\n\n| a |") == ""
    assert without_bench_section("No table here.") == "No table here."


def test_a_date_is_written_out_in_each_language():
    assert long_date("2026-11-24T01:09:46Z", LABELS["en"]) == "24 November 2026"
    assert long_date("2026-03-05", LABELS["zh"]) == "2026年3月5日"
    assert long_date("2026-05-01", LABELS["el"]) == "1 Μαΐου 2026"
    assert long_date("2026-11-24", LABELS["ar"]) == "24 نوفمبر 2026"
    assert all(len(labels["months"]) == 12 for labels in LABELS.values())
