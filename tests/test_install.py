"""`pip install .` with the core dependencies only: a working lexical CLI, every module importable,
and each optional feature naming the extra it needs instead of a traceback.

The `slow` tests build the wheel, make a fresh venv and install the wheel into it from
the package index pip is configured with (a few minutes); the others hide one optional
package from this process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.helpers import REPO

CORE = {"numpy", "pandas", "pyarrow", "scipy"}
# what each extra brings that the core must not need
OPTIONAL = {
    "torch",
    "sentence_transformers",
    "transformers",
    "vaderSentiment",
    "nltk",
    "streamlit",
    "plotly",
    "tqdm",
    "platformdirs",
}
IMPORT_ALL = """
import importlib, json, pkgutil, sys
import kweval
failed = {}
for info in pkgutil.walk_packages(kweval.__path__, "kweval."):
    if info.name.endswith("__main__"):  # runs the CLI
        continue
    try:
        importlib.import_module(info.name)
    except Exception as exc:
        failed[info.name] = repr(exc)
print(json.dumps({"file": kweval.__file__, "failed": failed, "modules": sorted(sys.modules)}))
"""


def _clean_env() -> dict[str, str]:
    """The environment without anything that would put the checkout's kweval on the path."""
    drop = ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME", "PYTHONDONTWRITEBYTECODE")  # the venv's pyc files are kept
    env = {k: v for k, v in os.environ.items() if k not in drop}
    return dict(env, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")


def _check(cmd: list[str], **kwargs) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, capture_output=True, text=True, env=_clean_env(), **kwargs)
    assert proc.returncode == 0, f"{cmd} exited {proc.returncode}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


@pytest.fixture(scope="module")
def core_venv(tmp_path_factory) -> Path:
    """A fresh venv holding the kweval wheel and the core dependencies only; returns its bin/ folder."""
    root = tmp_path_factory.mktemp("install")
    _check([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(root / "dist"), str(REPO)])
    (wheel,) = (root / "dist").glob("kweval-*.whl")
    with zipfile.ZipFile(wheel) as zf:
        assert any(n.startswith("kweval/data/demo/") and n.endswith(".parquet") for n in zf.namelist())
    # --without-pip: ensurepip would install and byte-compile pip itself (~7 s of CPU); this process's pip installs
    # into the venv instead (`pip --python`), which then holds the wheel and what it depends on, nothing else
    _check([sys.executable, "-m", "venv", "--without-pip", str(root / "venv")])
    bin_dir = root / "venv" / "bin"
    # --no-compile: pip would byte-compile all of numpy, pandas, pyarrow and scipy (~3/4 of the install's CPU);
    # only what the tests import is compiled, once, on import (the same code either way)
    _check(_pip(bin_dir, "install", "-q", "--no-compile", str(wheel)))
    return bin_dir


def _pip(bin_dir: Path, *args: str) -> list[str]:
    """This process's pip acting on the venv of `bin_dir` (which has no pip of its own)."""
    return [sys.executable, "-m", "pip", "--python", str(bin_dir / "python"), *args]


@pytest.mark.slow
def test_core_install_has_only_the_core_dependencies(core_venv: Path):
    listed = _check(_pip(core_venv, "list", "--format=freeze")).stdout
    names = {line.split("==")[0].lower().replace("-", "_") for line in listed.split()}
    assert {n.lower() for n in CORE} <= names
    assert not names & {n.lower() for n in OPTIONAL}, names & {n.lower() for n in OPTIONAL}


@pytest.mark.slow
def test_core_install_evaluates_the_demo_like_the_checkout(core_venv: Path, tmp_path: Path):
    installed = _check([str(core_venv / "kweval"), "evaluate", "--format", "csv"], cwd=tmp_path)
    checkout = subprocess.run(
        [sys.executable, "-m", "kweval", "evaluate", "--format", "csv"],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=dict(os.environ, PYTHONPATH=str(REPO)),
    )
    assert checkout.returncode == 0, checkout.stderr
    assert installed.stdout == checkout.stdout
    assert installed.stdout.startswith("movie,model,n_reviews,n_skipped,precision")
    assert "Traceback" not in installed.stderr


@pytest.mark.slow
def test_every_module_imports_without_the_extras(core_venv: Path, tmp_path: Path):
    out = json.loads(_check([str(core_venv / "python"), "-c", IMPORT_ALL], cwd=tmp_path).stdout)
    assert str(REPO) not in out["file"]  # the installed wheel, not the checkout
    assert out["failed"] == {}
    assert {
        "kweval.stats.paired",
        "kweval.cli",
        "kweval.evaluation.pipeline",
        "kweval.embeddings.semantic",
        "kweval.evaluation.sentiment",
    } <= set(out["modules"])


@pytest.mark.slow
@pytest.mark.parametrize(
    "args, extra",
    [
        (["evaluate", "--semantic"], "semantic"),
        (["evaluate", "--sentiment"], "sentiment"),
        (["evaluate", "--match", "stem"], "stem"),
        (["evaluate", "--legacy", "--semantic"], "semantic"),
        (["evaluate", "--legacy", "--sentiment"], "sentiment"),
        (["embed"], "semantic"),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, list) else v,
)
def test_optional_feature_without_its_extra_names_it(core_venv: Path, tmp_path: Path, args: list[str], extra: str):
    proc = subprocess.run(
        [str(core_venv / "kweval"), *args], capture_output=True, text=True, cwd=tmp_path, env=_clean_env()
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kweval: "), proc.stderr
    assert f"pip install 'kweval[{extra}]'" in lines[0]


@pytest.mark.parametrize(
    "hidden, args, expected",
    [
        (
            "vaderSentiment",
            ["--sentiment"],
            "needs vaderSentiment, which is not installed: pip install 'kweval[sentiment]'",
        ),
        ("nltk", ["--match", "stem"], "needs nltk, which is not installed: pip install 'kweval[stem]'"),
        ("torch", ["--semantic"], "needs torch, which is not installed: pip install 'kweval[semantic]'"),
    ],
    ids=["sentiment", "stem", "semantic"],
)
def test_cli_names_the_extra_of_a_hidden_package(
    monkeypatch, capsys, tmp_path, hidden: str, args: list[str], expected: str
):
    from kweval import cli
    from kweval.embeddings import semantic
    from kweval.evaluation import sentiment
    from kweval.text import normalize as text

    monkeypatch.setenv("KWEVAL_CACHE_DIR", str(tmp_path))  # an empty embedding store: the model is needed

    # encoders loaded by earlier tests in this process would hide the missing package
    for cached in (sentiment._analyzer, text._porter, text._stem_word, semantic.load_model, semantic._onnx_encoder):
        cached.cache_clear()
    monkeypatch.setitem(sys.modules, hidden, None)  # `import hidden` now raises ImportError
    monkeypatch.setitem(
        sys.modules, f"{hidden}.vaderSentiment" if hidden == "vaderSentiment" else f"{hidden}.stem.porter", None
    )
    assert cli.main(["evaluate", *args]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    (line,) = captured.err.strip().splitlines()
    assert line.startswith("kweval: ") and line.endswith(expected), line
    for cached in (sentiment._analyzer, text._porter, text._stem_word):
        cached.cache_clear()  # the next test gets the real package again


def test_missing_extra_knows_only_optional_packages():
    from kweval.extras import missing_extra

    assert "kweval[semantic]" in str(missing_extra(ModuleNotFoundError("x", name="transformers.models"), "evaluate"))
    assert missing_extra(ModuleNotFoundError("x", name="numpy"), "evaluate") is None  # a core dependency: a real error
