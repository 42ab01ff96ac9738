"""Shared fixtures and the markers' rules (the markers are registered in pyproject.toml).

- ``dnlp`` / ``keyphrase``: the test reads data from ../shared beside the checkout, which a
  plain clone does not have (``tests.helpers.DNLP``, ``tests.helpers.SEMEVAL``).  Without it
  the test is skipped, all of them for one stated reason per folder; with
  ``KWEVAL_REQUIRE_SHARED=1`` (exported by ``.ci/run``) it fails instead, so CI can never
  skip them silently.
- ``inspec``: the test reads Inspec (test) in the JSON layout (``tests.helpers.INSPEC``: ``$KWEVAL_INSPEC``, or
  ``inspec_test.json`` beside SemEval2017), a third-party file fetched by hand; without it the test is skipped with
  that reason, also under ``KWEVAL_REQUIRE_SHARED=1`` (../shared does not hold it).
- ``slow`` and ``browser`` only select: the quick subset is ``-m "not slow and not browser"``.  The files holding a
  ``slow`` test run first (``pytest_collection_modifyitems``), so that pytest-xdist's workers end together.

Paths (REPO, SHARED, DNLP, SEMEVAL) are constants in tests/helpers.py, importable by any test.  `kweval extract`'s
SemEval2017 predictions are made once per run for every module (``semeval_extracted``), and so is the bundled
model's ONNX export, copied into a test's fresh embedding cache by ``seed_onnx_export``.

The test processes collect cyclic garbage less often than Python's default (``pytest_configure``): see
``GC_THRESHOLDS``.

Browser tests share one server per data (``demo_server``, ``collection_server``) and one chromium (``browser``) per
test session (per xdist worker); tests/browser.py says how a new browser test uses them.
"""

from __future__ import annotations

import gc
import os
import shutil
import sys
from fnmatch import fnmatch
from functools import partial
from pathlib import Path

import pytest

from kweval.data import Dataset, load_dataset
from tests.helpers import DNLP, INSPEC, SEMEVAL

# Python's cyclic collector by default runs every 700 net allocations and, every 100 of those runs, walks every
# object the process holds; a test process holds torch, pandas and Streamlit (~260k tracked objects), so the walks
# cost a few per cent of the run's CPU (user CPU of four compute-heavy test files: 122-126 s at the default,
# 115-121 s with these; a DNLP Summary's first AppTest run: 0.9 s of its 8.3 s in the collector, 0.27 s of
# 7.0 s).  What the tests compute does not depend on when garbage is collected.  (Not `gc.freeze()` as well:
# Hypothesis then takes the frozen objects for unreferenced ones, `gc.get_referrers` not seeing them, and warns.)
GC_THRESHOLDS = (100_000, 50, 100)

REQUIRE_SHARED = os.environ.get("KWEVAL_REQUIRE_SHARED", "") not in ("", "0")
# marker -> (the folder its tests read, why they skip without it)
SHARED_DATA = {
    "dnlp": (
        DNLP,
        f"DNLP data not found at {DNLP} (../shared/data/dnlp beside the checkout, or $KWEVAL_SHARED/data/dnlp)",
    ),
    "keyphrase": (
        SEMEVAL,
        f"SemEval2017 not found at {SEMEVAL} (../shared/data/keyphrase beside the checkout, or "
        f"$KWEVAL_SHARED/data/keyphrase)",
    ),
}


INSPEC_MISSING = (
    f"Inspec (test) not found at {INSPEC}: fetch data/inspec/inspec_test.json of the public repository "
    "EMBEDDIA/tnt_kid and set KWEVAL_INSPEC=FILE (or put it beside SemEval2017 in ../shared/data/keyphrase)"
)


def pytest_configure(config: pytest.Config) -> None:
    """Fewer cyclic collections (`GC_THRESHOLDS`) in this test process and its xdist workers."""
    gc.set_threshold(*GC_THRESHOLDS)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Skip (or, under KWEVAL_REQUIRE_SHARED=1, fail) a test whose shared data is absent, before its fixtures load
    it."""
    if item.get_closest_marker("inspec") is not None and not INSPEC.is_file():
        pytest.skip(INSPEC_MISSING)
    for marker, (folder, missing) in SHARED_DATA.items():
        if item.get_closest_marker(marker) is None or folder.is_dir():
            continue
        if REQUIRE_SHARED:
            pytest.fail(f"KWEVAL_REQUIRE_SHARED=1 and {missing}", pytrace=False)
        pytest.skip(missing)


# the browser tests' files, and only theirs hold browser tests: `make test` collects just these for its browser run and
# leaves them out of the other (each of the three processes otherwise imported every test module only to deselect)
BROWSER_FILES = "test_browser*.py"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Refuse a browser test outside `BROWSER_FILES` (or another test inside), which `make test` would not run.

    Then the test files holding a `slow` test first, each kept whole (its module fixtures built once per worker as
    before): pytest-xdist hands the tests out in this order, so the long ones start early and the workers end
    together on quick ones, instead of one core idling while the other finishes a test of tens of seconds."""
    misplaced = [
        item.nodeid
        for item in items
        if (item.get_closest_marker("browser") is not None) != fnmatch(item.path.name, BROWSER_FILES)
    ]
    if misplaced:
        raise pytest.UsageError(f"browser tests go in tests/{BROWSER_FILES}, and only they: {misplaced}")
    slow_files = {item.nodeid.split("::")[0] for item in items if item.get_closest_marker("slow") is not None}
    items.sort(key=lambda item: item.nodeid.split("::")[0] not in slow_files)  # stable: the order within a file kept


def pytest_report_header(config: pytest.Config) -> list[str]:
    absent = "absent: its tests " + ("FAIL" if REQUIRE_SHARED else "are skipped")
    return [
        f"kweval {marker} data: {folder} ({'present' if folder.is_dir() else absent})"
        for marker, (folder, _) in SHARED_DATA.items()
    ] + [f"kweval inspec data: {INSPEC} ({'present' if INSPEC.is_file() else 'absent: its test is skipped'})"]


@pytest.fixture(scope="session")
def demo_dataset() -> Dataset:
    """The embedded demo, loaded once per session (Datasets are not modified by evaluation)."""
    return load_dataset(None)


@pytest.fixture(scope="module")
def semeval_firstphrases():
    """SemEval2017 (`read_documents`) and FirstPhrases' top 20 of each document (keyphrase tests only)."""
    from kweval.data.keyphrase import read_documents
    from kweval.keyphrase.extract import firstphrases_lists

    collection = read_documents(SEMEVAL, [])
    lists = firstphrases_lists([collection.texts[d] for d in collection.doc_ids], 20)
    return collection, {d: [k for k, _ in entries] for d, entries in zip(collection.doc_ids, lists)}


def _made_once_per_run(tmp_path_factory, name: str, make) -> Path:
    """The run's `name` (a file or folder in the run's temporary folder, shared by the xdist workers): `make(tmp)`
    writes it at a path of its own the first time, under a lock (one worker makes it, the others wait for it)."""
    import fcntl

    root = tmp_path_factory.getbasetemp()
    root = root.parent if os.environ.get("PYTEST_XDIST_WORKER") else root  # the run's folder, shared by the workers
    path = root / name
    with open(root / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not path.exists():
            tmp = path.with_name(f"{path.stem}.tmp{os.getpid()}{path.suffix}")
            make(tmp)
            tmp.rename(path)
    return path


@pytest.fixture(scope="session")
def semeval_extracted(tmp_path_factory):
    """`extracted(name)`: the path of `kweval extract SemEval2017 --extractor NAME --out FILE`'s output (exit 0), made
    once per test run and shared by the xdist workers (YAKE takes ~13 s of CPU on the 493 documents; eight modules
    read the same file).  Read it, never write beside it (keyphrase tests only)."""
    from kweval.cli import main

    def extract(name: str, tmp: Path) -> None:
        assert main(["extract", str(SEMEVAL), "--extractor", name, "--out", str(tmp)]) == 0

    def extracted(name: str):
        return _made_once_per_run(tmp_path_factory, f"semeval_extracted_{name}.jsonl", partial(extract, name))

    return extracted


@pytest.fixture(scope="session")
def seed_onnx_export(tmp_path_factory):
    """`seed(folder)`: `folder`, an embedding cache ($KWEVAL_CACHE_DIR) of a test, given a copy of the bundled model's
    ONNX export (fp32, what the default backend embeds with on the CPU), built once per test run and shared by the
    xdist workers: each fresh cache would otherwise build it again (torch, transformers and torch.onnx.export: ~12 s
    of CPU).  For tests whose subject is not the export; the copy is the test's own (damage it at will)."""
    from kweval.embeddings import exports, onnx, semantic

    def build(tmp: Path) -> None:
        onnx.onnx_file(semantic.resolve_model_path(semantic.DEFAULT_MODEL), tmp, quantized=False)

    def seed(folder: Path) -> Path:
        if semantic.resolve_backend("auto", "cpu") != "onnx":  # onnx or onnxruntime not installed: torch embeds
            return folder
        built = _made_once_per_run(tmp_path_factory, "onnx_export", build)
        shutil.copytree(built / exports.EXPORTS_DIR, folder / exports.EXPORTS_DIR, dirs_exist_ok=True)
        return folder

    return seed


@pytest.fixture(scope="module")
def cores():
    """Datasets loaded by the core, one per source of the dashboard tests ("demo", "dnlp"), on first use."""
    from tests.apptest import _Cores

    return _Cores()


@pytest.fixture(autouse=True)
def _pytest_main_module_kept():
    """Streamlit's AppTest runs app.py as the process's `__main__` and leaves it there; multiprocessing's spawn
    (dask's nannies, the store's writer processes) re-runs that module in every child, where app.py fails
    outside a server.  Each test gets the `__main__` it started with back."""
    main = sys.modules.get("__main__")
    yield
    if main is not None and sys.modules.get("__main__") is not main:
        sys.modules["__main__"] = main


@pytest.fixture(autouse=True)
def _no_look_ahead_thread_left():
    """The Summary's τ look-ahead and the explorer's page look-ahead (dashboard.look_ahead, dashboard.cards_ahead)
    run in a thread of the test's process: it ends with the test that started it, so that no test sees another's
    background work."""
    yield
    look_ahead = sys.modules.get("dashboard.look_ahead")
    if look_ahead is not None:
        look_ahead.WORKER.shutdown()


# ---------------------------------------------------------------------------------------------
# browser tests (tests/browser.py): one server per data and one chromium per session, started on first use


@pytest.fixture(scope="session")
def demo_server(tmp_path_factory, seed_onnx_export):
    """A `streamlit run app.py` on the embedded demo shared by the session's browser tests (tests.browser.Server).
    Its embedding cache starts with the run's ONNX export (`seed_onnx_export`): the first semantic view loads and
    embeds as a user's does, without exporting the transformer again (~12 s of CPU; no browser test is about it)."""
    from tests.browser import server

    folder = tmp_path_factory.mktemp("demo_server")
    with server(folder, cache=seed_onnx_export(folder / "embeddings")) as running:
        yield running


@pytest.fixture(scope="session")
def collection_server(tmp_path_factory):
    """A server on a small per-document collection (tests/data/keyphrase_edge, two models) shared by the session."""
    from tests.browser import server
    from tests.test_page_headline import _collection

    folder = tmp_path_factory.mktemp("collection_server")
    with server(folder, _collection(folder)) as running:
        yield running


class _Chromium:
    """The session's chromium, started on first use and again if it died."""

    def __init__(self) -> None:
        self.stack = None
        self.driver = None

    def get(self):
        from contextlib import ExitStack

        from selenium.common.exceptions import WebDriverException

        from tests.browser import chromium

        if self.driver is not None:
            try:
                self.driver.current_url  # noqa: B018 - a cheap call that fails when the browser is gone
                return self.driver
            except WebDriverException:
                self.close()
        self.stack = ExitStack()
        self.driver = self.stack.enter_context(chromium())
        return self.driver

    def close(self) -> None:
        if self.stack is not None:
            self.stack.close()
        self.stack = self.driver = None


@pytest.fixture(scope="session")
def _session_chromium():
    holder = _Chromium()
    yield holder
    holder.close()


@pytest.fixture
def browser(_session_chromium):
    """Headless chromium at 1400 × 1000 for this test: the session's, reset to a blank page first."""
    from tests.browser import reset

    driver = _session_chromium.get()
    reset(driver)
    return driver
