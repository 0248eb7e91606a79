"""The package's shape holds: no import loop anywhere, each `core/` package imports only what
its docstring says it may (and nothing of dagster, boto3 or the rest of the product), and no
folder of the product (`core/`, `sync/`, `cli/`, ...) grows into a flat room again."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import dzlineage_dagster

PACKAGE = Path(dzlineage_dagster.__file__).parent
CORE = PACKAGE / "core"
#: A folder beyond this many modules is split by concern (docs/development.md).
MAX_MODULES_PER_FOLDER = 9
#: What pure code must not import: the orchestrator and the AWS SDK belong to the edges.
IMPURE_ROOTS = {"dagster", "boto3", "botocore", "dagster_aws"}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path) -> set[str]:
    """Every module a file imports, at module level, in functions and under TYPE_CHECKING
    alike: a loop through a type-only import is still a loop a reader must untangle."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def project_import_graph() -> dict[str, set[str]]:
    modules = {module_name(path): path for path in PACKAGE.rglob("*.py")}
    return {
        name: {target for target in imported_modules(path) if target in modules and target != name}
        for name, path in modules.items()
    }


def import_loops(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    loops: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, targets = work[-1]
            target = next(targets, None)
            if target is not None:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                elif target in on_stack:
                    low[node] = min(low[node], index[target])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    loops.append(sorted(group))
    return loops


def test_the_loop_finder_finds_a_loop():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert import_loops(graph) == [["a", "b", "c"]]


def test_no_import_loop_anywhere_in_the_package():
    assert import_loops(project_import_graph()) == []


def core_packages() -> list[Path]:
    return sorted(path.parent for path in CORE.glob("*/__init__.py"))


def allowed_imports(package: Path) -> set[str]:
    """The sibling packages named on the ``Imports:`` line of the package's docstring."""
    docstring = ast.get_docstring(ast.parse((package / "__init__.py").read_text())) or ""
    line = re.search(r"^Imports: (.*)$", docstring, re.MULTILINE | re.DOTALL)
    assert line, f"{package.name}/__init__.py's docstring says nothing of what it may import"
    return set(re.findall(r":mod:`\.\.(\w+)`", line.group(1)))


def forbidden(target: str, allowed: set[str]) -> bool:
    """Whether pure code under ``core/`` may not import ``target``: dagster, boto3, the
    product's edges, or a part of ``core/`` outside ``allowed``."""
    if target.split(".")[0] in IMPURE_ROOTS:
        return True
    if not target.startswith("dzlineage_dagster."):
        return False
    if not target.startswith("dzlineage_dagster.core."):
        return target != "dzlineage_dagster.core"
    return target.split(".")[2] not in allowed


def forbidden_imports(paths: list[Path], allowed: set[str]) -> list[str]:
    return sorted(
        f"{path.relative_to(CORE)} imports {target}"
        for path in paths
        for target in imported_modules(path)
        if forbidden(target, allowed)
    )


@pytest.mark.parametrize("package", core_packages(), ids=lambda path: path.name)
def test_a_core_package_imports_only_what_its_docstring_allows(package: Path):
    allowed = allowed_imports(package) | {package.name}
    assert forbidden_imports(list(package.rglob("*.py")), allowed) == []


def test_core_modules_beside_the_packages_import_only_core():
    every_package = {package.name for package in core_packages()}
    assert forbidden_imports(list(CORE.glob("*.py")), every_package) == []


def product_folders() -> list[Path]:
    """Every folder of the product's code; the sandbox stands for AWS and is shaped by it."""
    return [
        folder
        for folder in [PACKAGE, *PACKAGE.rglob("*")]
        if folder.is_dir()
        and (folder / "__init__.py").exists()
        and "sandbox" not in folder.relative_to(PACKAGE).parts
    ]


def crowded_folders(folders: list[Path]) -> dict[str, int]:
    return {
        str(folder.relative_to(PACKAGE)): count
        for folder in folders
        if (
            count := len(
                [p for p in folder.glob("*.py") if p.name not in ("__init__.py", "__main__.py")]
            )
        )
        > MAX_MODULES_PER_FOLDER
    }


def test_no_folder_of_the_product_is_a_crowded_flat_room():
    assert crowded_folders(product_folders()) == {}
    assert {CORE, PACKAGE / "sync", PACKAGE / "cli"} <= set(product_folders())


def test_no_folder_of_the_sandbox_is_a_crowded_flat_room_either():
    """The sandbox is shaped by the AWS it plays (a package per service), and read as often."""
    sandbox = [
        folder
        for folder in (PACKAGE / "sandbox").rglob("*")
        if folder.is_dir() and (folder / "__init__.py").exists()
    ]
    assert crowded_folders(sandbox) == {}
    assert PACKAGE / "sandbox" / "emulators" / "datazone" in sandbox


def test_every_command_lives_in_the_cli_package():
    strays = sorted(
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if path.stem == "cli" or path.stem.endswith("_cli")
    )
    assert strays == []
