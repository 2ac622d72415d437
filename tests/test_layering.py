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
