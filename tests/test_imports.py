"""The runtime's import rules: no module-level import cycles; no import of `experiments` or of training code
outside training (scripts/import_cycles.py)."""

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("import_cycles", ROOT / "scripts" / "import_cycles.py")
ic = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ic)


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = root / "ticktock" / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root


def test_the_package_has_no_cycles_and_no_forbidden_imports():
    assert ic.cycles(ic.import_graph(ROOT / "src")) == []
    assert ic.forbidden_imports(ROOT / "src") == []


def test_a_cycle_is_found_and_function_level_imports_are_not_edges(tmp_path):
    src = write(tmp_path, {"__init__.py": "", "a.py": "from .b import x\n", "b.py": "from .a import y\n",
                           "c.py": "def f():\n    from .d import z\n", "d.py": "from .c import f\n"})
    assert ic.cycles(ic.import_graph(src)) == [["ticktock.a", "ticktock.b"]]


def test_runtime_imports_of_training_or_experiments_are_forbidden(tmp_path):
    src = write(tmp_path, {"__init__.py": "", "bench/__init__.py": "def f():\n    from ..train import base\n",
                           "session.py": "import experiments.probe\n", "train/__init__.py": "",
                           "train/base.py": "from ..bench import f\n"})
    assert ic.forbidden_imports(src) == ["ticktock.bench -> ticktock.train", "ticktock.bench -> ticktock.train.base",
                                         "ticktock.session -> experiments.probe"]
