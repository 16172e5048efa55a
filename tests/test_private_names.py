"""No module uses another module's private names (issue 33): a name with one leading
underscore belongs to the module that defines it.

Oracle: the source itself, read with ``ast``. For every module of the package, and every test
and benchmark, these are uses of a private name ``_x``:

- an attribute ``obj._x`` (``self._x`` too: an inherited private is another module's);
- ``super()._x``, which reaches into a base class even where the module defines ``_x`` too;
- a private method or attribute defined in a class that overrides its base's, where the base
  comes from another module (the override depends on when and how the base calls it);
- ``from tokenmill.m import _x``, and an import of a private module (``tokenmill._core``).

A use is wrong when ``_x`` is defined in another module of the package and not in the one
that uses it (defined: a function, class or assignment at module or class level, or an
attribute of ``self`` or ``cls`` assigned in a method; ``tok._x = ...`` is a use). Names of
other packages (tiktoken's ``_encode_single_piece``, ``os._exit``) are not the package's
business. The exceptions below are listed with the reason for each.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "python" / "tokenmill"

# The native module is private to the package (users go through Tokenizer), but it is the
# package's own engine: these modules build on it.
CORE_USERS = {
    "tokenizer.py": "wraps the native tokenizer",
    "pretrained.py": "builds tokenizers straight from rank-file bytes (no bytes per token)",
    "training.py": "drives the native trainer",
    "patterns.py": "takes the named patterns from the native module, where the scanners are",
    "unicode_data.py": "runs the native regex engine on its tables",
    "formats/rankfile.py": "parses rank files natively",
    "formats/hf.py": "derives merge parents to check a file's merge list before building",
    "editing.py": "derives the merge parents of a pruned vocabulary before building it",
    "cpu.py": "reports the instruction set the native loops run",
}
# Tests and benchmarks of the native module itself.
CORE_TESTS = {
    "test_pretokenize.py": "tests the native splitters against the regex oracle",
    "test_train.py": "tests the native trainer against the reference",
    "test_sources.py": "tests the native cut rule against the Python one",
    "test_parallel_encode.py": "sets the native encoder's piece size, which the API fixes",
    "test_tokenizer.py": "builds a native tokenizer to wrap with Tokenizer.from_core",
    "bench_pretokenize.py": "times the native splitters",
}
# tiktoken's Encoding has these attributes and methods and code written for tiktoken uses them;
# the drop-in (compat/tiktoken/) defines them for that code, not as tokenmill's privates.
TIKTOKEN_NAMES = {
    "_pat_str",
    "_mergeable_ranks",
    "_special_tokens",
    "_encode_bytes",
    "_encode_only_native_bpe",
    "_encode_single_piece",
}
# (file, name): a test of that module that cannot do without it.
TEST_EXCEPTIONS = {
    ("test_corpus.py", "_checkpoint"): "a kill is injected at the driver's checkpoints",
    ("test_corpus.py", "_locked"): "the lock file is swapped while the driver acquires it",
}


def is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__") and name != "_"


@dataclass(frozen=True)
class Use:
    line: int
    name: str
    how: str


def module_name(path: Path) -> str:
    return path.relative_to(PACKAGE).as_posix()


@functools.cache
def trees() -> dict[str, ast.Module]:
    return {module_name(p): ast.parse(p.read_text("utf-8"), str(p)) for p in PACKAGE.rglob("*.py")}


def definitions(tree: ast.Module) -> set[str]:
    """The private names a module defines."""
    found: set[str] = set()

    def body_names(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                found.add(node.name)
                if isinstance(node, ast.ClassDef):
                    body_names(node.body)
            elif isinstance(node, ast.Assign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    for n in ast.walk(t):
                        if isinstance(n, ast.Name):
                            found.add(n.id)
            elif isinstance(node, ast.If | ast.Try):
                body_names(node.body)

    body_names(tree.body)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.ctx, ast.Store)
            and isinstance(node.value, ast.Name)
            and node.value.id in ("self", "cls")
        ):
            found.add(node.attr)
    return {n for n in found if is_private(n)}


@functools.cache
def owners() -> dict[str, set[str]]:
    """Private name -> the modules of the package that define it."""
    out: dict[str, set[str]] = {}
    for name, tree in trees().items():
        for n in definitions(tree):
            out.setdefault(n, set()).add(name)
    return out


def imported_from(tree: ast.Module) -> dict[str, str]:
    """Names bound by ``from tokenmill.x import y`` -> the module ``x`` (as a path)."""
    out: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tokenmill."):
            path = node.module.removeprefix("tokenmill.").replace(".", "/")  # type: ignore[union-attr]
            for alias in node.names:
                out[alias.asname or alias.name] = (
                    f"{path}/__init__.py" if (PACKAGE / path).is_dir() else f"{path}.py"
                )
    return out


def uses(tree: ast.Module) -> list[Use]:
    found: list[Use] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and is_private(node.attr):
            is_super = (
                isinstance(node.value, ast.Call)
                and isinstance(node.value.func, ast.Name)
                and node.value.func.id == "super"
            )
            how = "super()" if is_super else "attribute"
            if isinstance(node.value, ast.Name) and node.value.id == "tokenmill":
                how = "module"
            found.append(Use(node.lineno, node.attr, how))
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "tokenmill":
            if any(is_private(part) for part in (node.module or "").split(".")):
                found.append(Use(node.lineno, node.module or "", "module"))
            package = PACKAGE.joinpath(*(node.module or "").split(".")[1:])
            for alias in node.names:
                if is_private(alias.name):
                    is_module = any(
                        package.joinpath(alias.name + suffix).exists() for suffix in (".py", ".pyi")
                    )
                    found.append(Use(node.lineno, alias.name, "module" if is_module else "import"))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "tokenmill" and any(is_private(p) for p in parts):
                    found.append(Use(node.lineno, alias.name, "module"))
    return found


def overrides(tree: ast.Module) -> list[Use]:
    """Private names a class defines over those of a base imported from another module."""
    sources = imported_from(tree)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef):
            continue
        bases = [sources[b.id] for b in node.bases if isinstance(b, ast.Name) and b.id in sources]
        for item in node.body:
            names = []
            if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                names = [item.name]
            elif isinstance(item, ast.Assign):
                names = [t.id for t in item.targets if isinstance(t, ast.Name)]
            for n in names:
                base_defs = [definitions(trees()[b]) for b in bases if b in trees()]
                if is_private(n) and any(n in defs for defs in base_defs):
                    found.append(Use(item.lineno, n, "override"))
    return found


def violations(path: Path, module: str | None, core_ok: bool, exceptions: set[str]) -> list[str]:
    """The uses of other modules' private names in the file at ``path`` (``module``: its name
    in the package, if it is one of its modules)."""
    tree = ast.parse(path.read_text("utf-8"), str(path))
    own = definitions(tree)
    shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name
    bad = []
    for use in [*uses(tree), *overrides(tree)]:
        where = f"{shown}:{use.line}: {use.how} {use.name}"
        if use.how == "module":
            if not (core_ok and use.name in ("_core", "tokenmill._core")):
                bad.append(where)
            continue
        if use.name in exceptions or use.name in TIKTOKEN_NAMES:
            continue
        others = owners().get(use.name, set()) - {module}
        if not others:
            continue  # not the package's name, or only this module's
        if use.how in ("super()", "override", "import") or use.name not in own:
            bad.append(f"{where} (defined in {', '.join(sorted(others))})")
    return bad


def test_no_module_uses_another_modules_private_names():
    bad = []
    for name in sorted(trees()):
        bad += violations(PACKAGE / name, name, name in CORE_USERS, set())
    assert bad == []


def test_tests_and_benchmarks_use_the_public_api():
    bad = []
    files = [*(ROOT / "tests").glob("*.py"), *(ROOT / "benchmarks").glob("*.py")]
    for path in sorted(files):
        allowed = {n for (f, n) in TEST_EXCEPTIONS if f == path.name}
        bad += violations(path, None, path.name in CORE_TESTS, allowed)
    assert bad == []


def test_the_check_sees_what_it_forbids(tmp_path):
    # Each form of use, in a file of its own, is reported; the exceptions are only those.
    cases = {
        "attribute": "def f(tok):\n    return tok._core.tokens()\n",
        "inherited": (
            "from tokenmill.tokenizer import Tokenizer\n"
            "class T(Tokenizer):\n    def f(self):\n        return self._specials\n"
        ),
        "super": (
            "from tokenmill.tokenizer import Tokenizer\nclass T(Tokenizer):\n"
            "    def _special_args(self, a, d):\n        return super()._special_args(a, d)\n"
        ),
        "import": "from tokenmill.tokenizer import _threads\n",
        "module": "from tokenmill import _core\n",
    }
    for name, source in cases.items():
        path = tmp_path / f"{name}.py"
        path.write_text(source)
        assert violations(path, None, False, set()), name
    path = tmp_path / "fine.py"
    path.write_text("import os\ndef f(enc):\n    os._exit(0)\n    return enc._pat_str\n")
    assert violations(path, None, False, set()) == []
