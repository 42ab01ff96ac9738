"""The README's own command lines and Python example, run on the demo, so the README cannot drift.

Every line of a ```bash block whose command is `kweval` (or `.venv/bin/kweval`) runs as
`python -m kweval` in a folder where `my_data/` is the embedded demo written in the tidy
layout beside the repository's `examples/` (a line naming a machine that is not there, `tcp://HOST:...`, is only
parsed); the
```python block runs there too.  The Makefile must hand `DATA` to the dashboard.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from kweval.data.tidy import write_tidy
from tests.helpers import REPO, run_in_process

README = (REPO / "README.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"^ *```(\w+)\n(.*?)^ *```", README, flags=re.S | re.M)


def _commands(tool: str) -> list[list[str]]:
    """argv of every line in a bash block whose program is `tool` (comments dropped)."""
    found = []
    for lang, body in BLOCKS:
        if lang != "bash":
            continue
        for line in body.splitlines():
            argv = shlex.split(line, comments=True)
            if argv and Path(argv[0]).name == tool:
                found.append(argv)
    return found


KWEVAL_LINES = _commands("kweval")


def _env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(REPO), HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")


@pytest.fixture(scope="module")
def workdir(tmp_path_factory, demo_dataset) -> Path:
    """A folder where `my_data/` is the demo in the tidy layout, as a reader's own data would be."""
    root = tmp_path_factory.mktemp("readme")
    write_tidy(demo_dataset, root / "my_data")
    shutil.copytree(REPO / "examples", root / "examples")  # the files the repository ships, as a checkout has them
    return root


def test_the_readme_has_command_lines_to_check():
    assert len(KWEVAL_LINES) >= 8, KWEVAL_LINES
    assert any(argv[1:2] == ["convert"] for argv in KWEVAL_LINES)
    assert any("--models" in argv for argv in KWEVAL_LINES)


def _run_kweval_line(argv: list[str], workdir: Path) -> subprocess.CompletedProcess:
    """The README's `kweval ...` line in `workdir`: through `kweval.cli.main` in this process (a fresh interpreter
    costs 2-3 s of CPU), except the checkout's own console script and a Dask cluster (`--scheduler`), which run as
    a process of their own, as the reader runs them."""
    if argv[0] == "kweval" and "--scheduler" not in argv:
        return run_in_process(*argv[1:], env_extra={"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}, cwd=workdir)
    return subprocess.run(
        [sys.executable, "-m", "kweval", *argv[1:]], capture_output=True, text=True, cwd=workdir, env=_env()
    )


@pytest.mark.parametrize("argv", KWEVAL_LINES, ids=[shlex.join(a[1:]) or "(none)" for a in KWEVAL_LINES])
def test_readme_kweval_line_runs_on_the_demo(workdir: Path, argv: list[str]):
    if any("://HOST" in arg for arg in argv):  # a remote cluster: the options must still be valid
        from kweval.cli import build_parser

        assert build_parser().parse_args(argv[1:]).command == argv[1]
        return
    proc = _run_kweval_line(argv, workdir)
    assert "Traceback" not in proc.stderr, proc.stderr
    if "--fail-under" in argv and proc.returncode == 1:  # the demo may be below the example's threshold
        assert "is below" in proc.stderr
    else:
        assert proc.returncode == 0, proc.stderr
    if argv[1:2] == ["evaluate"]:
        assert not proc.stderr.startswith("kweval: error"), proc.stderr
        if "--out" in argv:
            out = workdir / argv[argv.index("--out") + 1]
            assert out.read_text().startswith("movie,model,n_reviews")
        else:
            assert "keybert" in proc.stdout


def test_readme_python_example_runs_on_the_demo(workdir: Path):
    (code,) = [body for lang, body in BLOCKS if lang == "python"]
    assert 'load_dataset("my_data/")' in code
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=workdir, env=_env())
    assert proc.returncode == 0, proc.stderr


def test_readme_extras_are_declared():
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    named = set(re.findall(r"pip install '\.\[(\w+)\]'", README))
    assert {"semantic", "sentiment", "app", "all"} <= named
    assert named <= set(extras)


def test_make_run_hands_data_to_the_dashboard():
    dry = subprocess.run(["make", "-n", "run", "DATA=my_data/"], capture_output=True, text=True, cwd=REPO)
    assert dry.returncode == 0, dry.stderr
    (start,) = [line for line in dry.stdout.splitlines() if "streamlit run app.py" in line]
    assert start.endswith('-- --data "my_data/"')
    plain = subprocess.run(["make", "-n", "run"], capture_output=True, text=True, cwd=REPO).stdout
    assert "--data" not in plain
