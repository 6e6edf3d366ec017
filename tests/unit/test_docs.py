"""The docs state what the code does. The limits are declared once (``public/openapi.py``,
``foundations/ask_limits.py``, ``foundations/http_limits.py``, ``serve/api/admission.py``) and
checked here against what the docs tell a reader; every make target, command, flag (bracketed
too), code name, class, route, path and link the docs write must exist, a name said to be in a
file must be there, and a list of a folder's modules must be whole (``tests.support.doc_facts``);
every target and command is documented; the README is read in five minutes."""

from __future__ import annotations

import re
from collections import Counter

from foundations.ask_limits import ASK_DEFAULT_LIMIT, ASK_MAX_LIMIT
from foundations.http_limits import MAX_HEAD_BYTES
from foundations.settings import ASK_TRAINING_CHOICES, PROJECT_ROOT
from public.openapi import (
    BENCH_DEFAULT_LIMIT,
    BENCH_MAX_LIMIT,
    MAX_FILTER_LENGTH,
    MAX_PATH_LENGTH,
    MAX_Q_LENGTH,
)
from serve.api.admission import MAX_WAIT_SECONDS
from tests.support.doc_facts import SPAN, commands, documents, make_targets, problems, problems_in

README_MAX_BYTES = 12 * 1024


def test_the_api_docs_state_the_declared_limits():
    api = (PROJECT_ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    rows = [
        "| `ASK_DEFAULT_LIMIT`, `ASK_MAX_LIMIT` (`foundations/ask_limits.py`) | "
        f"{ASK_DEFAULT_LIMIT}, {ASK_MAX_LIMIT} |",
        f"| `BENCH_DEFAULT_LIMIT`, `BENCH_MAX_LIMIT` | {BENCH_DEFAULT_LIMIT}, {BENCH_MAX_LIMIT} |",
        f"| `MAX_Q_LENGTH` | {MAX_Q_LENGTH} characters |",
        f"| `MAX_PATH_LENGTH` | {MAX_PATH_LENGTH} characters |",
        f"| `MAX_FILTER_LENGTH` | {MAX_FILTER_LENGTH} characters |",
        f"| `MAX_HEAD_BYTES` (`foundations/http_limits.py`) | {MAX_HEAD_BYTES // 1024} KiB |",
    ]
    assert [row for row in rows if row not in api] == []


def test_the_readme_states_the_declared_bench_limits():
    readme = (PROJECT_ROOT / "README.md").read_text(encoding="utf-8")
    assert f"`limit` (default {BENCH_DEFAULT_LIMIT}, max {BENCH_MAX_LIMIT})" in readme


def test_the_api_docs_state_the_admission_wait():
    api = (PROJECT_ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    assert f"would be answered within {MAX_WAIT_SECONDS:g} s" in api


def test_every_fact_the_docs_state_is_in_the_code():
    found = problems()
    assert not found, "the docs name what the code does not have:\n" + "\n".join(map(str, found))


def test_a_name_the_code_does_not_have_is_caught():
    """The check itself: each kind of fact, written wrong once, is reported. (The missing class's
    name is put together here: written whole, this file would be the code that has it.)"""
    missing_class = "NoSuch" + "SnapshotMemo"
    probe = (
        "Run `make deploy-all` or `reuse-data serve --turbo`, then `reuse-data frobnicate`; "
        f"`{missing_class}` and `release.folder.NO_SUCH_NAME` hold it, in `publish/no_such_module.py`; "
        "see [the guide](no-such-guide.md) and [its part](docs/api.md#no-such-heading).\n\n"
        "```sh\nmake no-such-target\nreuse-data build --no-such-flag\n```\n"
    )
    found = problems_in(probe, PROJECT_ROOT / "README.md")
    expected = ("deploy-all", "--turbo", "frobnicate", missing_class, "NO_SUCH_NAME", "no_such_module.py")
    expected += ("no-such-guide.md", "#no-such-heading", "no-such-target", "--no-such-flag")
    assert [word for word in expected if not any(word in problem for problem in found)] == [], found
    assert (
        problems_in(
            "`make test`, `reuse-data build --inputs DIR`, `foundations.settings.load_settings`",
            PROJECT_ROOT / "README.md",
        )
        == []
    )


def _caught(wrong: str, right: str) -> tuple[list[str], list[str]]:
    """The problems found in a wrong fact and in a right one of the same kind."""
    return problems_in(wrong, PROJECT_ROOT / "README.md"), problems_in(right, PROJECT_ROOT / "README.md")


def test_a_bracketed_flag_the_command_lacks_is_caught():
    wrong, right = _caught(
        "`reuse-data questions` takes `[--turbo]`; `reuse-data questions [--days 7] [--json]`.",
        "`reuse-data questions` takes `[--csv]`; `reuse-data questions [--days 7] [--limit 50] [--csv]`.",
    )
    assert wrong == ["`reuse-data questions` has no option --turbo", "`reuse-data questions` has no option --json"]
    assert right == []


def test_a_route_the_apps_do_not_answer_is_caught():
    wrong, right = _caught(
        "Ask `/ask.json`, or download from `/release/{version}/...`.",
        "Ask `/api/public/ask.json`, download from `/releases/{version}/...` or `/releases/<version>/`, "
        "read `/guides/start-here`, list `/api/intake/receipts/{receipt_id}`, under `/api/public/`.",
    )
    assert [problem.split(":")[0] for problem in wrong] == ["`/ask.json`", "`/release/{version}/...`"]
    assert right == []


def test_a_class_the_code_only_mentions_is_caught():
    """A class renamed away leaves its old name in comments (as this one: RenamedAwayStore), where
    the code words alone would still find it; a class's name must be defined."""
    wrong, right = _caught("`RenamedAwayStore` keeps models.", "`ModelStore` keeps models; `PieceTable` its pieces.")
    assert wrong == ["`RenamedAwayStore`: the code defines no such class or name"]
    assert right == []


def test_a_name_said_to_be_in_a_file_it_is_not_in_is_caught():
    wrong, right = _caught(
        "`PUBLISH_CHECKS` is in `warehouse/raw_bench.py`; `release/folder.py`'s `DEFAULT_KEEP`; "
        "`release/manifest.py` (`verify`, `link_unchanged`); `SnapshotHolder` (`release/folder.py`).",
        "`PUBLISH_CHECKS` is in `warehouse/contract.py`; `release/local_store.py`'s `DEFAULT_KEEP`; "
        "`release/local_store.py` (`link_unchanged`, `prune`); `SnapshotHolder` (`release/snapshot.py`).",
    )
    said = [problem.split(" is said")[0] for problem in wrong]
    assert said == ["`PUBLISH_CHECKS`", "`SnapshotHolder`", "`DEFAULT_KEEP`", "`link_unchanged`"]
    assert right == []


def test_a_list_of_a_folders_modules_that_leaves_one_out_is_caught():
    modules = sorted(path.stem for path in (PROJECT_ROOT / "foundations").glob("*.py") if path.stem != "__init__")
    spans = ", ".join(f"`{module}`" for module in modules)
    wrong, right = _caught(f"`foundations/` holds {spans.replace('`heap`, ', '')}.", f"`foundations/` holds {spans}.")
    assert wrong == ["the list of `foundations/`'s modules leaves out heap"]
    assert right == []
    wrong, right = _caught(
        "`serve/`: `api/`, `html/`, `http/`, `operations/`, `explore/`.",
        "`serve/`: `api/`, `html/`, `http/`, `operations/`, `mcp_server/`, `explore/`.",
    )
    assert wrong == ["the list of `serve/`'s rooms leaves out mcp_server/"]
    assert right == []


def test_every_make_target_and_command_is_documented():
    text = "\n".join(path.read_text(encoding="utf-8") for path in documents())
    targets = [target for target, listed in make_targets().items() if listed and f"make {target}" not in text]
    missing = [" ".join(words) for words in commands() if not re.search(rf"reuse-data {' '.join(words)}\b", text)]
    assert targets == [] and missing == [], f"undocumented make targets {targets}, commands {missing}"


def test_the_architectures_command_summary_names_every_command():
    """The flow's diagram ends with the command line in brief: every command and sub-command is in it."""
    architecture = (PROJECT_ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    summary = architecture[architecture.index("ON TOP: the `reuse-data` CLI") :].split("```")[0]
    words = set(re.findall(r"[a-z]+", summary))
    assert [" ".join(command) for command in commands() if not set(command) <= words] == []


def test_decision_32_lists_every_ask_training_choice():
    """The recipes are listed as the code has them (``ask/training/recipes.py``, the setting's
    choices), each with what it is for: a recipe added or dropped changes the list."""
    decisions = (PROJECT_ROOT / "docs" / "decisions.md").read_text(encoding="utf-8")
    decision = decisions[decisions.index("### 32. ") :].split("- **Why.**")[0]
    listed = {name for item in re.findall(r"^  - (.+?):", decision, re.M) for name in SPAN.findall(item)}
    assert listed == set(ASK_TRAINING_CHOICES)


def test_the_decisions_index_lists_every_decision_with_its_date():
    """decisions.md's index is its headings, each dated, in number order (the links' anchors are
    checked with every link)."""
    text = (PROJECT_ROOT / "docs" / "decisions.md").read_text(encoding="utf-8")
    dated = re.findall(r"^### (\d+)\. (.+)\n- \*\*Date\.\*\* (\d{4}-\d\d-\d\d)\.", text, re.M)
    indexed = re.findall(r"^- \[(\d+)\. (.+?)\]\(#[^)]+\), (\d{4}-\d\d-\d\d)", text, re.M)
    assert len(dated) == len(re.findall(r"^### \d+\. ", text, re.M)), "a decision without its date"
    assert indexed == sorted(dated, key=lambda decision: int(decision[0]))


def test_no_paragraph_is_written_twice():
    """A fact in one place: a paragraph copied into a second place (or twice into one) drifts."""
    paragraphs = Counter(
        " ".join(paragraph.split())
        for path in documents()
        for paragraph in re.split(r"\n\s*\n", path.read_text(encoding="utf-8"))
        if len(paragraph) > 160 and not paragraph.lstrip().startswith(("|", "```"))
    )
    assert [text[:120] for text, count in paragraphs.items() if count > 1] == []


def test_the_readme_is_read_in_five_minutes():
    assert len((PROJECT_ROOT / "README.md").read_bytes()) <= README_MAX_BYTES
