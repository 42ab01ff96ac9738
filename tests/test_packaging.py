"""Packaging of the dashboard.

The Dockerfile installs like the Makefile, the Streamlit config, the core without streamlit.
"""

from __future__ import annotations

import re
import shlex
import tomllib

from tests.apptest import ROOT


def _make_install_steps() -> list[str]:
    text = (ROOT / "Makefile").read_text()
    block = re.search(r"^\$\(VENV\)/\.runtime:.*\n((?:\t.*\n)+)", text, re.M)
    assert block, "Makefile: no $(VENV)/.runtime recipe"
    steps = []
    for line in block.group(1).splitlines():
        words = shlex.split(line.strip())
        if len(words) > 1 and words[0].endswith("pip") and words[1] == "install":
            steps.append(" ".join(["pip", *words[1:]]))
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
    assert re.search(r"^FROM python:3\.11-slim", docker, re.M)
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


def test_core_does_not_import_streamlit():
    offenders = [
        p.name
        for p in (ROOT / "kweval").rglob("*.py")
        if re.search(r"^\s*(import|from)\s+streamlit", p.read_text(), re.M)
    ]
    assert offenders == []
