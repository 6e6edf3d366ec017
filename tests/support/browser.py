"""Debian's headless Chromium as the browser tests and `make screenshots` launch it (through Playwright)."""

from __future__ import annotations

import shutil

CHROMIUM = shutil.which("chromium")
# As root and on a closed network: no sandbox, and none of Chromium's background connections.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
