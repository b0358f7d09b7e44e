"""The layout keeps its promises: no import cycles between the referee's modules (imports
inside functions included; ``TYPE_CHECKING`` blocks excepted), and no module over 500
lines. (The layers themselves are import-linter's contract, ``./tasks lint``.)"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = (ROOT / "referee", ROOT / "protocol" / "taki_protocol")


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    parts = parts[1:] if parts[0] == "protocol" else parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def absolute(node: ast.ImportFrom, importer: str, is_package: bool) -> str:
    """The absolute module an ``from ... import`` names, relative forms resolved."""
    if node.level == 0:
        return node.module or ""
    parts = importer.split(".")
    base = parts if is_package else parts[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def imports_of(path: Path, modules: set[str]) -> set[str]:
    tree = ast.parse(path.read_text())
    importer, is_package = module_name(path), path.name == "__init__.py"
    skipped = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If)
               and "TYPE_CHECKING" in ast.unparse(node.test) for n in ast.walk(node)}
    found = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.ImportFrom):
            source = absolute(node, importer, is_package)
            for alias in node.names:
                full = f"{source}.{alias.name}"
                found.add(full if full in modules else source)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {m for m in found if m in modules}


def test_no_import_cycles() -> None:
    files = {module_name(p): p for pkg in PACKAGES for p in pkg.rglob("*.py")}
    graph = {m: imports_of(p, set(files)) - {m} for m, p in files.items()}
    state: dict[str, int] = {}  # 1: on the path, 2: done
    cycles: list[list[str]] = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append([*path[path.index(nxt):], nxt])
            elif nxt not in state:
                visit(nxt, [*path, nxt])
        state[node] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert cycles == []


def test_relative_imports_are_followed() -> None:
    """The cycle check sees inside the packages that import their siblings relatively."""
    rules = ROOT / "referee" / "rules"
    modules = {module_name(p) for p in rules.glob("*.py")}
    assert "referee.rules.actions" in imports_of(rules / "apply.py", modules)
    protocol = ROOT / "protocol" / "taki_protocol"
    names = {module_name(p) for p in protocol.glob("*.py")}
    assert imports_of(protocol / "__init__.py", names) - {"taki_protocol"}


def test_no_module_over_500_lines() -> None:
    long = {str(p.relative_to(ROOT)): n for pkg in PACKAGES for p in pkg.rglob("*.py")
            if (n := len(p.read_text().splitlines())) > 500}
    assert long == {}
