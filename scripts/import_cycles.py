"""The module-level import graph of src/ticktock and its cycles (imports inside functions and TYPE_CHECKING blocks
left out: they run after every module has loaded). Usage: python scripts/import_cycles.py src"""
import ast, sys
from pathlib import Path
root = Path(sys.argv[1]) / "ticktock"
def modname(p):
    rel = p.relative_to(root.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__": parts = parts[:-1]
    return ".".join(parts)
mods = {modname(p): p for p in root.rglob("*.py")}
def resolve(cur, is_pkg, level, module):
    base = cur.split(".") if is_pkg else cur.split(".")[:-1]
    if level: base = base[: len(base) - (level - 1)]
    return ".".join(base + (module.split(".") if module else []))
graph = {}
for m, p in mods.items():
    tree = ast.parse(p.read_text())
    deps = set()
    for node in tree.body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test): continue
        for n in ast.walk(node) if isinstance(node, (ast.Import, ast.ImportFrom, ast.If, ast.Try)) else []:
            if isinstance(n, ast.ImportFrom) and (n.level or (n.module or "").startswith("ticktock")):
                t = resolve(m, p.name == "__init__.py", n.level, n.module) if n.level else n.module
                for a in n.names:
                    cand = f"{t}.{a.name}"
                    deps.add(cand if cand in mods else t)
            elif isinstance(n, ast.Import):
                for a in n.names:
                    if a.name.startswith("ticktock"): deps.add(a.name)
    # importing a.b.c runs a and a.b first
    graph[m] = {d for d in deps if d in mods and d != m}
    parent = m.rsplit(".", 1)[0] if "." in m else None
sys.setrecursionlimit(10000)
# Tarjan SCC
index, low, stack, on, out, i = {}, {}, [], set(), [], [0]
def sc(v):
    index[v] = low[v] = i[0]; i[0] += 1; stack.append(v); on.add(v)
    for w in graph[v]:
        if w not in index: sc(w); low[v] = min(low[v], low[w])
        elif w in on: low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        comp = []
        while True:
            w = stack.pop(); on.discard(w); comp.append(w)
            if w == v: break
        if len(comp) > 1: out.append(sorted(comp))
for v in graph:
    if v not in index: sc(v)
for c in out: print("cycle:", c)
print(len(out), "cycles among", len(graph), "modules")
