"""Report import cycles between the modules of the Rust crate or of the Python package.

    python scripts/check_imports.py rust      # src/: one node per module file
    python scripts/check_imports.py python    # python/tokenmill: one node per module

Rust: an edge A -> B when A's code refers to an item of B: a `use` path, or a path in the code
(`crate::b::item`, `super::item` and `self::item` resolved, `child::item` for a module in scope).
Test modules count like any other code. A parent that only declares its children (`mod x;`) or
re-exports them (`pub use x::item`) has no edge to them for that. The same graph is checked
again between the crate's top-level modules (`crate::encode` with all the files under it), so
that two folders cannot depend on each other through different files.

Python: an edge for every import statement anywhere in a file (at module level or inside a
function), except those under `if TYPE_CHECKING:`; `from pkg import name` is an edge to
`pkg.name` when that is a module, else to `pkg`. Only the package's own modules are nodes.

Every cycle (a strongly connected component of more than one module) is printed with the
references that make it, and the exit status is 1 if there is any.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Ref:
    """One reference from a module to another: where it is and what it says."""

    line: int
    text: str


Graph = dict[str, dict[str, list[Ref]]]


# --- Rust ---------------------------------------------------------------------------------

_TOKEN = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<line_comment>//[^\n]*)
  | (?P<block_comment>/\*)
  | (?P<raw_string>b?r(?P<hashes>\#*)")
  | (?P<string>b?")
  | (?P<char>b?'(?:\\(?:x[0-9a-fA-F]{2}|u\{[0-9a-fA-F]+\}|.)|[^\\'\n])')
  | (?P<lifetime>'[A-Za-z_][A-Za-z0-9_]*)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*|\$crate)
  | (?P<number>[0-9][0-9A-Za-z_.]*)
  | (?P<path_sep>::)
  | (?P<punct>.)
    """,
    re.VERBOSE | re.DOTALL,
)


def rust_tokens(source: str) -> list[tuple[str, int]]:
    """The identifiers, `::` and punctuation of Rust source, with their line numbers; comments,
    strings and character literals are dropped."""
    out: list[tuple[str, int]] = []
    i, line = 0, 1
    while i < len(source):
        m = _TOKEN.match(source, i)
        if m is None:  # pragma: no cover - the last alternative matches any character
            raise ValueError(f"cannot read the Rust source at line {line}")
        kind, text = m.lastgroup, m.group()
        if kind == "hashes":
            kind = "raw_string"
        end = m.end()
        if kind == "block_comment":
            depth, j = 1, end
            while depth and j < len(source):
                if source.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif source.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            end = j
        elif kind == "raw_string":
            close = '"' + m.group("hashes")
            end = source.find(close, end)
            end = len(source) if end < 0 else end + len(close)
        elif kind == "string":
            j = end
            while j < len(source) and source[j] != '"':
                j += 2 if source[j] == "\\" else 1
            end = j + 1
        elif kind in ("ident", "path_sep", "punct"):
            out.append((text, line))
        line += source.count("\n", i, end)
        i = end
    return out


@dataclass
class UsePath:
    segments: tuple[str, ...]
    alias: str | None


def parse_use_tree(tokens: list[str], i: int, prefix: tuple[str, ...]) -> tuple[list[UsePath], int]:
    """The paths of the use tree that starts at `tokens[i]`, after `prefix`; and where it ends."""
    segments = list(prefix)
    while i < len(tokens):
        t = tokens[i]
        if t == "{":
            paths: list[UsePath] = []
            i += 1
            while i < len(tokens) and tokens[i] != "}":
                if tokens[i] == ",":
                    i += 1
                    continue
                inner, i = parse_use_tree(tokens, i, tuple(segments))
                paths.extend(inner)
            return paths, i + 1
        if t == "*":
            return [UsePath(tuple(segments), None)], i + 1
        if t == "::":
            i += 1
            continue
        if re.fullmatch(r"[A-Za-z_]\w*", t):
            if t == "self" and segments and segments == list(prefix):
                # `{self, ...}`: the prefix itself.
                alias = None
                if i + 2 < len(tokens) and tokens[i + 1] == "as":
                    alias, i = tokens[i + 2], i + 2
                return [UsePath(tuple(segments), alias)], i + 1
            segments.append(t)
            i += 1
            if i < len(tokens) and tokens[i] == "as":
                return [UsePath(tuple(segments), tokens[i + 1])], i + 2
            if i < len(tokens) and tokens[i] == "::":
                continue
            return [UsePath(tuple(segments), None)], i
        # `,` or `}` of an enclosing group, or `;`.
        return [UsePath(tuple(segments), None)], i
    return [UsePath(tuple(segments), None)], i


@dataclass
class RustFile:
    path: Path
    module: tuple[str, ...]


def rust_modules(src: Path) -> dict[tuple[str, ...], RustFile]:
    """Every module file of the crate rooted at `src/lib.rs`, by module path."""
    files: dict[tuple[str, ...], RustFile] = {}

    def visit(path: Path, module: tuple[str, ...]) -> None:
        files[module] = RustFile(path, module)
        tokens = [t for t, _ in rust_tokens(path.read_text(encoding="utf-8"))]
        # Children live next to `lib.rs` and `mod.rs`, else in a folder named as the file.
        folder = path.parent if path.name in ("lib.rs", "mod.rs") else path.with_suffix("")
        depth = 0
        for k, t in enumerate(tokens):
            if t == "{":
                depth += 1
            elif t == "}":
                depth -= 1
            elif (
                t == "mod"
                and depth == 0
                and k + 2 < len(tokens)
                and tokens[k + 2] == ";"
                and (k == 0 or tokens[k - 1] != "::")
            ):
                name = tokens[k + 1]
                for child in (folder / f"{name}.rs", folder / name / "mod.rs"):
                    if child.exists():
                        visit(child, (*module, name))
                        break

    visit(src / "lib.rs", ())
    return files


class RustScope:
    """What module paths mean inside one file: its module tree (file and inline modules)."""

    def __init__(self, files: dict[tuple[str, ...], RustFile]):
        self.files = files
        # Every module path (file or inline) -> the file module that holds it.
        self.owner: dict[tuple[str, ...], tuple[str, ...]] = {m: m for m in files}

    def add_inline(self, module: tuple[str, ...], owner: tuple[str, ...]) -> None:
        self.owner.setdefault(module, owner)

    def node_of(self, path: tuple[str, ...]) -> tuple[str, ...] | None:
        """The file module that holds the item or module `path` (absolute), if internal."""
        best = None
        for k in range(len(path) + 1):
            prefix = path[:k]
            if prefix in self.owner:
                best = self.owner[prefix]
            elif k > 0:
                break
        return best


def rust_file_refs(scope: RustScope, file: RustFile) -> list[tuple[tuple[str, ...], Ref, bool]]:
    """The module files `file` refers to: (target module path, where, is a re-export)."""
    source = file.path.read_text(encoding="utf-8")
    lines = source.splitlines()
    toks = rust_tokens(source)
    texts = [t for t, _ in toks]
    here = file.module
    # Pass 1: inline modules, and which module each token is in.
    inline_at: list[tuple[str, ...]] = []
    stack: list[tuple[str, ...] | None] = []
    current = here
    pending_mod: str | None = None
    for k, t in enumerate(texts):
        if t == "mod" and k + 2 < len(texts) and texts[k + 2] == "{":
            pending_mod = texts[k + 1]
        if t == "{":
            if pending_mod is not None and k >= 2 and texts[k - 2] == "mod":
                stack.append(current)
                current = (*current, pending_mod)
                scope.add_inline(current, here)
                pending_mod = None
            else:
                stack.append(None)
        elif t == "}" and stack:
            top = stack.pop()
            if top is not None:
                current = top
        inline_at.append(current)
    # Modules declared in each (inline or file) module of this file, and names brought in by
    # `use` (name -> absolute path), for resolving paths that start with a plain name.
    children: dict[tuple[str, ...], set[str]] = defaultdict(set)
    for module in scope.owner:
        if module and scope.owner.get(module[:-1]) == here and module[:-1][: len(here)] == here:
            children[module[:-1]].add(module[-1])
    aliases: dict[str, tuple[str, ...]] = {}

    def absolute(segments: tuple[str, ...], at: tuple[str, ...]) -> tuple[str, ...] | None:
        if not segments:
            return None
        first, rest = segments[0], segments[1:]
        if first == "crate":
            return rest
        if first in ("self", "super"):
            module = at
            while segments and segments[0] in ("self", "super"):
                if segments[0] == "super":
                    if not module:
                        return None
                    module = module[:-1]
                segments = segments[1:]
            return module + segments
        for k in range(len(at), -1, -1):
            if first in children.get(at[:k], set()) and at[:k][: len(here)] == here:
                return at[:k] + segments
        if first in aliases:
            return aliases[first] + rest
        return None  # another crate

    refs: list[tuple[tuple[str, ...], Ref, bool]] = []

    def add(target: tuple[str, ...] | None, line: int, reexport: bool) -> None:
        if target is None:
            return
        node = scope.node_of(target)
        ref = Ref(line, lines[line - 1].strip())
        if node is not None and node != here and (node, ref, reexport) not in refs:
            refs.append((node, ref, reexport))

    k = 0
    while k < len(toks):
        t, line = toks[k]
        at = inline_at[k]
        if t == "use" and (k == 0 or texts[k - 1] != "::"):
            visible = k > 0 and (
                texts[k - 1] == "pub" or (texts[k - 1] == ")" and "pub" in texts[max(0, k - 6) : k])
            )
            end = texts.index(";", k)
            paths, _ = parse_use_tree(texts[k + 1 : end], 0, ())
            for p in paths:
                target = absolute(p.segments, at)
                name = p.alias or (p.segments[-1] if p.segments else None)
                if target is not None and name and name not in ("self", "*"):
                    aliases[name] = target
                # A re-export of the file's own descendant is no edge.
                reexport = visible and target is not None and target[: len(here)] == here
                add(target, line, reexport)
            k = end + 1
            continue
        starts_path = (
            (k + 1 < len(texts) and texts[k + 1] == "::")
            and (k == 0 or texts[k - 1] != "::")
            and re.fullmatch(r"[A-Za-z_]\w*|\$crate", t) is not None
        )
        if starts_path:
            segments = [t]
            j = k + 1
            while (
                j + 1 < len(texts)
                and texts[j] == "::"
                and re.fullmatch(r"[A-Za-z_]\w*", texts[j + 1])
            ):
                segments.append(texts[j + 1])
                j += 2
            # `pub(in crate::x)` names where an item is visible, not an item it uses.
            in_visibility = k >= 3 and texts[k - 3 : k] == ["pub", "(", "in"]
            if not in_visibility:
                add(absolute(tuple(segments), at), line, False)
            k = j
            continue
        k += 1
    return refs


def rust_graph(src: Path) -> Graph:
    files = rust_modules(src)
    scope = RustScope(files)
    # Inline modules first (a file may refer to another file's inline `tests`), then refs.
    for f in files.values():
        rust_file_refs(scope, f)
    graph: Graph = {name_of(m): {} for m in files}
    for f in files.values():
        for target, ref, reexport in rust_file_refs(scope, f):
            if not reexport:
                graph[name_of(f.module)].setdefault(name_of(target), []).append(ref)
    return graph


def top_level(graph: Graph) -> Graph:
    """The graph between the crate's top-level modules, each with all its descendants (an edge
    from `crate::encode::parallel` to `crate::train` is one from `crate::encode` to it)."""

    def top(name: str) -> str:
        return "::".join(name.split("::")[:2])

    tops: Graph = {top(a): {} for a in graph}
    for a, targets in graph.items():
        for b, refs in targets.items():
            if top(a) != top(b):
                tops[top(a)].setdefault(top(b), []).extend(
                    Ref(r.line, f"{a}: {r.text}") for r in refs
                )
    return tops


def name_of(module: tuple[str, ...]) -> str:
    return "crate" + "".join("::" + m for m in module)


# --- Python -------------------------------------------------------------------------------


def python_modules(package: Path) -> dict[str, Path]:
    """Every module of the package in `package` (a folder with `__init__.py`), by name."""
    base = package.parent
    modules = {}
    for path in sorted(package.rglob("*")):
        # A native module (`_core.*.so`) is known by its stub; it imports nothing of ours.
        if path.suffix not in (".py", ".pyi") or path.is_dir():
            continue
        parts = list(path.relative_to(base).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        name = ".".join(parts)
        if path.suffix == ".py" or name not in modules:
            modules[name] = path
    return modules


def _type_checking_ifs(tree: ast.AST) -> set[int]:
    """The ids of the import nodes under `if TYPE_CHECKING:` (or `typing.TYPE_CHECKING`)."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            test = node.test
            name = test.id if isinstance(test, ast.Name) else getattr(test, "attr", None)
            if name == "TYPE_CHECKING":
                for stmt in node.body:
                    skipped.update(id(n) for n in ast.walk(stmt))
    return skipped


def python_graph(package: Path) -> Graph:
    modules = python_modules(package)
    graph: Graph = {m: {} for m in modules}
    for name, path in modules.items():
        if path.suffix != ".py":
            continue
        source = path.read_text(encoding="utf-8")
        lines = source.splitlines()
        tree = ast.parse(source, str(path))
        skipped = _type_checking_ifs(tree)
        is_package = path.name == "__init__.py"
        here = name if is_package else name.rpartition(".")[0]
        for node in ast.walk(tree):
            if id(node) in skipped:
                continue
            targets: list[str] = []
            if isinstance(node, ast.Import):
                for alias in node.names:
                    targets.append(_known(alias.name, modules))
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = here.split(".")
                    base = base[: len(base) - (node.level - 1)]
                    pkg = ".".join(base + ([node.module] if node.module else []))
                else:
                    pkg = node.module or ""
                for alias in node.names:
                    full = f"{pkg}.{alias.name}"
                    targets.append(full if full in modules else _known(pkg, modules))
            else:
                continue
            for target in targets:
                if target and target != name:
                    ref = Ref(node.lineno, lines[node.lineno - 1].strip())
                    refs = graph[name].setdefault(target, [])
                    if ref not in refs:
                        refs.append(ref)
    return graph


def _known(module: str, modules: dict[str, Path]) -> str:
    """`module`, or its longest prefix that is a module of the package ('' if none)."""
    parts = module.split(".")
    for k in range(len(parts), 0, -1):
        candidate = ".".join(parts[:k])
        if candidate in modules:
            return candidate
    return ""


# --- Cycles -------------------------------------------------------------------------------


def cycles(graph: Graph) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = [0]

    def strongconnect(v: str) -> None:
        # Iterative, so that deep graphs do not reach Python's recursion limit.
        work = [(v, iter(sorted(graph.get(v, {}))))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        while work:
            node, children = work[-1]
            advanced = False
            for w in children:
                if w not in graph:
                    continue
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph.get(w, {})))))
                    advanced = True
                    break
                if w in on_stack:
                    low[node] = min(low[node], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.append(w)
                    if w == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            strongconnect(v)
    return sorted(found)


def report(graph: Graph, where: str) -> int:
    found = cycles(graph)
    edges = sum(len(targets) for targets in graph.values())
    if not found:
        print(f"{where}: no import cycles among {len(graph)} modules ({edges} edges)")
        return 0
    for component in found:
        members = set(component)
        print(f"{where}: cycle among {len(component)} modules: {', '.join(component)}")
        for a in component:
            for b in sorted(graph[a]):
                if b in members:
                    for ref in graph[a][b]:
                        print(f"  {a} -> {b}  (line {ref.line}: {ref.text})")
    print(f"{where}: {len(found)} cycle(s) among {len(graph)} modules ({edges} edges)")
    return 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=["rust", "python"])
    parser.add_argument(
        "--root", type=Path, default=ROOT, help="the repository (default: this one)"
    )
    args = parser.parse_args(argv)
    if args.mode == "rust":
        graph = rust_graph(args.root / "src")
        files = report(graph, "src (module files)")
        return report(top_level(graph), "src (top-level modules)") | files
    return report(python_graph(args.root / "python" / "tokenmill"), "python/tokenmill")


if __name__ == "__main__":
    sys.exit(main())
