"""The packages import one another only along the flow: foundations under everything, the
inputs, the warehouse, the ask engine, the release as it is read, what the public sees of it,
then on one side the publish that writes releases and on the other the server that reads them
(neither imports the other), the pipeline that drives them, the intake beside them, and the
command line on top. Inside ask the rooms do too (``ASK_ROOMS_MAY_IMPORT``): the decision beneath
the engine, the evaluation above it. No module imports itself through others, TYPE_CHECKING imports included.
An import against that order fails here, naming the module, rather than in a reviewer's reading."""

from __future__ import annotations

import ast
from pathlib import Path

from foundations.settings import PROJECT_ROOT

# Package -> the packages of ours it may import. What is not listed may not be imported.
MAY_IMPORT: dict[str, set[str]] = {
    "foundations": set(),
    "inputs": {"foundations"},
    "warehouse": {"foundations", "inputs"},
    "ask": {"foundations", "inputs", "warehouse"},
    "release": {"foundations", "warehouse"},
    "public": {"foundations", "warehouse", "release"},
    "publish": {"foundations", "warehouse", "ask", "release", "public"},
    "serve": {"foundations", "warehouse", "ask", "release", "public"},
    "intake": {"foundations", "inputs", "warehouse", "release"},
    "pipelines": {"foundations", "inputs", "warehouse", "ask", "release", "public", "publish", "intake"},
    "reuse_data": {
        "foundations",
        "inputs",
        "warehouse",
        "ask",
        "release",
        "public",
        "publish",
        "serve",
        "intake",
        "pipelines",
    },
}
OURS = {*MAY_IMPORT, "tests", "benchmarks"}

# Inside ask: each room (a sub-package, or a module at its top) -> the rooms it may import. The
# engine stands on the rooms, and the evaluation, which asks the engine, on all of them: a room
# that imported the engine or the evaluation would be an arrow back up.
ASK_ROOMS_MAY_IMPORT: dict[str, set[str]] = {
    "ask.entries": set(),
    "ask.model": set(),
    "ask.lexical": {"ask.entries"},
    "ask.dense": {"ask.model"},
    "ask.decision": {"ask.entries", "ask.lexical", "ask.dense", "ask.model"},
    "ask.training": {"ask.dense", "ask.model"},
    "ask.engine": {"ask.entries", "ask.lexical", "ask.dense", "ask.model", "ask.decision"},
    "ask.evaluation": {"ask.entries", "ask.lexical", "ask.dense", "ask.model", "ask.decision", "ask.engine"},
}


def imports_of(source: Path) -> set[str]:
    """The top-level packages of ours a module imports, wherever in the module it does."""
    return top_level_imports(source) & OURS


def test_each_package_imports_only_what_lies_under_it():
    wrong = [
        f"{source.relative_to(PROJECT_ROOT)} imports {other}"
        for package, allowed in MAY_IMPORT.items()
        for source in sorted((PROJECT_ROOT / package).rglob("*.py"))
        for other in sorted(imports_of(source) - allowed - {package})
    ]
    assert not wrong, "imports against the layering:\n" + "\n".join(wrong)


def names_a_path_under(source: Path, folders: tuple[str, ...]) -> bool:
    text = source.read_text(encoding="utf-8")
    return any(f'"{folder}/' in text or f"'{folder}/" in text for folder in folders)


def test_production_code_reads_nothing_under_tests_or_benchmarks():
    wrong = [
        str(source.relative_to(PROJECT_ROOT))
        for package in MAY_IMPORT
        for source in sorted((PROJECT_ROOT / package).rglob("*.py"))
        if names_a_path_under(source, ("tests", "benchmarks"))
    ]
    assert not wrong, "production modules naming a path under tests/ or benchmarks/: " + ", ".join(wrong)


def test_the_layering_covers_every_package():
    packages = {path.parent.name for path in PROJECT_ROOT.glob("*/__init__.py")} - {"tests", "benchmarks"}
    assert packages == set(MAY_IMPORT)


def module_name(source: Path) -> str:
    parts = source.relative_to(PROJECT_ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules_imported(source: Path, modules: set[str]) -> set[str]:
    """The modules of ours a module imports anywhere in it (``TYPE_CHECKING`` blocks and function
    bodies too): ``from a.b import c`` is ``a.b.c`` when that is a module, else ``a.b``."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.update(
                f"{node.module}.{alias.name}" if f"{node.module}.{alias.name}" in modules else node.module
                for alias in node.names
            )
    return found & modules


def import_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` (as the modules along it, the first again at the end), or None."""
    done: set[str] = set()
    for start in sorted(graph):
        if start in done:
            continue
        path, on_path = [start], {start}
        stack = [iter(sorted(graph[start]))]
        while stack:
            following = next(stack[-1], None)
            if following is None:
                finished = path.pop()
                done.add(finished)
                on_path.discard(finished)
                stack.pop()
            elif following in on_path:
                return [*path[path.index(following) :], following]
            elif following not in done:
                path.append(following)
                on_path.add(following)
                stack.append(iter(sorted(graph[following])))
    return None


def test_no_module_imports_itself_through_others():
    sources = {
        module_name(source): source for package in MAY_IMPORT for source in (PROJECT_ROOT / package).rglob("*.py")
    }
    graph = {name: modules_imported(source, set(sources)) - {name} for name, source in sources.items()}
    cycle = import_cycle(graph)
    assert cycle is None, "an import cycle: " + " -> ".join(cycle or [])


def ask_room(module: str) -> str:
    """The room of ask a module is in: ``ask.decision.fusion`` is in ``ask.decision``."""
    return ".".join(module.split(".")[:2])


def ask_modules() -> dict[str, Path]:
    return {
        module_name(source): source
        for source in sorted((PROJECT_ROOT / "ask").rglob("*.py"))
        if source != PROJECT_ROOT / "ask" / "__init__.py"
    }


def test_each_room_of_ask_imports_only_what_lies_under_it():
    sources = ask_modules()
    wrong = [
        f"{source.relative_to(PROJECT_ROOT)} imports {other}"
        for name, source in sources.items()
        for other in sorted(modules_imported(source, set(sources)))
        if ask_room(other) not in ASK_ROOMS_MAY_IMPORT[ask_room(name)] | {ask_room(name)}
    ]
    assert not wrong, "imports against the rooms of ask:\n" + "\n".join(wrong)


def test_the_rooms_of_ask_cover_every_module():
    assert {ask_room(name) for name in ask_modules()} == set(ASK_ROOMS_MAY_IMPORT)


def test_the_architecture_table_names_every_module():
    """A newcomer finds any behaviour in one hop: each module of the packages is named, by its
    path, in docs/architecture.md's table of concerns."""
    table = "\n".join(
        line
        for line in (PROJECT_ROOT / "docs" / "architecture.md").read_text(encoding="utf-8").splitlines()
        if line.startswith("| ")
    )
    unnamed = [
        str(path)
        for package in MAY_IMPORT
        for source in sorted((PROJECT_ROOT / package).rglob("*.py"))
        if source.name != "__init__.py" and f"`{(path := source.relative_to(PROJECT_ROOT))}`" not in table
    ]
    assert not unnamed, "modules docs/architecture.md's table does not name: " + ", ".join(unnamed)


def test_torch_is_imported_only_where_the_encoder_is_trained():
    """PyTorch is a training dependency: a server, a build that trains nothing and every other
    package run without it, so only ``ask/training/`` may import it."""
    training = PROJECT_ROOT / "ask" / "training"
    wrong = [
        str(source.relative_to(PROJECT_ROOT))
        for package in MAY_IMPORT
        for source in sorted((PROJECT_ROOT / package).rglob("*.py"))
        if training not in source.parents and "torch" in top_level_imports(source)
    ]
    assert not wrong, "modules importing torch outside ask/training/: " + ", ".join(wrong)


def top_level_imports(source: Path) -> set[str]:
    """The top-level packages a module imports (ours or not), wherever in the module it does."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found


# What the command line runs outside a Dagster definition: the CLI itself and the pipeline's modules
# it calls. Datasette's rule: the CLI imports the parts, and a part's code lives in its package, not
# in an asset module that only Dagster should load (only ``pipelines.definitions`` gathers those).
COMMAND_LINE_MODULES = ("reuse_data", "pipelines/build.py", "pipelines/encoder_training.py", "pipelines/build_lock.py")


def test_the_command_line_imports_no_asset_module():
    paths = [PROJECT_ROOT / listed for listed in COMMAND_LINE_MODULES]
    sources = [source for path in paths for source in (sorted(path.rglob("*.py")) if path.is_dir() else [path])]
    ours = {module_name(path) for path in PROJECT_ROOT.glob("pipelines/assets/*.py")}
    wrong = {
        str(source.relative_to(PROJECT_ROOT)): sorted(modules_imported(source, ours) & ours)
        for source in sources
        if modules_imported(source, ours) & ours
    }
    assert not wrong, f"command-line modules importing asset modules: {wrong}"
