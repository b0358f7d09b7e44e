"""The layout keeps its promises: no import cycles between the referee's modules (imports
inside functions included; ``TYPE_CHECKING`` blocks excepted), no module over 500 lines,
and each package used through its face: its ``__init__``'s ``__all__``, the only names
other packages import. (The layers themselves are import-linter's contract, ``./tasks
lint``; what importing a module really loads, through the faces, is checked here.)"""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from processes import unmeasured_env

from referee import face_table

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


def test_no_cycles_between_packages() -> None:
    """No package imports, through any of its modules, a package that imports it back
    (a face's laziness would hide such a cycle from the modules' check above): the
    server's pages, say, never import the server."""
    files = {module_name(p): p for pkg in PACKAGES for p in pkg.rglob("*.py")}
    faces = set(packages())
    graph: dict[str, set[str]] = {face: set() for face in faces}
    for module, path in files.items():
        mine = package_of(module, faces)
        graph[mine] |= {package_of(m, faces) for m in imports_of(path, set(files))} - {mine}

    def reaches(start: str, goal: str) -> bool:
        seen, todo = set(), [start]
        while todo:
            node = todo.pop()
            if node == goal:
                return True
            if node not in seen:
                seen.add(node)
                todo += graph[node]
        return False

    assert sorted((a, b) for a in graph for b in graph[a] if reaches(b, a)) == []


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


def packages() -> dict[str, Path]:
    """Each package (a directory with an ``__init__.py``) by name: its face."""
    return {module_name(p): p for pkg in PACKAGES for p in pkg.rglob("__init__.py")}


def package_of(module: str, names: set[str]) -> str:
    return module if module in names else module.rpartition(".")[0]


def is_lazy(init: Path) -> bool:
    """The face makes its names with ``lazy_face``."""
    return any(isinstance(node, ast.Call) and ast.unparse(node.func) == "lazy_face"
               for node in ast.walk(ast.parse(init.read_text())))


def face_names(init: Path) -> set[str]:
    """The names of a face, read from its source: a lazy face's are the imports of its
    ``TYPE_CHECKING`` block, an eager face's its ``__all__``."""
    if is_lazy(init):
        return set(face_table(init.read_text()))
    for node in ast.parse(init.read_text()).body:
        targets = ([node.target] if isinstance(node, ast.AnnAssign)
                   else node.targets if isinstance(node, ast.Assign) else [])
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            assert node.value is not None
            return set(ast.literal_eval(node.value))
    raise AssertionError(f"{init} has no __all__")


def imported(path: Path) -> list[tuple[int, str, list[str]]]:
    """Every import in a module (in functions and ``TYPE_CHECKING`` blocks too): its line,
    the absolute module it names and the names it takes from there."""
    importer, is_package = module_name(path), path.name == "__init__.py"
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            found.append((node.lineno, absolute(node, importer, is_package),
                          [alias.name for alias in node.names]))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name, []) for alias in node.names]
    return found


def test_each_package_names_its_face() -> None:
    """Each package's ``__init__`` has an ``__all__``, and every name in it resolves."""
    for name in sorted(packages()):
        face = importlib.import_module(name)
        assert isinstance(face.__all__, list), name
        for attribute in face.__all__:
            assert hasattr(face, attribute), f"{name}.{attribute}"


def type_checking_imports(init: Path) -> dict[str, str]:
    """What the type checker reads in a lazy face: each name of its ``TYPE_CHECKING``
    block's imports and the module it comes from. The block holds nothing else."""
    found: dict[str, str] = {}
    for node in ast.walk(ast.parse(init.read_text())):
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for statement in node.body:
                assert isinstance(statement, ast.ImportFrom), ast.unparse(statement)
                assert statement.level == 1 and statement.module, ast.unparse(statement)
                for alias in statement.names:
                    assert alias.asname is None, ast.unparse(statement)
                    found[alias.name] = statement.module
    return found


def test_a_lazy_face_gives_each_name_it_imports_for_the_type_checker() -> None:
    """A lazy face writes each name once, as an import of its ``TYPE_CHECKING`` block:
    its table at run time, ``__all__`` and ``dir()`` are made from those imports, and no
    name is also a module of the package (importing the module would hide it)."""
    lazy = [(name, init) for name, init in sorted(packages().items()) if is_lazy(init)]
    for name, init in lazy:
        imports = type_checking_imports(init)
        assert face_table(init.read_text()) == imports, name
        face = importlib.import_module(name)
        assert sorted(face.__all__) == sorted(imports), name
        assert set(imports) <= set(dir(face)), name
        modules = {p.stem for p in init.parent.glob("*.py")}
        assert not set(imports) & modules, name
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
    reexported = {m for o in config["overrides"] if o.get("implicit_reexport")
                  for m in o["module"]}
    assert reexported == {name for name, _ in lazy}


def test_packages_use_each_other_through_their_faces() -> None:
    """No module imports another package's modules: it imports the package (its face),
    and only names of the face's ``__all__``. Tests may import modules directly."""
    faces = packages()
    modules = {module_name(p) for pkg in PACKAGES for p in pkg.rglob("*.py")}
    names = {face: face_names(init) for face, init in faces.items()}
    reaching = []
    for pkg in PACKAGES:
        for path in sorted(pkg.rglob("*.py")):
            importer = module_name(path)
            mine = package_of(importer, set(faces))
            for line, source, taken in imported(path):
                if source not in modules or package_of(source, set(faces)) == mine:
                    continue
                where = f"{path.relative_to(ROOT)}:{line}"
                if source not in faces:
                    reaching.append(f"{where} imports {source}")
                reaching += [f"{where} takes {name} from {source}, not in its face"
                             for name in taken if name not in names[source]]
    assert reaching == []


def runtime_contracts() -> list[tuple[str, list[str], list[str]]]:
    """import-linter's forbidden contracts that look through indirect imports: name,
    source modules, forbidden modules."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    return [(c["name"], c["source_modules"], c["forbidden_modules"])
            for c in config["contracts"]
            if c["type"] == "forbidden" and not c.get("allow_indirect_imports")]


@pytest.mark.parametrize(("sources", "forbidden"),
                         [c[1:] for c in runtime_contracts()],
                         ids=[c[0] for c in runtime_contracts()])
def test_forbidden_contracts_hold_at_run_time(sources: list[str], forbidden: list[str]
                                              ) -> None:
    """What importing a contract's source modules really loads (their faces import the
    modules of the names asked of them, which an import graph cannot tell): none of its
    forbidden modules, in a fresh interpreter."""
    files = {module_name(p) for pkg in PACKAGES for p in pkg.rglob("*.py")}
    chosen = sorted(m for m in files if any(m == s or m.startswith(f"{s}.") for s in sources)
                    and not m.endswith("__main__"))
    probe = ("import importlib, sys\n"
             "for name in sys.argv[1:]:\n"
             "    importlib.import_module(name)\n"
             "print('\\n'.join(sys.modules))")
    run = subprocess.run([sys.executable, "-c", probe, *chosen], capture_output=True,
                         text=True, timeout=120, check=True, env=unmeasured_env())
    loaded = set(run.stdout.split())
    assert sorted(m for m in loaded if any(m == f or m.startswith(f"{f}.") for f in forbidden)
                  ) == []


def test_the_readme_shows_every_package() -> None:
    """README's "How it is built" names every package of the referee."""
    readme = (ROOT / "README.md").read_text()
    built = readme[readme.index("## How it is built"):]
    built = built[:built.index("\n```\n", built.index("```") + 3)]
    shown = {line.split()[0].rstrip("/") for line in built.splitlines()
             if line.startswith("referee/")}
    top = {p.parent.relative_to(ROOT).as_posix() for p in (ROOT / "referee").glob("*/__init__.py")}
    assert top - shown == set()
