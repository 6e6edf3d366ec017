"""What the docs state that the code can check: every make target, `reuse-data` command and flag,
code name and path written in code spans, and every relative link.

A reader trusts a name in backticks to exist. ``problems`` lists each that does not, by document,
so that a rename which leaves the docs behind fails the suite (``tests/unit/test_docs.py``).
Names that belong to other tools (Kubernetes' fields, HTTP's headers) are listed in ``FOREIGN``.
"""

from __future__ import annotations

import argparse
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from foundations.settings import PROJECT_ROOT

DOCUMENTS = ("README.md", "docs/*.md", "demo/README.md")
OURS = ("foundations", "inputs", "warehouse", "ask", "release", "public", "publish", "serve", "intake", "pipelines")
PACKAGES = (*OURS, "reuse_data", "tests", "benchmarks")
# The files a code name is looked for in: the code, the dbt project, the seeds, the templates.
CODE_FILES = ("*.py", "*.sql", "*.yml", "*.yaml", "*.csv", "*.toml", "*.html", "*.template", "Makefile")
SOURCE_SUFFIXES = (".py", ".sql", ".yml", ".yaml", ".md", ".toml", ".csv", ".html", ".template", ".lock")
# A span that ends so names a file (a served one, a runtime one, or one of the repository's).
FILE_SUFFIX = re.compile(
    r"\.(py|sql|ya?ml|md|toml|csv|html|template|lock|json|jsonl|txt|xml|gz|zst|parquet|duckdb|npz|npy|sqlite3|log)$"
)
SKIPPED_FOLDERS = {".venv", "var", ".cache", "node_modules", ".git", "__pycache__", "target", "logs", ".ruff_cache"}
# Names of other tools a doc may show in backticks: Kubernetes, nginx, HTTP, Python's and DuckDB's own.
FOREIGN = {
    "livenessProbe",
    "readinessProbe",
    "minReadySeconds",
    "maxUnavailable",
    "emptyDir",
    "set_real_ip_from",
    "real_ip_header",
    "AWS_SESSION_TOKEN",
    "If_None_Match",
    "pandas.read_parquet",
    "polars.read_parquet",
    "read_parquet",
    "read_csv",
    "read_json",
    "TYPE_CHECKING",
}
CODE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*(\(\))?$")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
SPAN = re.compile(r"`([^`\n]+)`")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
MAKE = re.compile(r"(?<![\w-])make ([a-z][a-z-]*)")
COMMAND = re.compile(r"(?<![\w/\"'-])reuse-data((?: +[^ #`|;&]+)*)")
# Prometheus adds these to a counter's or an info's name.
METRIC_SUFFIX = re.compile(r"_(total|info)$")


@dataclass(frozen=True)
class Problem:
    document: str
    what: str

    def __str__(self) -> str:
        return f"{self.document}: {self.what}"


def documents() -> list[Path]:
    return sorted({path for pattern in DOCUMENTS for path in PROJECT_ROOT.glob(pattern)})


def code_texts(markdown: str) -> tuple[list[str], list[str]]:
    """The inline code spans outside fenced blocks, and the fenced blocks' lines."""
    fenced = [line for block in FENCE.findall(markdown) for line in block.splitlines()[1:-1]]
    spans = SPAN.findall(FENCE.sub("", markdown))
    return spans, fenced


@cache
def _code_words() -> frozenset[str]:
    words: set[str] = set()
    for path in _files(CODE_FILES):
        words.update(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", path.read_text(encoding="utf-8", errors="replace")))
    return frozenset(words)


@cache
def _repo_paths() -> frozenset[str]:
    """The repository's files and folders as git tracks them (``a/b.py``, ``a/``): what a fresh
    clone has, whatever a build left beside them."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    paths = set(listed)
    for path in listed:
        parts = path.split("/")
        paths.update("/".join(parts[:end]) + "/" for end in range(1, len(parts)))
    return frozenset(paths)


def _files(patterns: tuple[str, ...]) -> Iterator[Path]:
    for pattern in patterns:
        for path in PROJECT_ROOT.rglob(pattern):
            if not SKIPPED_FOLDERS & set(path.relative_to(PROJECT_ROOT).parts) and path.is_file():
                yield path


@cache
def make_targets() -> dict[str, bool]:
    """The Makefile's targets, each with whether ``make help`` lists it (a ``##`` description)."""
    targets = {}
    for line in (PROJECT_ROOT / "Makefile").read_text(encoding="utf-8").splitlines():
        matched = re.match(r"^([a-z][a-z-]*):", line)
        if matched:
            targets[matched.group(1)] = "## " in line
    return targets


@cache
def command_tree() -> argparse.ArgumentParser:
    from reuse_data.cli import build_parser

    return build_parser()


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def commands(parser: argparse.ArgumentParser | None = None, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every command and sub-command, as the words after `reuse-data`."""
    parser = parser or command_tree()
    found = []
    for name, sub in _subcommands(parser).items():
        nested = commands(sub, (*prefix, name))
        found += nested or [(*prefix, name)]
    return found


def command_problem(words: list[str]) -> str | None:
    """What is wrong with `reuse-data <words>` (a command or flag that does not exist), or None."""
    parser = command_tree()
    said = ["reuse-data"]
    for word in words:
        subcommands = _subcommands(parser)
        if word.startswith("-"):
            flag = word.split("=", 1)[0]
            if flag not in parser._option_string_actions:
                return f"`{' '.join(said)}` has no option {flag}"
            continue
        if subcommands:
            if word not in subcommands:
                if re.fullmatch(r"[A-Z_]+|<.*>|\.\.\.|…|COMMAND", word):
                    return None  # a placeholder
                return f"`{' '.join(said)}` has no command {word!r}"
            parser = subcommands[word]
        said.append(word)
    return None


def _module_defines(module: Path, name: str) -> bool:
    text = module.read_text(encoding="utf-8")
    defined = (
        rf"^\s*(?:async\s+)?(?:def|class)\s+{name}\b",  # a function or class
        rf"^\s*{name}\s*[:=]",  # a module's or class's name
        rf"import[^\n]*\b{name}\b",  # imported into it
        rf"\bself\.{name}\s*[:=]",  # an attribute set on its objects
    )
    return re.search("|".join(defined), text, re.M) is not None


def dotted_problem(name: str) -> str | None:
    """A dotted name under one of our packages (``serve.operations.question_log.record_question``):
    the longest prefix that is a module, then each remaining part defined in it."""
    parts = name.removesuffix("()").split(".")
    for end in range(len(parts), 0, -1):
        base = PROJECT_ROOT.joinpath(*parts[:end])
        module = base.with_suffix(".py") if base.with_suffix(".py").exists() else base / "__init__.py"
        if module.exists():
            rest = parts[end:]
            if rest and not _module_defines(module, rest[0]):
                return f"`{name}`: {module.relative_to(PROJECT_ROOT)} defines no {rest[0]}"
            return None
    return f"`{name}`: no module {'/'.join(parts[:2])}"


def looks_like_code(name: str) -> bool:
    bare = name.removesuffix("()")
    return "_" in bare or name.endswith("()") or re.search(r"[a-z][A-Z]|^[A-Z][a-z]+[A-Z]", bare) is not None


def span_problem(span: str) -> str | None:
    """What is wrong with one inline code span, or None when it checks out or is not code."""
    text = span.strip()
    if text.startswith("make "):
        return make_problem(text)
    if text == "reuse-data" or text.startswith("reuse-data "):
        return command_problem(text.split()[1:])
    if FILE_SUFFIX.search(text):
        return path_problem(text)
    if CODE_NAME.match(text):
        if text.split(".")[0] in PACKAGES and "." in text:
            return dotted_problem(text)
        if text in FOREIGN or not looks_like_code(text):
            return None
        parts = METRIC_SUFFIX.sub("", text.removesuffix("()")).split(".")
        missing = [part for part in parts if part not in _code_words()]
        return f"`{text}`: no {', '.join(missing)} in the code" if missing else None
    return path_problem(text)


def path_problem(text: str) -> str | None:
    """A span that names a file of the repository (by its source suffix, or a top-level folder) that is not there."""
    if re.search(r"[\s<>{}*…$?=:]", text) or text.startswith(("/", ".")) or "//" in text:
        return None
    top = text.split("/")[0]
    is_top_folder = "/" in text and f"{top}/" in _repo_paths() and text.endswith("/")
    if not (text.endswith(SOURCE_SUFFIXES) or is_top_folder):
        return None
    if "/" not in text and not text.endswith((".py", ".sql")):
        return None  # a bare data or configuration name (`bench.csv`, `dagster.yaml`) may be served or written
    if is_top_folder or f"{top}/" in _repo_paths():
        return None if text in _repo_paths() else f"`{text}`: no such file or folder in the repository"
    if any(path == text or path.endswith("/" + text) for path in _repo_paths()):
        return None
    return f"`{text}`: no such file in the repository"


def make_problem(text: str) -> str | None:
    for target in MAKE.findall(text):
        if target not in make_targets():
            return f"`make {target}`: the Makefile has no such target"
    return None


def link_problem(document: Path, target: str) -> str | None:
    if re.match(r"^[a-z]+:", target) or target.startswith("#"):
        return None
    file, _, anchor = target.partition("#")
    path = (document.parent / file).resolve()
    if not path.exists():
        return f"link to {target}: no such file"
    if anchor and path.suffix == ".md" and anchor not in heading_anchors(path):
        return f"link to {target}: {file} has no heading #{anchor}"
    return None


def heading_anchors(path: Path) -> set[str]:
    """The anchors a Markdown renderer gives the headings of ``path`` (GitHub's rule: lower case,
    punctuation dropped, spaces as hyphens)."""
    headings = re.findall(r"^#+ (.+)$", FENCE.sub("", path.read_text(encoding="utf-8")), re.M)
    return {re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-") for heading in headings}


def problems_in(markdown: str, document: Path) -> list[str]:
    """Every fact of ``markdown`` (the text of ``document``) that the code does not bear out."""
    spans, fenced = code_texts(markdown)
    found = [problem for span in spans if (problem := span_problem(span))]
    for line in fenced:
        for target in MAKE.findall(line):
            if target not in make_targets():
                found.append(f"`make {target}`: the Makefile has no such target")
        for words in COMMAND.findall(line):
            if problem := command_problem(words.split()):
                found.append(problem)
    found += [problem for target in LINK.findall(markdown) if (problem := link_problem(document, target))]
    return found


def problems() -> list[Problem]:
    return [
        Problem(str(path.relative_to(PROJECT_ROOT)), what)
        for path in documents()
        for what in problems_in(path.read_text(encoding="utf-8"), path)
    ]
