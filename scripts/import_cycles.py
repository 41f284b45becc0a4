"""The module-level import graph of a package and its cycles; also what the runtime must never import.

    python scripts/import_cycles.py [src]      # prints each cycle and the forbidden imports; exit 1 if any

Imports inside functions and `TYPE_CHECKING` blocks are left out: they run after every module has loaded.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

# The runtime never imports research code, and only training imports training code.
TRAINING = ("ticktock.train", "ticktock.commands.train")


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def module_level(tree: ast.Module) -> list[ast.AST]:
    """The import statements a module runs when it loads: not those in functions or under `if TYPE_CHECKING`."""
    out, todo = [], list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            out.append(node)
        elif isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            continue
        elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            todo.extend(ast.iter_child_nodes(node))
    return out


def module_imports(name: str, path: Path, everywhere: bool = False) -> set[str]:
    """Absolute names of what `path` imports at module level, or `everywhere` (function bodies too);
    `from . import x` gives `pkg.x`."""
    pkg = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    tree = ast.parse(path.read_text())
    nodes = [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))] if everywhere else module_level(tree)
    out: set[str] = set()
    for n in nodes:
        if isinstance(n, ast.ImportFrom):
            base = ".".join(pkg[:len(pkg) - n.level + 1] + (n.module or "").split(".")) if n.level else n.module
            base = base.strip(".") if base else ""
            out.update({base} | {f"{base}.{a.name}" for a in n.names})
        else:
            out.update(a.name for a in n.names)
    return out


def import_graph(src: Path, package: str = "ticktock") -> dict[str, set[str]]:
    root = src / package
    mods = {module_name(p, root): p for p in root.rglob("*.py")}
    return {m: {d for d in module_imports(m, p) if d in mods and d != m} for m, p in mods.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def forbidden_imports(src: Path, package: str = "ticktock") -> list[str]:
    """'module -> import' for every runtime module importing `experiments` or training code."""
    root = src / package
    bad = []
    for p in sorted(root.rglob("*.py")):
        m = module_name(p, root)
        if m.startswith(TRAINING):
            continue
        names = module_imports(m, p, everywhere=True)
        bad += [f"{m} -> {d}" for d in sorted(names) if d.startswith(("experiments", *TRAINING))]
    return bad


def main() -> int:
    src = Path(sys.argv[1] if len(sys.argv) > 1 else "src")
    graph = import_graph(src)
    found = cycles(graph)
    for c in found:
        print("cycle:", " -> ".join(c))
    bad = forbidden_imports(src)
    for b in bad:
        print("forbidden:", b)
    print(f"{len(found)} cycles among {len(graph)} modules; {len(bad)} forbidden imports")
    return 1 if found or bad else 0


if __name__ == "__main__":
    sys.exit(main())
