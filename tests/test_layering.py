"""Data flows one way: engine -> summarizer -> compactor -> integrations -> bench -> commands,
and only cli imports commands. Checked on the source, relative imports included."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "hermes_mlx"
ORDER = ["engine", "summarizer", "compactor", "integrations", "bench", "commands"]
ROOT_MODULES = {
    "__init__": "engine",
    "errors": None,
    "files": None,
    "loopback": None,
    "cli": "commands",
}  # root module -> highest layer it may import


def imported_modules(path: Path, package_dir: Path = PACKAGE) -> set[str]:
    """Absolute names of every hermes_mlx module `path` imports, `from . import x` and
    `from ..x import y` resolved against the module's own package."""
    package = path.relative_to(package_dir.parent).with_suffix("").parts[:-1]  # ("hermes_mlx", layer)
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(package[: len(package) - node.level + 1])
                module = f"{base}.{node.module}" if node.module else base
            else:
                module = node.module or ""
            names.add(module)
            names |= {f"{module}.{alias.name}" for alias in node.names}
    return {n for n in names if n.split(".")[0] == "hermes_mlx"}


def imported_layers(path: Path, package_dir: Path = PACKAGE) -> set[str]:
    return {
        parts[1]
        for name in imported_modules(path, package_dir)
        if len(parts := name.split(".")) > 1 and parts[1] in ORDER
    }


def offenders(paths, allowed: set[str]) -> dict[str, list[str]]:
    return {
        str(p.relative_to(PACKAGE)): sorted(imported_layers(p) - allowed) for p in paths if imported_layers(p) - allowed
    }


@pytest.mark.parametrize("layer", ORDER)
def test_layers_import_only_themselves_and_lower_layers(layer):
    allowed = set(ORDER[: ORDER.index(layer) + 1])
    assert not offenders((PACKAGE / layer).rglob("*.py"), allowed)


@pytest.mark.parametrize("module", sorted(ROOT_MODULES))
def test_root_modules_import_only_what_they_stand_on(module):
    top = ROOT_MODULES[module]
    allowed = set(ORDER[: ORDER.index(top) + 1]) if top else set()
    assert not offenders([PACKAGE / f"{module}.py"], allowed)


def test_every_root_module_is_placed():
    assert {p.stem for p in PACKAGE.glob("*.py")} == set(ROOT_MODULES)


def test_relative_imports_are_resolved(tmp_path):
    """The checker itself: `from . import x` and `from ..x import y` count as the layers they reach."""
    probe = tmp_path / "hermes_mlx" / "compactor" / "probe.py"
    probe.parent.mkdir(parents=True)
    probe.write_text("from . import micro\nfrom ..integrations import adapter\nfrom ..commands.bench import run\n")
    assert imported_layers(probe, tmp_path / "hermes_mlx") == {"compactor", "integrations", "commands"}


def test_modules_stay_small():
    big = {
        str(p.relative_to(PACKAGE)): n for p in PACKAGE.rglob("*.py") if (n := len(p.read_text().splitlines())) > 450
    }
    assert not big


def import_graph(package_dir: Path = PACKAGE) -> dict[str, set[str]]:
    """Module -> the package's modules it imports, imports inside functions included (a lazy
    import still makes a circle, only a hidden one)."""
    modules = {
        ".".join(p.relative_to(package_dir.parent).with_suffix("").parts).removesuffix(".__init__"): p
        for p in package_dir.rglob("*.py")
    }
    return {name: (imported_modules(path, package_dir) & set(modules)) - {name} for name, path in modules.items()}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in graph[node]:
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = []
            while True:
                other = stack.pop()
                group.append(other)
                if other == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_circle_in_the_package():
    assert circles(import_graph()) == []


def test_the_circle_check_sees_a_lazy_import(tmp_path):
    package = tmp_path / "hermes_mlx" / "integrations"
    package.mkdir(parents=True)
    (package / "a.py").write_text("from . import b\n")
    (package / "b.py").write_text("def f():\n    from .a import x\n")
    (package / "c.py").write_text("from .a import y\n")
    assert circles(import_graph(tmp_path / "hermes_mlx")) == [
        ["hermes_mlx.integrations.a", "hermes_mlx.integrations.b"]
    ]
