"""The hub in headless Chromium: ask a question in its search box, read the answer, follow the
cited link to a page that opens. Cited URLs carry the published base URL
(http://127.0.0.1:8000); the browser reaches it on the test server's port through a route, as
a reverse proxy in front of the server would."""

from __future__ import annotations

from urllib.parse import quote

import pytest

from public.openapi import HUB_PATH
from tests.api.conftest import BASE_URL
from tests.support.browser import CHROMIUM
from tests.support.harness import Server

pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="Chromium is not installed: `make setup` installs Debian's chromium (needs root)"
)


@pytest.fixture
def hub(browser, server: Server):
    context = browser.new_context()
    served = f"http://127.0.0.1:{server.port}"
    context.route(f"{BASE_URL}/**", lambda route: route.continue_(url=route.request.url.replace(BASE_URL, served)))
    page = context.new_page()
    page.goto(BASE_URL + HUB_PATH)
    yield page
    context.close()


def ask(page, question: str) -> tuple[str, str]:
    """Ask in the search box; the answer shown and the cited URL."""
    page.fill("#q", question)
    page.click("#ask button[type=submit]")
    page.wait_for_selector("#cite")
    return page.text_content("#reply .answer"), page.get_attribute("#cite", "href")


def test_the_hub_answers_a_question_and_its_cited_link_opens(hub, server: Server):
    question = "Which insulated bottle keeps tea hot all day?"
    expected = server.get(f"/api/public/ask.json?q={quote(question)}").json()
    answer, cited = ask(hub, question)
    assert answer == expected["answer"] and cited == expected["cite"] != expected["fallback"]["url"]
    with hub.expect_navigation() as navigation:
        hub.click("#cite")
    assert navigation.value.status == 200 and hub.url == cited
    assert hub.get_attribute("link[rel=canonical]", "href") == cited
    assert hub.text_content("h1")


def test_the_hub_in_greek_falls_back_to_itself_for_an_unrelated_question(hub, server: Server):
    hub.goto(f"{BASE_URL}{HUB_PATH}?lang=el")
    assert hub.get_attribute("html", "lang") == "el"
    answer, cited = ask(hub, "quantum chromodynamics lattice gauge")
    expected = server.get("/api/public/ask.json?lang=el&q=quantum+chromodynamics+lattice+gauge").json()
    assert cited == f"{BASE_URL}{HUB_PATH}?lang=el" and answer == expected["fallback"]["note"]
