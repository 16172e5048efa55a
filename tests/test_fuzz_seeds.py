"""The Python fuzz targets' seeds, replayed (issue 36): each ``fuzz/python/TARGET.py`` is
imported by path (without atheris) and its ``test_one_input`` runs on every file of
``fuzz/corpus/TARGET``, so that an input that once failed a target stays fixed.

Oracle: the targets' own checks (each target's docstring says what it checks); a seed passes
when ``test_one_input`` returns. ``scripts/fuzz.sh TARGET MINUTES`` runs a target under
atheris, from these seeds.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
TARGETS = sorted((ROOT / "fuzz" / "python").glob("*.py"))
CORPUS = ROOT / "fuzz" / "corpus"


def seeds(target: Path) -> list[Path]:
    folder = CORPUS / target.stem
    return sorted(p for p in folder.iterdir() if p.is_file()) if folder.is_dir() else []


@pytest.fixture(scope="module")
def targets() -> dict[str, ModuleType]:
    """Each target, imported once (they set up tokenizers, temp folders or a server)."""
    loaded = {}
    for path in TARGETS:
        name = f"tokenmill_fuzz_{path.stem}"
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        loaded[path.stem] = module
    return loaded


def test_there_are_python_targets():
    assert {p.stem for p in TARGETS} >= {"stream_decoder", "loaders", "serve_api", "cli_inputs"}


@pytest.mark.parametrize("target", TARGETS, ids=lambda p: p.stem)
def test_every_target_has_seeds(target):
    assert seeds(target), f"fuzz/corpus/{target.stem} has no seeds"


@pytest.mark.parametrize(
    "target, seed",
    [(t, s) for t in TARGETS for s in seeds(t)],
    ids=lambda x: x.stem if x.suffix == ".py" else x.name,
)
def test_seed(targets, target, seed):
    targets[target.stem].test_one_input(seed.read_bytes())
