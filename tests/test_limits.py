"""The size limits of the project's charter, measured on the source with `ast`.

- at most 12 modules directly in kweval/ (the rest lives in subpackages that name the design);
- no product module (kweval/, dashboard/, pages/, app.py) over 500 lines;
- no function over 80 lines, unless `LONG_FUNCTIONS` names it with the reason (its docstring says it too);
- app.py a short shell (at most 80 lines).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "kweval"
MAX_TOP_MODULES = 12
MAX_SHELL_LINES = 80


def product_files() -> list[Path]:
    """Every Python file of the product: the core, the dashboard's modules, its pages and the shell."""
    return sorted([*CORE.rglob("*.py"), *(ROOT / "dashboard").glob("*.py"), *(ROOT / "pages").glob("*.py")]) + [
        ROOT / "app.py"
    ]


MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 80
# "path:function" -> why it is longer than MAX_FUNCTION_LINES (empty: every function fits)
LONG_FUNCTIONS: dict[str, str] = {}


def functions(path: Path) -> list[tuple[str, int]]:
    """(name, lines) of every function and method in a file, nested ones too."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return [
        (node.name, node.end_lineno - node.lineno + 1)
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno is not None
    ]


def test_few_modules_directly_in_kweval():
    top = sorted(p.name for p in CORE.glob("*.py"))
    assert len(top) <= MAX_TOP_MODULES, top


def test_no_module_over_500_lines():
    long = {
        p.relative_to(ROOT).as_posix(): n
        for p in product_files()
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert long == {}


def test_no_function_over_80_lines_without_a_reason():
    long = {
        f"{p.relative_to(ROOT).as_posix()}:{name}": n
        for p in product_files()
        for name, n in functions(p)
        if n > MAX_FUNCTION_LINES
    }
    assert set(long) <= set(LONG_FUNCTIONS), {k: v for k, v in long.items() if k not in LONG_FUNCTIONS}
    assert all(reason.strip() for reason in LONG_FUNCTIONS.values())
    stale = set(LONG_FUNCTIONS) - set(long)
    assert not stale, f"allowed but no longer long: {sorted(stale)}"


def test_app_is_a_short_shell():
    assert len((ROOT / "app.py").read_text(encoding="utf-8").splitlines()) <= MAX_SHELL_LINES


def test_the_measure_sees_nested_functions_and_methods(tmp_path: Path):
    sample = tmp_path / "m.py"
    source = "class A:\n    def f(self):\n        def g():\n            pass\n        return g\n"
    sample.write_text(source, encoding="utf-8")
    assert sorted(functions(sample)) == [("f", 4), ("g", 2)]
