"""The README's examples run as written: each ``$ curl`` line of its console blocks is run against a
real server of the demo (what `make run` serves, on this test's port), and every line of output
the README shows under it (but "…", which marks a cut) must be in what the command prints."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from foundations.settings import PROJECT_ROOT
from tests.support.harness import Server

README = PROJECT_ROOT / "README.md"
CONSOLE = re.compile(r"^```console\n(.*?)^```", re.S | re.M)
MAKE_RUN_ADDRESS = "http://127.0.0.1:8000"


def examples() -> list[tuple[str, list[str]]]:
    """(command, the output lines shown for it) for every ``$ `` line of the README's console blocks."""
    found: list[tuple[str, list[str]]] = []
    for block in CONSOLE.findall(README.read_text(encoding="utf-8")):
        for line in block.splitlines():
            if line.startswith("$ "):
                found.append((line[2:], []))
            elif found and line.strip() and line.strip() != "…":
                found[-1][1].append(line)
    return found


def test_the_readme_shows_curl_examples():
    commands = [command for command, _ in examples()]
    assert len([command for command in commands if command.startswith("curl ")]) >= 3, commands


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
@pytest.mark.parametrize(("command", "shown"), examples(), ids=[command[:60] for command, _ in examples()])
def test_a_readme_example_prints_what_the_readme_shows(server: Server, command: str, shown: list[str]):
    assert MAKE_RUN_ADDRESS in command, f"an example not against `make run`'s server: {command}"
    ran = subprocess.run(
        ["bash", "-o", "pipefail", "-c", command.replace(MAKE_RUN_ADDRESS, f"http://127.0.0.1:{server.port}")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    # head closing the pipe early makes curl exit 23 after it printed what head kept.
    assert ran.returncode in (0, 23), ran.stderr
    missing = [line for line in shown if line.strip().rstrip("…").strip() not in ran.stdout]
    assert missing == [], f"shown in the README but not printed:\n{missing}\n--- printed:\n{ran.stdout[:2000]}"
