"""The persistent stem cache is bounded, survives a damaged or oversized file; a full disk is one line (issue 22)."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kweval.keyphrase import protocols
from kweval.text import stemming
from kweval.text.stemming import PorterCache

DATA = Path(__file__).parent / "data"


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("KWEVAL_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(stemming, "_SHARED", None)  # the process's cache, read again from this folder
    monkeypatch.setattr(protocols, "_phrases", {})  # and no words remembered from an earlier test
    monkeypatch.setattr(protocols, "_documents", {})
    return tmp_path


def test_a_huge_junk_keyphrase_is_stemmed_but_not_kept(tmp_path):
    path = tmp_path / "stems.json"
    cache = PorterCache(path)
    junk = [f"junk{i}" for i in range(stemming.MAX_CALL_WORDS + 1)]
    assert cache.stem_many(junk)[:2] == ("junk0", "junk1")
    assert cache.stem_many(["models", "topics"]) == ("model", "topic")
    cache.save()
    assert json.loads(path.read_text()) == {"models": "model", "topics": "topic"}


def test_entries_and_word_length_are_bounded(tmp_path, monkeypatch):
    monkeypatch.setattr(stemming, "MAX_ENTRIES", 3)
    path = tmp_path / "stems.json"
    cache = PorterCache(path)
    assert cache.stem("x" * (stemming.MAX_WORD_CHARS + 1)) == "x" * (stemming.MAX_WORD_CHARS + 1)
    words = ["models", "topics", "running", "cats", "dogs"]
    assert cache.stem_many(words) == ("model", "topic", "run", "cat", "dog")  # right past the bound too
    cache.save()
    assert json.loads(path.read_text()) == {"models": "model", "topics": "topic", "running": "run"}


@pytest.mark.parametrize(
    "content",
    [b"{not json", b"[1, 2]", b'{"a": 1}', b"\xff\xfe", b""],
    ids=["broken", "list", "non-string", "bytes", "empty"],
)
def test_a_damaged_file_is_ignored_and_rewritten(tmp_path, content):
    path = tmp_path / "stems.json"
    path.write_bytes(content)
    cache = PorterCache(path)
    assert cache.stems == {} and cache.stale
    cache.save()  # rewritten even without a new stem
    assert json.loads(path.read_text()) == {} and not cache.stale


def test_an_oversized_file_is_not_loaded_and_is_rewritten(tmp_path, monkeypatch):
    path = tmp_path / "stems.json"
    path.write_text(json.dumps({f"w{i}": f"w{i}" for i in range(1000)}))
    monkeypatch.setattr(stemming, "MAX_FILE_BYTES", 1000)
    cache = PorterCache(path)
    assert cache.stems == {} and cache.stale
    cache.stem("models")
    cache.save()
    assert json.loads(path.read_text()) == {"models": "model"}


@pytest.mark.parametrize("code", [errno.EFBIG, errno.ENOSPC, errno.EDQUOT])
def test_a_full_disk_is_one_line_and_the_run_goes_on(cache_dir, monkeypatch, capsys, code):
    from kweval.cli import main

    def full(self, *args, **kwargs):
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(Path, "write_text", full)
    args = ["evaluate", str(DATA / "keyphrase_edge"), "--protocol", "pke", "--format", "json"]
    status = main([*args, "--predictions", f"edge={DATA / 'keyphrase_edge_predictions.jsonl'}"])
    out, err = capsys.readouterr()
    monkeypatch.undo()
    assert status == 0 and json.loads(out)["rows"][0]["model"] == "edge"
    lines = [line for line in err.splitlines() if "stem cache" in line]
    assert len(lines) == 1 and lines[0].startswith("kweval: stem cache: ") and os.strerror(code) in lines[0]
    assert not list(cache_dir.rglob("*.tmp")) and "Traceback" not in err


def test_protocol_run_after_a_junk_run_keeps_the_file_small(cache_dir, tmp_path, capsys):
    from kweval.cli import main

    junk = " ".join(f"w{i}x" for i in range(stemming.MAX_CALL_WORDS + 10))
    preds = tmp_path / "junk.jsonl"
    lines = (DATA / "keyphrase_edge_predictions.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    first["keyphrases"].append(junk)
    preds.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    args = ["evaluate", str(DATA / "keyphrase_edge"), "--protocol", "pke", "--format", "json"]
    assert main([*args, "--predictions", f"junk={preds}"]) == 0
    capsys.readouterr()
    [file] = (cache_dir / "stems").glob("*.json")
    stems = json.loads(file.read_text())
    assert 0 < len(stems) < 1000 and "w1x" not in stems and file.stat().st_size < 50_000


def test_nltk_version_without_nltk_is_said_not_raised(monkeypatch):
    """A core install (no `stem` extra) still writes its protocol card, which names the NLTK version."""
    import importlib.util

    from kweval.text import stemming

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "nltk" else real(name, *a))
    assert stemming.nltk_version() == "not installed"


def test_stem_matching_keeps_its_stems_for_the_next_run(cache_dir, demo_dataset):
    """Stem matching and the presets share one persistent stem cache: an evaluation with match=stem writes every GT
    word's Porter stem to the file a later process reads (and reports nothing when the write succeeds)."""
    from kweval.evaluation.pipeline import EvalOptions, evaluate
    from kweval.text import normalize

    normalize._stem_word.cache_clear()  # bound to this test's cache folder
    try:
        ev = evaluate(demo_dataset, EvalOptions(match="stem"))
    finally:
        normalize._stem_word.cache_clear()
    kept = json.loads(stemming.default_cache_file().read_text(encoding="utf-8"))
    words = {w for norm in ev.ground_truth["norm"] for w in norm.split()}
    porter = stemming.load_porter()
    assert words and words <= set(kept) and all(kept[w] == porter(w) for w in words)
    assert not [p for p in ev.problems if p.source == "stem cache"]
    assert stemming.shared_stems().stems is not None and protocols.stem_words(["running"]) == (porter("running"),)


RACE = """
import json, sys, threading
from kweval.text import stemming
assert "nltk" not in sys.modules  # load_porter's stand-in packages, not NLTK's own import
stop, seen = threading.Event(), []
def load():
    while not stop.is_set():
        stemming.load_porter()
thread = threading.Thread(target=load)
thread.start()
try:
    seen = [stemming.nltk_version() for _ in range(3000)]
finally:
    stop.set()
    thread.join()
print(json.dumps(sorted(set(seen))))
"""


def test_finding_nltk_while_another_thread_loads_the_stemmer():
    """A server runs pages in threads: the Data page's protocol card (`nltk_version`) met another page's stand-in
    `nltk` package in sys.modules and failed with `ValueError: nltk.__spec__ is None` (seen in chromium)."""
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(RACE)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-1500:]
    versions = json.loads(done.stdout)
    assert len(versions) == 1 and versions[0][0].isdigit(), versions
