"""Tester tokens: safe to pass on a command line, stored only as a hash."""

from __future__ import annotations

from pathlib import Path

import pytest

from intake.cli import command_upload
from intake.store import TOKEN_PREFIX, IntakeError, IntakeStore
from reuse_data.cli import build_parser


def test_tokens_carry_the_prefix_and_authenticate(tmp_path: Path):
    store = IntakeStore(tmp_path)
    tokens = [store.add_tester(f"Tester {n}") for n in range(50)]
    assert all(token.startswith(TOKEN_PREFIX) for token in tokens)
    assert len(set(tokens)) == len(tokens)
    assert store.authenticate(tokens[7]) == "Tester 7"
    assert store.authenticate(tokens[7].removeprefix(TOKEN_PREFIX)) is None


def test_a_token_whose_random_part_starts_with_a_dash_parses_as_a_value():
    token = TOKEN_PREFIX + "-F4oztvtE-3nEDkkp"  # the shape that broke `--token` before the prefix
    args = build_parser().parse_args(["upload", "sheet.csv", "--token", token])
    assert args.token == token


def test_a_revoked_tester_gets_a_new_token_and_the_old_one_stays_refused(tmp_path: Path):
    store = IntakeStore(tmp_path)
    old = store.add_tester("Eleni Papadaki")
    with pytest.raises(IntakeError, match="revoke it first"):
        store.add_tester("Eleni Papadaki")
    store.revoke_tester("Eleni Papadaki")
    assert store.authenticate(old) is None
    new = store.add_tester("Eleni Papadaki")
    assert store.authenticate(new) == "Eleni Papadaki" and store.authenticate(old) is None
    assert [t.revoked_at for t in store.testers()] == [None]


def test_upload_takes_the_token_from_the_environment_when_not_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
):
    args = build_parser().parse_args(["upload", str(tmp_path / "missing.csv")])
    monkeypatch.delenv("REUSE_DATA_TOKEN", raising=False)
    assert command_upload(args) == 2
    assert "no token; pass --token or set REUSE_DATA_TOKEN" in capfd.readouterr().out
    monkeypatch.setenv("REUSE_DATA_TOKEN", TOKEN_PREFIX + "abc")
    assert command_upload(args) == 2  # past the token, to the next check
    assert f"error: no file {tmp_path / 'missing.csv'}" in capfd.readouterr().out
