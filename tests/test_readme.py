"""README.md is true: every command and example in it runs and shows what it says.

Oracle: the README itself. Its code blocks are run in order, in one temporary folder that holds
``holmes.txt`` and ``shakespeare.txt`` (the corpora bundled with tokenmill), as a reader would:

- ```` ```sh ```` blocks: every line is a shell command that must succeed;
- ```` ```console ```` blocks: ``$ command`` lines, each followed by the output it shows;
  the command's stdout must match that output (``...`` stands for any text, as in doctest), or,
  when the shown output is a ``tokenmill: error:`` line, its stderr, with exit status 2;
  a ``tokenmill serve`` command is started in the background on a free port (which replaces
  8000 in the commands and output after it) and stopped at the end of the session;
- ```` ```pycon ```` blocks: doctests (``...`` as above), sharing one namespace;
- ```` ```python ```` blocks: executed in that namespace.

The commands run through bash with this interpreter's environment first on PATH, so
``tokenmill`` is the one installed beside it. A block preceded by ``<!-- not run: REASON -->``
is skipped with that reason; a block with the set-up commands (``./scripts/...``) is skipped,
since CI runs them. Blocks run once each, in README order, whatever order the tests are run in.

Also here: the speed tables are those ``scripts/readme_tables.py`` writes from
benchmarks/results, the README stays short, and results/ keeps one run per benchmark.
"""

from __future__ import annotations

import doctest
import gzip
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
BIN = Path(sys.executable).parent
NOT_RUN = re.compile(r"<!--\s*not run:\s*(.*?)\s*-->")
FENCE = re.compile(r"^```(\w*)\s*$")
LANGUAGES = ("sh", "console", "pycon", "python")
# The corpora the README's examples use, as bundled with tokenmill.
INPUTS = {"holmes.txt": "holmes.txt.gz", "shakespeare.txt": "tinyshakespeare.txt.gz"}
SERVE_PORT = "127.0.0.1:8000"
SHELL_BUILTINS = {"echo", "printf", "cd", "test", "true", "false"}


class SkipBlock(Exception):
    """A block that cannot run here (a program it needs is missing)."""


@dataclass
class Block:
    lang: str
    line: int  # of the opening fence, 1-based
    text: str
    not_run: str | None = None


def blocks(text: str) -> list[Block]:
    """The README's runnable code blocks, in order."""
    found: list[Block] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        start, lang = i, m.group(1)
        i += 1
        body = []
        while i < len(lines) and lines[i].rstrip() != "```":
            body.append(lines[i])
            i += 1
        i += 1
        if lang not in LANGUAGES:
            continue
        before = next((s for s in reversed(lines[:start]) if s.strip()), "")
        skip = NOT_RUN.search(before)
        found.append(Block(lang, start + 1, "\n".join(body) + "\n", skip and skip.group(1)))
    return found


def console_steps(text: str) -> list[tuple[str, str]]:
    """``$ command`` lines (with ``\\`` continuations) and the output shown after each."""
    steps: list[tuple[str, list[str]]] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("$ "):
            cmd = line[2:]
            while cmd.endswith("\\") and i + 1 < len(lines):
                i += 1
                cmd = cmd[:-1] + "\n" + lines[i]
            steps.append((cmd, []))
        elif steps:
            steps[-1][1].append(line)
        else:
            raise ValueError(f"output before any command: {line!r}")
        i += 1
    return [(cmd, "\n".join(out)) for cmd, out in steps]


def matches(want: str, got: str) -> bool:
    """Doctest's comparison with ELLIPSIS, ignoring trailing spaces and blank lines at the end."""

    def norm(s: str) -> str:
        lines = [line.rstrip() for line in s.splitlines()]
        while lines and not lines[-1]:
            lines.pop()
        return "\n".join(lines) + "\n" if lines else ""

    return doctest.OutputChecker().check_output(norm(want), norm(got), doctest.ELLIPSIS)


@dataclass
class Session:
    """The README run so far: its folder, its Python namespace, its servers, each outcome."""

    folder: Path
    blocks: list[Block]
    globs: dict[str, Any] = field(default_factory=dict)
    outcomes: list[tuple[str, str]] = field(default_factory=list)
    servers: list[subprocess.Popen[str]] = field(default_factory=list)
    port: str | None = None

    def run_through(self, index: int) -> tuple[str, str]:
        while len(self.outcomes) <= index:
            block = self.blocks[len(self.outcomes)]
            try:
                self.outcomes.append(self.run(block))
            except SkipBlock as e:
                self.outcomes.append(("skip", f"README line {block.line}: {e}"))
            except Exception as e:  # a broken block fails its own test, not the next ones
                self.outcomes.append(("fail", f"{type(e).__name__}: {e}"))
        return self.outcomes[index]

    def run(self, block: Block) -> tuple[str, str]:
        if block.not_run:
            return ("skip", f"README line {block.line}: not run: {block.not_run}")
        if re.search(r"^\s*\./scripts/", block.text, re.M):
            return ("skip", f"README line {block.line}: the set-up commands (CI runs them)")
        if block.lang in ("sh", "console") and not (BIN / "tokenmill").exists():
            return ("skip", f"no tokenmill command beside {sys.executable}")
        if block.lang == "sh":
            for line in block.text.splitlines():
                if line.strip() and not line.lstrip().startswith("#"):
                    p = self.shell(line)
                    if p.returncode != 0:
                        return ("fail", f"`{line}` exited {p.returncode}:\n{p.stdout}{p.stderr}")
            return ("ok", "")
        if block.lang == "console":
            for cmd, want in console_steps(block.text):
                problem = self.console(cmd, want)
                if problem:
                    return ("fail", f"README line {block.line}: `{cmd}`\n{problem}")
            return ("ok", "")
        return self.python(block)

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
        env["TOKENMILL_CACHE_DIR"] = str(self.folder / ".cache")
        env.pop("NO_COLOR", None)
        return env

    def shell(self, cmd: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["bash", "-c", cmd],
            cwd=self.folder,
            env=self.env(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=600,
        )

    def with_port(self, s: str) -> str:
        return s.replace(SERVE_PORT, f"127.0.0.1:{self.port}") if self.port else s

    def console(self, cmd: str, want: str) -> str | None:
        if re.match(r"\s*tokenmill serve\b", cmd):
            return self.serve(cmd, want)
        cmd, want = self.with_port(cmd), self.with_port(want)
        program = cmd.split()[0]
        if program not in SHELL_BUILTINS and not shutil.which(program, path=self.env()["PATH"]):
            raise SkipBlock(f"{program} is not installed")
        p = self.shell(cmd)
        if want.startswith("tokenmill: error:"):
            if p.returncode != 2 or not matches(want, p.stderr):
                return (
                    f"expected exit status 2 and stderr:\n{want}\ngot {p.returncode}:\n{p.stderr}"
                )
            return None
        if p.returncode != 0:
            return f"exit status {p.returncode}:\n{p.stdout}{p.stderr}"
        if not matches(want, p.stdout):
            return f"expected:\n{want}\ngot:\n{p.stdout}"
        return None

    def serve(self, cmd: str, want: str) -> str | None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = str(s.getsockname()[1])
        cmd = re.sub(r"tokenmill serve\b", f"tokenmill serve --port {self.port}", cmd, count=1)
        p = subprocess.Popen(
            ["bash", "-c", f"exec {cmd}"],
            cwd=self.folder,
            env=self.env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        self.servers.append(p)
        first: list[str] = []
        reader = threading.Thread(target=lambda: first.append(p.stdout.readline()), daemon=True)  # type: ignore[union-attr]
        reader.start()
        reader.join(120)
        got = first[0] if first else ""
        if not matches(self.with_port(want), got):
            return f"expected:\n{self.with_port(want)}\ngot:\n{got}"
        return None

    def python(self, block: Block) -> tuple[str, str]:
        cwd = os.getcwd()
        os.chdir(self.folder)
        try:
            if block.lang == "python":
                exec(compile(block.text, f"README.md:{block.line}", "exec"), self.globs)
                return ("ok", "")
            parser = doctest.DocTestParser()
            test = parser.get_doctest(block.text, self.globs, "README", "README.md", block.line)
            runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
            out: list[str] = []
            runner.run(test, out=out.append, clear_globs=False)
            self.globs.update(test.globs)  # DocTest works on a copy of the namespace
            if runner.failures:
                return ("fail", "".join(out))
            return ("ok", "")
        finally:
            os.chdir(cwd)

    def close(self) -> None:
        for p in self.servers:
            p.terminate()
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()


BLOCKS = blocks(README.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    folder = tmp_path_factory.mktemp("readme")
    data = resources.files("tokenmill.data")
    for name, bundled in INPUTS.items():
        (folder / name).write_bytes(gzip.decompress(data.joinpath(bundled).read_bytes()))
    s = Session(folder, BLOCKS)
    yield s
    s.close()


@pytest.mark.parametrize(
    "index", range(len(BLOCKS)), ids=[f"{b.lang}-line{b.line}" for b in BLOCKS]
)
def test_readme_block(session: Session, index: int) -> None:
    outcome, detail = session.run_through(index)
    if outcome == "skip":
        pytest.skip(detail)
    assert outcome == "ok", detail


def test_readme_has_examples() -> None:
    langs = {b.lang for b in BLOCKS}
    assert {"sh", "console", "pycon"} <= langs, langs
    exempt = [b for b in BLOCKS if b.not_run]
    assert len(exempt) <= 3, f"keep the exemptions few: {[(b.line, b.not_run) for b in exempt]}"


def test_no_example_escapes_the_test() -> None:
    """A command or ``>>>`` line in a block of another kind (```text, ```) would not be run."""
    lines = README.read_text(encoding="utf-8").splitlines()
    untested, lang = [], None
    for n, line in enumerate(lines, 1):
        m = FENCE.match(line)
        if m and lang is None:
            lang = m.group(1)
        elif line.rstrip() == "```" and lang is not None:
            lang = None
        elif lang is not None and lang not in LANGUAGES:
            if re.match(r"\s*(\$ |>>> |tokenmill )", line):
                untested.append(f"line {n}: {line.strip()}")
    assert not untested, f"examples outside sh/console/pycon/python blocks: {untested}"


def test_console_steps() -> None:
    steps = console_steps("$ echo a \\\n  b\na b\n$ true\n")
    assert steps == [("echo a \n  b", "a b"), ("true", "")]
    assert matches("x ... z\n", "x y z\n") and not matches("x\n", "y\n")
    assert matches("a\n...\nd\n", "a\nb\nc\nd\n")


def test_speed_tables_are_generated() -> None:
    """The README's tables are exactly what scripts/readme_tables.py writes from the results."""
    p = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "readme_tables.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert p.returncode == 0, p.stdout + p.stderr


def test_readme_is_short() -> None:
    """README.md is for users; method and history go to docs/performance.md."""
    lines = README.read_text(encoding="utf-8").count("\n")
    assert lines <= 400, f"README.md has {lines} lines: move detail to docs/"


def test_results_hold_one_run_per_benchmark() -> None:
    """benchmarks/results keeps the latest run of each benchmark, as <benchmark>-<date>.*"""
    runs: dict[str, set[str]] = {}
    for path in (ROOT / "benchmarks" / "results").iterdir():
        m = re.fullmatch(r"([a-z]+)-(\d{4}-\d{2}-\d{2})\.(txt|json)", path.name)
        assert m, f"{path.name}: name results <benchmark>-<YYYY-MM-DD>.txt/.json"
        runs.setdefault(m.group(1), set()).add(m.group(2))
    several = {bench: sorted(dates) for bench, dates in runs.items() if len(dates) > 1}
    assert not several, (
        f"keep only the latest run of each benchmark (git keeps the rest): {several}"
    )


def test_code_points_to_sections_that_exist() -> None:
    """A comment that says a measurement justifies a decision names a section of
    docs/performance.md ('Decisions in the code'); each named section exists."""
    doc = (ROOT / "docs" / "performance.md").read_text(encoding="utf-8")
    sections = set(re.findall(r"^### (.+)$", doc, flags=re.M))
    named: dict[str, str] = {}
    for path in [*(ROOT / "src").rglob("*.rs"), *(ROOT / "python").rglob("*.py")]:
        text = path.read_text(encoding="utf-8")
        for name in re.findall(r"docs/performance\.md,\s*(?:(?://[/!]?|#)\s*)?'([^']+)'", text):
            # A name may wrap onto the comment's next line.
            name = " ".join(re.sub(r"\n\s*(?://[/!]?|#)", " ", name).split())
            named.setdefault(name, str(path.relative_to(ROOT)))
    assert named, "no pointers found: the pattern no longer matches the comments"
    missing = {name: where for name, where in named.items() if name not in sections}
    assert not missing, f"sections named in code but not in docs/performance.md: {missing}"
