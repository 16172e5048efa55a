"""No module imports in a circle (DESIGN.md §1), as scripts/check_imports.py finds them: the
Rust crate's module files and top-level modules, and the Python package's modules."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "check_imports.py"


def check(mode: str, root: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), mode, "--root", str(root)],
        capture_output=True,
        text=True,
        check=False,
    )


def test_rust_modules_import_in_no_cycle() -> None:
    done = check("rust")
    assert done.returncode == 0, done.stdout + done.stderr


def test_python_modules_import_in_no_cycle() -> None:
    done = check("python")
    assert done.returncode == 0, done.stdout + done.stderr


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_rust_cycles_are_found_with_the_references_that_make_them(tmp_path: Path) -> None:
    # `a` and `b` use each other (through `crate::`, `super::` and a `use` inside a test
    # module); `c`'s parent only declares and re-exports it; `d` uses its parent's item
    # and the parent uses `d`'s.
    write(
        tmp_path,
        {
            "src/lib.rs": (
                "mod a;\nmod b;\npub mod c;\nmod d;\npub use c::Thing;\npub struct E;\n"
                "fn h() -> d::D { todo!() }\n"
            ),
            "src/a.rs": "pub struct A;\nfn f() -> crate::b::B { todo!() }\n",
            "src/b.rs": (
                "pub struct B;\n#[cfg(test)]\nmod tests {\n    use super::super::a::A;\n}\n"
            ),
            "src/c/mod.rs": "mod inner;\npub use inner::Thing;\n",
            "src/c/inner.rs": "pub struct Thing;\n// crate::a::A in a comment is no reference\n",
            "src/d.rs": "pub struct D;\nfn g() { let _ = crate::E; }\n",
        },
    )
    done = check("rust", tmp_path)
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    cycles = [line for line in lines if "cycle among" in line]
    assert any("crate::a, crate::b" in line for line in cycles), done.stdout
    assert any("crate, crate::d" in line for line in cycles), done.stdout
    assert not any("crate::c" in line for line in cycles), done.stdout
    assert any(
        "crate::b -> crate::a" in line and "use super::super::a::A" in line for line in lines
    )


def test_python_cycles_count_imports_in_functions_but_not_for_type_checking(
    tmp_path: Path,
) -> None:
    write(
        tmp_path,
        {
            "python/tokenmill/__init__.py": "",
            "python/tokenmill/a.py": "from tokenmill import b\n",
            "python/tokenmill/b.py": "def f():\n    from tokenmill.a import thing\n",
            "python/tokenmill/c.py": (
                "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from tokenmill import d\n"
            ),
            "python/tokenmill/d.py": "import tokenmill.c\n",
        },
    )
    done = check("python", tmp_path)
    assert done.returncode == 1
    cycles = [line for line in done.stdout.splitlines() if "cycle among" in line]
    assert cycles == ["python/tokenmill: cycle among 2 modules: tokenmill.a, tokenmill.b"], (
        done.stdout
    )
