"""Screenshots of every page type in English and Arabic, to look at the pages (their bench charts
above all) the way a reader's browser draws them, on a desktop and a phone-sized viewport.

Serves an already built home (default: ``$REUSE_DATA_HOME``, else the checkout's ``var/``, which
`make build` fills; nothing is built here) on a free port with `reuse-data serve`, opens one page of each type (product,
comparison, guide, review, journal post, and the hub) in Debian's headless Chromium driven by
Playwright, and writes full-page PNGs named ``<type>-<lang>-<width>.png`` into
``<home>/screenshots/`` (``var/screenshots/``, which git ignores) unless ``--out`` says otherwise.

    python -m benchmarks.screenshots                      # en and ar, 1280 and 390 px wide
    python -m benchmarks.screenshots --langs en,zh,ar,pa --widths 1280
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from public.openapi import HUB_PATH  # noqa: E402
from tests.support.browser import CHROMIUM, CHROMIUM_ARGS  # noqa: E402
from tests.support.harness import Server, serving  # noqa: E402

PAGE_TYPES = ("product", "comparison", "guide", "review", "post")  # as the change feed names them
PHONE_WIDTH = 390  # narrower than this, a viewport is taken to be a phone's (its pixel ratio is 3)


def page_paths(server: Server) -> dict[str, str]:
    """One path of each page type (the newest in the change feed), and the hub's."""
    changes = server.get("/api/public/changes.json").json()["changes"]
    paths = {kind: next(urlsplit(c["url"]).path for c in changes if c["type"] == kind) for kind in PAGE_TYPES}
    return {**paths, "hub": HUB_PATH}


def capture(server: Server, out: Path, langs: list[str], widths: list[int]) -> list[Path]:
    """Full-page screenshots of each page type in each language at each viewport width."""
    from playwright.sync_api import sync_playwright

    out.mkdir(parents=True, exist_ok=True)
    written = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            for width in widths:
                phone = width <= PHONE_WIDTH
                context = browser.new_context(
                    viewport={"width": width, "height": 844 if phone else 900}, device_scale_factor=3 if phone else 1
                )
                page = context.new_page()
                for kind, path in page_paths(server).items():
                    for lang in langs:
                        page.goto(f"http://127.0.0.1:{server.port}{path}?lang={lang}")
                        target = out / f"{kind}-{lang}-{width}.png"
                        page.screenshot(path=str(target), full_page=True)
                        written.append(target)
                context.close()
        finally:
            browser.close()
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    default_home = Path(os.environ.get("REUSE_DATA_HOME") or ROOT / "var")
    parser.add_argument(
        "--home", type=Path, default=default_home, help=f"a built home to serve (default {default_home})"
    )
    parser.add_argument("--out", type=Path, help="where the PNGs go (default <home>/screenshots)")
    parser.add_argument("--langs", default="en,ar", help="comma-separated language codes (default en,ar)")
    parser.add_argument("--widths", default="1280,390", help="comma-separated viewport widths in px (default 1280,390)")
    args = parser.parse_args()
    if CHROMIUM is None:
        parser.exit(1, "Chromium is not installed: `make setup` installs Debian's chromium (needs root)\n")
    if not (args.home / "snapshots" / "CURRENT").exists():
        parser.exit(1, f"{args.home} has no published snapshot: run `make build` first\n")
    with serving(args.home) as server:
        written = capture(
            server,
            args.out or args.home / "screenshots",
            args.langs.split(","),
            [int(width) for width in args.widths.split(",")],
        )
    print("\n".join(str(path) for path in written))


if __name__ == "__main__":
    main()
