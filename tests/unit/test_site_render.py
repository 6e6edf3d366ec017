"""Rendering pieces of the HTML pages (serve/site.py) that no demo record exercises."""

from serve.site import render_markdown, script_json, translated


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
