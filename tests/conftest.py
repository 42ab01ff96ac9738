"""Shared fixtures and the markers' rules (the markers are registered in pyproject.toml).

- ``dnlp``: the test reads the DNLP data (``tests.helpers.DNLP``, ../shared/data/dnlp beside
  the checkout, which a plain clone does not have).  Without it the test is skipped, all of
  them for one stated reason; with ``KWEVAL_REQUIRE_SHARED=1`` (exported by ``.ci/run``) it
  fails instead, so CI can never skip them silently.
- ``slow`` and ``browser`` only select: the quick subset is ``-m "not slow and not browser"``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kweval.data import Dataset, load_dataset
from tests.helpers import DNLP, REPO

REQUIRE_SHARED = os.environ.get("KWEVAL_REQUIRE_SHARED", "") not in ("", "0")
DNLP_MISSING = (
    f"DNLP data not found at {DNLP} (../shared/data/dnlp beside the checkout, or $KWEVAL_SHARED/data/dnlp); "
    "README: 'The DNLP layout'"
)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Skip (or, under KWEVAL_REQUIRE_SHARED=1, fail) a `dnlp` test before its fixtures load the data."""
    if item.get_closest_marker("dnlp") is None or DNLP.is_dir():
        return
    if REQUIRE_SHARED:
        pytest.fail(f"KWEVAL_REQUIRE_SHARED=1 and {DNLP_MISSING}", pytrace=False)
    pytest.skip(DNLP_MISSING)


def pytest_report_header(config: pytest.Config) -> str:
    state = "present" if DNLP.is_dir() else "absent: dnlp tests " + ("FAIL" if REQUIRE_SHARED else "skipped")
    return f"kweval DNLP data: {DNLP} ({state})"


@pytest.fixture(scope="session")
def repo_root() -> Path:
    """The checkout's root (where app.py, README.md and pyproject.toml are)."""
    return REPO


@pytest.fixture(scope="session")
def dnlp_path() -> Path:
    """The DNLP Dataset/ folder; request it only from tests marked `dnlp`."""
    return DNLP


@pytest.fixture(scope="session")
def demo_dataset() -> Dataset:
    """The embedded demo, loaded once per session (Datasets are not modified by evaluation)."""
    return load_dataset(None)
