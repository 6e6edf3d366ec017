"""A sitemap entry quotes the page's address once and puts each language's suffix inside the
quotes: what quoting every alternate's own address would give, for addresses that XML must escape
and quote either way."""

from xml.sax.saxutils import quoteattr

import pytest

from public.languages import language_url
from publish.crawler_files import language_alternates, url_entry

LANGUAGES = [
    {"code": "en", "hreflang": "en"},
    {"code": "zh", "hreflang": "zh-Hans"},
    {"code": "pa", "hreflang": "pa-Guru"},
]


@pytest.mark.parametrize(
    "url",
    [
        "https://reviews.example/products/steel-bottle",
        "https://reviews.example/search?q=a&b=<c>",
        'https://reviews.example/guides/"best"-bottles',
        "https://reviews.example/guides/it's-hot",
        'https://reviews.example/guides/"quoted"-and-it\'s',
    ],
)
def test_each_alternate_is_its_own_address_quoted(url: str):
    entry = url_entry({"canonical_url": url, "changed_at": None}, language_alternates(LANGUAGES)).decode()
    for row in LANGUAGES:
        alternate = f"hreflang={quoteattr(row['hreflang'])} href={quoteattr(language_url(url, row['code']))}/>"
        assert alternate in entry
    assert f'hreflang="x-default" href={quoteattr(url)}/>' in entry
