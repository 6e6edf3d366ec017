"""What the docs state that the code can check: every make target, `reuse-data` command and flag
(bracketed ones too), code name (a class's name too), route and path written in code spans, every
claim that a name is in a file, every list of a folder's modules or rooms, and every relative link.

A reader trusts a name in backticks to exist. ``problems`` lists each that does not, by document,
so that a rename which leaves the docs behind fails the suite (``tests/unit/test_docs.py``).
Names that belong to other tools (Kubernetes' fields, HTTP's headers) are listed in ``FOREIGN``,
each with whose it is; spans that look like routes but name a machine's files, in ``NOT_ROUTES``.
"""

from __future__ import annotations

import argparse
import ast
import re
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from starlette.routing import BaseRoute, Match, Route

from foundations.settings import PROJECT_ROOT, load_settings

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
# Names of other tools a doc may show in backticks, each with whose it is: the code never defines them.
FOREIGN = {
    "livenessProbe": "Kubernetes' probe field",
    "readinessProbe": "Kubernetes' probe field",
    "minReadySeconds": "Kubernetes' rollout field",
    "maxUnavailable": "Kubernetes' rollout field",
    "emptyDir": "Kubernetes' volume",
    "set_real_ip_from": "nginx's directive",
    "real_ip_header": "nginx's directive",
    "AWS_SESSION_TOKEN": "the AWS clients' variable",
    "If_None_Match": "HTTP's header, as a Python keyword argument",
    "pandas.read_parquet": "pandas' reader",
    "polars.read_parquet": "polars' reader",
    "read_parquet": "DuckDB's and pandas' reader",
    "read_csv": "DuckDB's reader",
    "read_json": "DuckDB's reader",
    "TYPE_CHECKING": "Python's typing flag",
    "QueuedRunCoordinator": "Dagster's run coordinator, named in the instance's YAML",
}
# Spans that start with a slash but name a file or folder of a machine, not a route of ours.
NOT_ROUTES = {"/path/to/checkout": "a reader's own checkout, in a path a command is given"}
CODE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*(\(\))?$")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
SPAN = re.compile(r"`([^`\n]+)`")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
MAKE = re.compile(r"(?<![\w-])make ([a-z][a-z-]*)")
COMMAND = re.compile(r"(?<![\w/\"'-])reuse-data((?: +[^ #`|;&]+)*)")
# A class's name: capitalised words run together (`ModelStore`), which must be a class, function,
# import or quoted name of the code, not a word it merely mentions.
CLASS_NAME = re.compile(r"^[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*$")
# A bracketed flag (`[--csv]`, `[--days 7]`): an option of the command the text names before it.
BRACKETED_FLAG = re.compile(r"^\[(--?[a-z][a-z0-9-]*)(?:[ =][^\]]*)?\]$")
# A placeholder in a route as the docs write it (`<version>`, `{name}`), or its elided rest (`…`, `*`).
ROUTE_PLACEHOLDER = re.compile(r"<[^>/]*>|\{[^}/]*\}")
ROUTE_ELIDED = re.compile(r"…|\.\.\.|\*")
# "`NAME` in `file.py`", "`NAME` is in `file.py`", "`NAME` (`file.py`)", "`file.py`'s `NAME`",
# "`file.py` (`NAME`, …)".
NAME_IN_FILE = re.compile(r"`([^`\n]+)` (?:(?:is|are|lives|lie|lies) )?in `([^`\n]+)`")
NAME_THEN_FILE = re.compile(r"`([^`\n]+)` \(`([^`\n]+)`[,;:)]")
FILE_OWNS_NAME = re.compile(r"`([^`\n]+)`'s `([^`\n]+)`")
FILE_THEN_PARENTHESIS = re.compile(r"`([^`\n]+)` \((`[^()]*)\)")  # a parenthesis of names opens with one
# A list of a folder's modules needs this many of them, written bare, beside the folder's own span.
MODULE_LIST_AT_LEAST = 3
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
def _defined_names() -> frozenset[str]:
    """What the Python code defines, imports or writes as a whole quoted name (a schema's, an
    operator's, a JSON-LD type's): where a class's name must be, not merely mentioned."""
    names: set[str] = set()
    for path in _files(("*.py",)):
        for node in ast.walk(ast.parse(path.read_bytes())):
            if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                names.add(node.name)
            elif isinstance(node, ast.alias):
                names.add((node.asname or node.name).split(".")[-1])
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
                names.add(node.value)
    return frozenset(names)


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
    for written in words:
        word = written.lstrip("[").rstrip("]")  # `[--csv]`: an optional flag is still a flag
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


@cache
def _route_table() -> tuple[BaseRoute, ...]:
    """The routes of the public app and of the intake, as each app assembles them (under a home of
    its own, as neither serves anything until it starts)."""
    from intake.app import create_intake_app
    from serve.app import create_app

    with tempfile.TemporaryDirectory() as home:
        settings = load_settings({"REUSE_DATA_HOME": home, "REUSE_DATA_QUESTION_LOG": "off"})
        apps = (create_app(settings), create_intake_app(settings))
    return tuple(route for app in apps for route in app.routes if isinstance(route, Route))


def route_problem(text: str) -> str | None:
    """A span that names a route (`/api/public/ask.json`, `/releases/<version>/…`): a path one of the
    apps answers, its placeholders read as any one segment; a path ending in `/`, `…` or `*` is a
    prefix, under which some route must lie."""
    if text in NOT_ROUTES:
        return None
    elided = ROUTE_ELIDED.search(text)
    sample = ROUTE_PLACEHOLDER.sub("x", text[: elided.start()] if elided else text)
    if elided or sample.endswith("/"):
        prefix = sample[: sample.rindex("/") + 1]
        candidates = (prefix, prefix + "x", prefix + "x/x")
        is_route = any(_answers(candidate) for candidate in candidates) or any(
            ROUTE_PLACEHOLDER.sub("x", route.path).startswith(prefix) for route in _route_table()
        )
    else:
        is_route = _answers(sample)
    return None if is_route else f"`{text}`: no route of the API or the intake answers it"


def _answers(path: str) -> bool:
    scope = {"type": "http", "path": path, "root_path": "", "method": "GET"}
    return any(route.matches(scope)[0] != Match.NONE for route in _route_table())


def class_problem(name: str) -> str | None:
    """A class's name (`ModelStore`) must be defined in the code (or imported, or a name it writes)."""
    if name in FOREIGN or name in _defined_names():
        return None
    return f"`{name}`: the code defines no such class or name"


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
    if text.startswith("/") and not re.search(r"\s", text):
        return route_problem(text)
    if FILE_SUFFIX.search(text):
        return path_problem(text)
    if CODE_NAME.match(text):
        if text.split(".")[0] in PACKAGES and "." in text:
            return dotted_problem(text)
        if text in FOREIGN or not looks_like_code(text):
            return None
        parts = METRIC_SUFFIX.sub("", text.removesuffix("()")).split(".")
        missing = [part for part in parts if part not in _code_words()]
        if missing:
            return f"`{text}`: no {', '.join(missing)} in the code"
        classes = [part for part in parts if CLASS_NAME.match(part)]
        return next((problem for part in classes if (problem := class_problem(part))), None)
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


def units(markdown: str) -> list[str]:
    """The text outside fenced blocks cut where a fact's context ends: at a blank line, a heading,
    a list item and a table row."""
    found: list[str] = []
    for line in FENCE.sub("", markdown).splitlines():
        starts_unit = re.match(r"\s*(#|\||[-*] |\d+\. )", line) is not None
        if not line.strip() or starts_unit or not found:
            found.append("")
        found[-1] += line + "\n"
    return [unit for unit in found if unit.strip()]


def bracketed_flag_problem(flag: str, command: list[str] | None) -> str | None:
    """`[--csv]` alone: an option of the command written before it in the same paragraph, row or
    item; with none written, of some command."""
    if command is not None:
        return command_problem([*command, flag])
    every_flag = {option for words in commands() for option in _parser_of(words)._option_string_actions}
    return None if flag in every_flag else f"`[{flag}]`: no command has the option {flag}"


def _parser_of(words: tuple[str, ...]) -> argparse.ArgumentParser:
    parser = command_tree()
    for word in words:
        parser = _subcommands(parser)[word]
    return parser


def _is_repository_file(text: str) -> bool:
    return "/" in text and FILE_SUFFIX.search(text) is not None and text in _repo_paths()


def placement_problems(unit: str) -> list[str]:
    """Every claim that a name is in a file (`X` in `f.py`, `X` (`f.py`), `f.py`'s `X`, `f.py` (`X`,
    `Y`)): each part of the name must be written in that file, as a definition or a mention."""
    text = " ".join(unit.split())  # a claim may break across lines
    claims = NAME_IN_FILE.findall(text) + NAME_THEN_FILE.findall(text)
    claims += [(name, file) for file, name in FILE_OWNS_NAME.findall(text)]
    claims += [(name, file) for file, inside in FILE_THEN_PARENTHESIS.findall(text) for name in SPAN.findall(inside)]
    found = []
    for name, file in claims:
        if not (CODE_NAME.match(name) and _is_repository_file(file)) or name in FOREIGN:
            continue
        words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", (PROJECT_ROOT / file).read_text(encoding="utf-8")))
        missing = [part for part in name.removesuffix("()").split(".") if part not in words]
        if missing:
            found.append(f"`{name}` is said to be in `{file}`, which has no {', '.join(missing)}")
    return found


def module_list_problems(unit: str, spans: list[str]) -> list[str]:
    """A list of a folder's modules or of its rooms (the folder's span, then at least
    ``MODULE_LIST_AT_LEAST`` of its modules as bare spans, `settings`, or of its sub-packages,
    `api/`) must name every one the folder holds, so that it cannot go stale."""
    found = []
    for package in OURS:
        folder = PROJECT_ROOT / package
        parts = {
            "modules": {path.stem for path in folder.glob("*.py") if path.stem != "__init__"},
            "rooms": {f"{path.parent.name}/" for path in folder.glob("*/__init__.py")},
        }
        for kind, held in parts.items():
            named = held & set(spans)
            if f"`{package}/`" in unit and len(named) >= MODULE_LIST_AT_LEAST and (missing := held - named):
                found.append(f"the list of `{package}/`'s {kind} leaves out {', '.join(sorted(missing))}")
    return found


def unit_problems(unit: str) -> list[str]:
    """The problems of one paragraph, row or item: each span's, with a bracketed flag read as an
    option of the command before it, then its claims of place and its lists of modules."""
    spans = SPAN.findall(unit)
    found, command = [], None
    for span in spans:
        if span.split()[0] == "reuse-data":
            command = span.split()[1:]
        flagged = BRACKETED_FLAG.match(span.strip())
        if problem := (bracketed_flag_problem(flagged.group(1), command) if flagged else span_problem(span)):
            found.append(problem)
    return found + placement_problems(unit) + module_list_problems(unit, spans)


def problems_in(markdown: str, document: Path) -> list[str]:
    """Every fact of ``markdown`` (the text of ``document``) that the code does not bear out."""
    _, fenced = code_texts(markdown)
    found = [problem for unit in units(markdown) for problem in unit_problems(unit)]
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
