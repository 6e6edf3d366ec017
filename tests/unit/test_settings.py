"""The settings: each declared once in ``foundations/settings.py``, read from the environment, and
described from that one declaration in ``docs/configuration.md``, the command line's help and
`reuse-data settings`. A variable named anywhere in the docs or code that no setting declares fails here."""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys

import pytest

from foundations.settings import (
    OTHER_VARIABLES,
    PROJECT_ROOT,
    Settings,
    SettingsError,
    load_settings,
    settings_reference,
    variables,
)

VARIABLE = re.compile(r"\bREUSE_DATA_[A-Z_]*[A-Z]\b")
SEARCHED = ("*.py", "*.md", "Makefile", "*.template", "*.yaml", "*.toml")


def test_the_configuration_reference_is_the_declarations():
    written = (PROJECT_ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert written == settings_reference(), "run `reuse-data settings --reference > docs/configuration.md`"


def test_a_default_shown_as_a_value_is_that_value():
    """The reference shows a default in code only where it is the value itself, to be copied; one
    worked out on each machine (the host name) reads as computed, never as a literal."""
    defaults = {item.name: item.default for item in dataclasses.fields(Settings)}
    reference = settings_reference()
    for name, variable in variables():
        shown = variable.default_text
        if variable.computed:
            assert f"| `{variable.name}` | *({shown})* |" in reference
        elif shown not in ("", "none") and not shown.startswith("the checkout's "):
            assert variable.read(variable.name, shown) == defaults[name], variable.name


def test_every_variable_named_in_the_project_is_a_declared_setting():
    declared = {variable.name for _, variable in variables()}
    named: dict[str, set[str]] = {}
    for pattern in SEARCHED:
        for path in PROJECT_ROOT.rglob(pattern):
            parts = path.relative_to(PROJECT_ROOT).parts
            if parts[0] in (".venv", "var", ".cache", "node_modules") or "node_modules" in parts:
                continue
            for name in VARIABLE.findall(path.read_text(encoding="utf-8", errors="replace")):
                named.setdefault(name, set()).add(str(path.relative_to(PROJECT_ROOT)))
    unknown = {name: sorted(paths)[:3] for name, paths in named.items() if name not in declared}
    assert not unknown, f"variables no setting declares: {unknown}"


def test_each_setting_reads_back_what_it_writes():
    environ = {
        "REUSE_DATA_HOME": "/srv/reuse-data",
        "REUSE_DATA_BASE_URL": "https://data.example.org/",
        "REUSE_DATA_TRUSTED_HOSTS": "Mirror.example.net, *.cdn.example.org 192.0.2.7",
        "REUSE_DATA_ACCESS_LOG": "OFF",
        "REUSE_DATA_METRICS": "off",
        "REUSE_DATA_QUESTION_RETENTION_DAYS": "30",
        "REUSE_DATA_DUCKDB_MEMORY_LIMIT": "512 MB",
        "REUSE_DATA_TOKEN": "t0ken",
    }
    settings = load_settings(environ)
    assert settings.base_url == "https://data.example.org"
    assert settings.trusted_hosts == ("mirror.example.net", "*.cdn.example.org", "192.0.2.7")
    assert (settings.access_log, settings.metrics, settings.question_log) == (False, False, True)
    assert (settings.question_retention_days, settings.duckdb_memory_limit) == (30, "512MB")
    assert "t0ken" not in repr(settings)
    written = {variable.name: variable.written(getattr(settings, name)) for name, variable in variables()}
    assert written["REUSE_DATA_TOKEN"] == "(set)"
    del written["REUSE_DATA_TOKEN"]
    assert load_settings(written) == load_settings({**environ, "REUSE_DATA_TOKEN": ""})
    assert load_settings({}) == Settings()


@pytest.mark.parametrize(
    ("variable", "text", "says"),
    [
        ("REUSE_DATA_BASE_URL", "data.example.org", "must be an http:// or https:// address"),
        ("REUSE_DATA_TRUSTED_HOSTS", "https://data.example.org", "not a host name or address"),
        ("REUSE_DATA_TRUSTED_HOSTS", "data.example.org:8443", "without scheme or port"),
        ("REUSE_DATA_METRICS", "yes", "must be one of on, off"),
        ("REUSE_DATA_QUESTION_RETENTION_DAYS", "-1", "must be a whole number"),
    ],
)
def test_a_value_the_service_cannot_use_is_refused_naming_the_variable_and_its_default(variable, text, says):
    with pytest.raises(SettingsError, match=re.escape(says)) as refusal:
        load_settings({variable: text})
    assert str(refusal.value).startswith(variable) and "unset it for the default" in str(refusal.value)


def test_the_answered_hosts_are_the_base_urls_the_loopbacks_and_the_listed():
    settings = load_settings(
        {"REUSE_DATA_BASE_URL": "https://data.example.org", "REUSE_DATA_TRUSTED_HOSTS": "a.example"}
    )
    assert settings.answered_hosts == ("data.example.org", "localhost", "127.0.0.1", "::1", "a.example")


def test_the_command_line_shows_the_settings_and_their_reference():
    run = [sys.executable, "-m", "reuse_data.cli"]
    shown = subprocess.run([*run, "settings"], capture_output=True, text=True, env={"REUSE_DATA_METRICS": "off"})
    assert "REUSE_DATA_METRICS=off\n" in shown.stdout and "REUSE_DATA_ACCESS_LOG=json  (default)" in shown.stdout
    helped = subprocess.run([*run, "--help"], capture_output=True, text=True).stdout
    assert all(variable.name in helped for _, variable in variables())
    assert all(names in helped for names, _ in OTHER_VARIABLES)
    refused = subprocess.run([*run, "settings"], capture_output=True, text=True, env={"REUSE_DATA_METRICS": "yes"})
    assert refused.returncode == 2 and refused.stderr.startswith("error: REUSE_DATA_METRICS must be one of on, off")
