"""A real demo build (``demo_home``, tests/conftest.py) served by a real uvicorn (`reuse-data
serve`) on a free loopback port, one per test process.

Tests that publish snapshots or need a larger one work on a copy of its home, with a server of
their own.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.browser import CHROMIUM, CHROMIUM_ARGS
from tests.support.harness import Server, serving

BASE_URL = "http://127.0.0.1:8000"  # REUSE_DATA_BASE_URL default: what cited URLs carry


@pytest.fixture(scope="session")
def server(demo_home: Path) -> Iterator[Server]:
    with serving(demo_home) as running:
        yield running


@pytest.fixture(scope="module")
def browser() -> Iterator:
    """Headless Chromium (Debian's, driven by Playwright), one per module of browser tests."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield launched
        launched.close()
