"""The import rules of ARCHITECTURE.md, read from the source with `ast` (every import, also inside functions).

0. Arrows point down: each part of `kweval/` sits on a layer of `LAYERS`, and a module imports only
   its own part or parts on lower layers; no two modules import each other, however indirectly.
1. `kweval/` never imports streamlit, the dashboard or app.py: the core runs without a UI.
2. torch and the model libraries are imported only by the embedder modules listed in EMBEDDERS.
3. Dashboard pages (pages/) never import metric internals: the matching, ranking,
   metric and normalization modules, or any private (underscore) name of kweval.  They call
   kweval's public functions, which the CLI and the tests call too.
4. The dashboard's presentation modules (escaping, highlighting, URL state, explorer tables,
   style) never import streamlit: they are plain functions, tested and benchmarked without a server.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "kweval"
PAGES = ROOT / "pages"

UI_PACKAGES = {"streamlit", "dashboard", "app", "plotly"}
MODEL_PACKAGES = {"torch", "transformers", "sentence_transformers", "onnxruntime", "optimum"}
EMBEDDERS = {
    "kweval/embeddings/semantic.py",
    "kweval/embeddings/onnx.py",
    "kweval/legacy/encoder.py",
}  # where a model is loaded
STREAMLIT_FREE = (
    "escape",
    "highlight",
    "keyword_html",
    "html_holes",
    "selection",
    "links",
    "review_tables",
    "style",
    "report_view",
    "failures_view",
    "history_chart",
    "gap_view",
    "grounding_html",
    "vega_specs",
    "svg_charts",
)
# The parts of kweval from the bottom up; a part imports only its own modules and lower layers' parts.
LAYERS = [
    {
        "kweval._arrays",
        "kweval.extras",
        "kweval.cachedir",
        "kweval.files",
        "kweval.messages",
        "kweval.sqlite",
        "kweval.__version__",
    },  # foundations
    {"kweval.data"},  # datasets and their readers
    {"kweval.text"},  # normalization, stemming, matching, present/absent
    {"kweval.metrics"},  # metric families and the registry
    {"kweval.embeddings"},  # models, ONNX, the vector store, similarities
    {"kweval.beyond"},  # beyond the reference list: grounding in the document, diversity of a list
    {"kweval.evaluation"},  # options, the pipeline, add-ons, aggregation, slices
    {
        "kweval.stats",
        "kweval.keyphrase",
        "kweval.explain",
        "kweval.legacy",
        "kweval.scale",
        "kweval.judgments",
    },  # siblings: none imports another
    {"kweval.lattice"},  # every mixture of the keyphrase presets' conventions; gaps between protocols decomposed
    {"kweval.io"},  # reports, the protocol card, output files, export
    {"kweval.runs"},  # the run history: recorded evaluations, paired comparisons of runs, the regression gate
    {"kweval.cli"},  # every command
    {"kweval", "kweval.__main__"},  # the package's face and `python -m kweval`
]
METRIC_INTERNALS = {
    "kweval.text.matching",
    "kweval.metrics.ranking",
    "kweval.metrics.set_based",
    "kweval.metrics.weighted",
    "kweval.metrics.ranked",
    "kweval.metrics.keyphrase",
    "kweval.metrics.present_absent",
    "kweval.metrics.ratios",
    "kweval.text.normalize",
    "kweval._arrays",
}


def imports(path: Path, root: Path = ROOT) -> list[tuple[int, str, str | None]]:
    """(line, module, imported name or None) of every import statement in a file, relative imports resolved."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = ".".join(path.relative_to(root).with_suffix("").parts[:-1])
    found: list[tuple[int, str, str | None]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name, None) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parent + ([base] if base else []))
            found += [(node.lineno, base, alias.name) for alias in node.names]
    return found


def rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def core_files() -> list[Path]:
    return sorted(CORE.rglob("*.py"))


def top(module: str) -> str:
    return module.split(".")[0]


def test_the_rules_see_every_import_form(tmp_path: Path):
    """The parser is what the rules rest on: it finds nested, aliased and relative imports."""
    sample = tmp_path / "kweval" / "data" / "probe.py"
    sample.parent.mkdir(parents=True)
    sample.write_text(
        "import os, torch as t\ndef f():\n    from streamlit import cache_data\n    from ..matching import _x\n",
        encoding="utf-8",
    )
    found = imports(sample, root=tmp_path)
    assert found == [(1, "os", None), (1, "torch", None), (3, "streamlit", "cache_data"), (4, "kweval.matching", "_x")]


def part(module: str) -> str:
    """The part of kweval a dotted module belongs to: `kweval.text.matching` -> `kweval.text`."""
    parts = module.split(".")
    return ".".join(parts[:2])


def layer(module: str) -> int:
    found = [i for i, parts in enumerate(LAYERS) if part(module) in parts]
    assert found, f"{module} is on no layer of LAYERS: add its part"
    return found[0]


def module_name(path: Path) -> str:
    name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
    return name.removesuffix(".__init__")


def kweval_imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every kweval module a file imports (`from kweval import x` names x when x is a module)."""
    out = []
    for line, mod, name in imports(path):
        if top(mod) != "kweval":
            continue
        candidate = f"{mod}.{name}" if name else mod
        is_module = (ROOT / Path(*candidate.split("."))).with_suffix(".py").is_file() or (
            ROOT / Path(*candidate.split("."))
        ).is_dir()
        out.append((line, candidate if is_module or candidate == "kweval.__version__" else mod))
    return out


def test_arrows_point_down():
    offending = []
    for p in core_files():
        here = module_name(p)
        for line, target in kweval_imports(p):
            if part(target) != part(here) and layer(target) >= layer(here):
                offending.append(f"{rel(p)}:{line} {target} (layer {layer(target)} from layer {layer(here)})")
    assert offending == []


def test_no_import_cycles():
    graph = {module_name(p): {t for _, t in kweval_imports(p) if t != module_name(p)} for p in core_files()}
    cycles, state = [], {}

    def visit(node: str, stack: list[str]) -> None:
        state[node] = "open"
        for nxt in sorted(graph.get(node, ())):
            if nxt not in graph:
                continue
            if state.get(nxt) == "open":
                cycles.append(" -> ".join(stack[stack.index(nxt) :] + [nxt]))
            elif nxt not in state:
                visit(nxt, stack + [nxt])
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    assert cycles == []


def test_no_private_name_crosses_a_module():
    """A `_name` stays in its module; `kweval._arrays` is the one private module, shared on purpose."""
    offending = [
        f"{rel(p)}:{line} {mod}.{name}"
        for p in core_files()
        for line, mod, name in imports(p)
        if top(mod) == "kweval"
        and name
        and name.startswith("_")
        and name != "__version__"
        and mod != "kweval._arrays"
        and mod != module_name(p)
    ]
    assert offending == []


def test_core_never_imports_a_ui():
    offending = [
        f"{rel(p)}:{line} {mod}" for p in core_files() for line, mod, _ in imports(p) if top(mod) in UI_PACKAGES
    ]
    assert offending == []


def test_models_are_loaded_only_by_the_embedders():
    offending = [
        f"{rel(p)}:{line} {mod}"
        for p in core_files()
        if rel(p) not in EMBEDDERS
        for line, mod, _ in imports(p)
        if top(mod) in MODEL_PACKAGES
    ]
    assert offending == []
    assert any(top(mod) == "torch" for p in core_files() if rel(p) in EMBEDDERS for _, mod, _ in imports(p)), (
        "the embedder list is stale"
    )


@pytest.mark.skipif(not PAGES.is_dir(), reason="no pages/ in this checkout")
def test_pages_never_import_metric_internals():
    pages = sorted(PAGES.rglob("*.py"))
    assert pages, "pages/ holds the pages"
    offending = []
    for page in pages:
        for line, mod, name in imports(page):
            full = f"{mod}.{name}" if name else mod
            if mod in METRIC_INTERNALS or full in METRIC_INTERNALS:
                offending.append(f"{rel(page)}:{line} {full}")
            elif top(mod) == "kweval" and (
                (name or "").startswith("_") or any(part.startswith("_") for part in mod.split(".")[1:])
            ):
                offending.append(f"{rel(page)}:{line} {full} (private)")
    assert offending == []


def test_presentation_modules_never_import_streamlit():
    modules = [ROOT / "dashboard" / f"{name}.py" for name in STREAMLIT_FREE]
    assert all(p.is_file() for p in modules), "the list of presentation modules is stale"
    offending = [
        f"{rel(p)}:{line} {mod}"
        for p in modules
        for line, mod, _ in imports(p)
        if top(mod) == "streamlit" or mod in ("dashboard", "dashboard.state", "dashboard.sidebar", "dashboard.tables")
    ]
    assert offending == []
