"""Data flows one way: engine -> summarizer -> compactor -> integrations. Checked on the source."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "hermes_mlx"
ORDER = ["engine", "summarizer", "compactor", "integrations", "bench", "commands"]


def imported_layers(path: Path) -> set[str]:
    layers = set()
    for node in ast.walk(ast.parse(path.read_text())):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module]
        for name in names:
            parts = name.split(".")
            if parts[0] == "hermes_mlx" and len(parts) > 1 and parts[1] in ORDER:
                layers.add(parts[1])
    return layers


@pytest.mark.parametrize("layer", ORDER[:3])
def test_lower_layers_never_import_higher_ones(layer):
    higher = set(ORDER[ORDER.index(layer) + 1 :])
    offenders = {
        str(path.relative_to(PACKAGE)): sorted(imported_layers(path) & higher)
        for path in (PACKAGE / layer).glob("*.py")
        if imported_layers(path) & higher
    }
    assert not offenders


def test_modules_stay_small():
    big = {str(p.relative_to(PACKAGE)): n for p in PACKAGE.rglob("*.py")
           if (n := len(p.read_text().splitlines())) > 450}
    assert not big
