"""Packaging of the dashboard.

The Dockerfile installs like the Makefile and copies everything the server reads at run time (found by running
every page: tests/runtime_reads.py); the Streamlit config, the core without streamlit.  The image itself is built
and tried in chromium by `make image-check` (scripts/check_image.sh), not here.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib

import pytest

from tests.apptest import ROOT


def test_make_test_runs_the_browser_files_the_tests_keep():
    """`make test` names the browser tests' files with the glob tests/conftest.py holds every browser test to: a
    browser test in another file would be refused there, not silently left out here."""
    from tests.conftest import BROWSER_FILES

    text = (ROOT / "Makefile").read_text()
    assert re.search(r"^BROWSER_FILES := (\S+)$", text, re.M).group(1) == BROWSER_FILES
    recipe = re.search(r"^test: .*\n((?:\t.*\n)+)", text, re.M).group(1)
    assert (
        "--ignore-glob='tests/$(BROWSER_FILES)'" in recipe
        and "-m browser -n $(BROWSER_JOBS) tests/$(BROWSER_FILES)" in recipe
    )


def _make_install_steps() -> list[str]:
    text = (ROOT / "Makefile").read_text()
    block = re.search(r"^\$\(VENV\)/\.runtime:.*\n((?:\t.*\n)+)", text, re.M)
    assert block, "Makefile: no $(VENV)/.runtime recipe"
    steps = []
    for line in block.group(1).splitlines():
        words = shlex.split(line.strip())
        if len(words) > 1 and words[0].endswith("pip") and words[1] == "install":
            # a venv compiles on first import (it is writable); the image ahead, for its non-root user
            steps.append(" ".join(["pip", *(w for w in words[1:] if w != "--no-compile")]))
    return steps


def _docker_install_steps() -> list[str]:
    text = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    steps = []
    for line in text.splitlines():
        if not line.startswith("RUN "):
            continue
        for cmd in line[4:].split("&&"):
            words = shlex.split(cmd.strip())
            if words[:3] == ["python", "-m", "pip"]:
                words = ["pip", *words[3:]]
            if len(words) > 1 and words[0] == "pip" and words[1] == "install":
                steps.append(" ".join(words))
    return steps


def test_dockerfile_installs_like_the_makefile():
    make = _make_install_steps()
    assert make == ["pip install -r requirements.txt", "pip install --no-deps -e ."]
    assert _docker_install_steps() == make
    docker = (ROOT / "Dockerfile").read_text()
    assert re.search(r"^ARG PYTHON_IMAGE=python:3\.11-slim$", docker, re.M)  # a stand-in base only when asked
    assert re.search(r"^FROM \$\{PYTHON_IMAGE\}$", docker, re.M)
    assert re.search(r"^USER (?!root)\w+", docker, re.M)
    assert re.search(r"^EXPOSE 8501", docker, re.M)
    assert "HEALTHCHECK" in docker and "/_stcore/health" in docker
    assert (
        '"streamlit", "run", "app.py", "--server.address=0.0.0.0", "--server.port=8501", "--server.headless=true"'
        in docker
    )


def test_streamlit_config():
    config = tomllib.loads((ROOT / ".streamlit/config.toml").read_text())
    assert config["server"]["headless"] is True
    assert 0 < config["server"]["maxUploadSize"] <= 200
    assert config["browser"]["gatherUsageStats"] is False
    assert config["client"]["showErrorDetails"] == "none"  # no traceback for visitors (issue 15, item 8)
    assert config["runner"]["postScriptGC"] is False  # no full collection after every rerun (issue 28 item 7)
    assert config["runner"]["magicEnabled"] is False  # no syntax-tree rewrite of each page (`test_no_page_needs_magic`)


def test_no_page_needs_magic():
    """With Streamlit's magic off, a bare expression in a page shows nothing: each page's bare expressions are calls
    (which draw for themselves), never a value left for magic to write (a name, a constant, an f-string), docstrings
    aside."""
    import ast

    left = []
    for path in [ROOT / "app.py", *sorted((ROOT / "pages").glob("*.py"))]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Expr) or isinstance(node.value, ast.Call):
                continue
            if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                continue  # a docstring (or a comment-like string)
            left.append(f"{path.name}:{node.lineno}: {ast.unparse(node.value)[:60]}")
    assert left == [], left


def test_core_does_not_import_streamlit():
    offenders = [
        p.name
        for p in (ROOT / "kweval").rglob("*.py")
        if re.search(r"^\s*(import|from)\s+streamlit", p.read_text(), re.M)
    ]
    assert offenders == []


def _dockerfile() -> list[list[str]]:
    """The Dockerfile's instructions, each as its words (continuation lines joined, comments left out)."""
    text = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    return [shlex.split(line) for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def copied(instructions: list[list[str]]) -> list[str]:
    """The build-context paths the COPY instructions take (flags such as --chown left out)."""
    sources = []
    for words in instructions:
        if words[0] == "COPY":
            sources += [w.rstrip("/") for w in words[1:-1] if not w.startswith("--")]
    return sources


def not_copied(reads: list[str], sources: list[str]) -> list[str]:
    """The paths of `reads` that no copied source is or holds."""
    return [p for p in reads if not any(p == s or p.startswith(f"{s}/") for s in sources)]


@pytest.mark.slow  # every page run in AppTest (15 s of CPU)
def test_the_image_holds_every_path_the_server_reads(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("KWEVAL_")}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", KWEVAL_HOME=str(tmp_path))
    done = subprocess.run(
        [sys.executable, "-m", "tests.runtime_reads"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, done.stderr[-2000:]
    reads = json.loads(done.stdout.strip().splitlines()[-1])
    tops = {p.split("/")[0] for p in reads}
    assert {"app.py", ".streamlit", "pages", "dashboard", "kweval", "docs"} <= tops, tops  # the hook sees them
    sources = copied(_dockerfile())
    assert not_copied(reads, sources) == []
    ignored = {line.strip().rstrip("/") for line in (ROOT / ".dockerignore").read_text().splitlines()}
    assert not ignored & set(sources), "the build context leaves out a copied path"


def test_one_volume_holds_kwevals_files():
    """KWEVAL_HOME (caches, judgments, what is recorded) is the one declared volume, made the server's user's before
    it is declared (a named volume starts as a copy of it)."""
    instructions = _dockerfile()
    env = dict(w.split("=", 1) for words in instructions if words[0] == "ENV" for w in words[1:])
    volumes = [words[1:] for words in instructions if words[0] == "VOLUME"]
    assert volumes == [[env["KWEVAL_HOME"]]]
    user = next(words[1] for words in instructions if words[0] == "USER")
    text = (ROOT / "Dockerfile").read_text()
    assert f"chown {user}:{user} {env['KWEVAL_HOME']}" in text
    assert text.index(f"chown {user}:{user} {env['KWEVAL_HOME']}") < text.index("VOLUME")
    assert not {"PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS", "PIP_CERT"} & set(env)  # build arguments, not the image's


def test_the_image_check_opens_every_page():
    """scripts/image_pages.py (make image-check) knows each page of the sidebar's table and the title it draws."""
    import importlib.util

    from dashboard.sidebar import PAGES

    spec = importlib.util.spec_from_file_location("image_pages", ROOT / "scripts" / "image_pages.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert list(module.TITLES) == [page.name for page in PAGES]
    for name, title in module.TITLES.items():
        source = (ROOT / "pages" / f"{name}.py").read_text()
        if name == "explorer":  # titled in the data's words: "Review explorer" on the demo
            assert 'st.title(f"{WORDS.review} explorer")' in source and title == "Review explorer"
        else:
            assert f'st.title("{title}")' in source, name


@pytest.mark.skipif(shutil.which("make") is None, reason="GNU make is not installed")
def test_what_make_starts_may_cache_its_bytecode():
    """An environment setting PYTHONDONTWRITEBYTECODE (this CI's does) reaches no process that make starts: the venv
    is the project's own, and without its bytecode cached every test process recompiled torch, transformers and
    pandas on import (bench/bench_imports.py)."""
    show = f"show: ; @{shlex.quote(sys.executable)} -c 'import sys; print(sys.flags.dont_write_bytecode)'"
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    command = ["make", "-s", "--no-print-directory", "--eval", show, "show"]
    out = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "0"
