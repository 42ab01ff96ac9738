"""kweval.embeddings.store: the persistent embedding store (every store lives under tmp_path)."""

from __future__ import annotations

import multiprocessing as mp
import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from kweval.embeddings import store as cache
from kweval.embeddings.models import canonical_model_id
from kweval.embeddings.store import EmbeddingStore, cache_clear, cache_info, describe, store_path
from tests.helpers import run_in_process

REPO = Path(__file__).resolve().parents[1]
MODEL = "all-MiniLM-L6-v2"


def vec_of(text: str, dim: int = 8) -> np.ndarray:
    """A deterministic unit vector per text (so two writers of one key write the same value)."""
    seed = int.from_bytes(cache.text_key(text)[:4], "big")
    v = np.random.default_rng(seed).standard_normal(dim).astype(np.float32)
    return v / np.linalg.norm(v)


def vecs_of(texts, dim: int = 8) -> np.ndarray:
    return np.stack([vec_of(t, dim) for t in texts]) if texts else np.zeros((0, dim), np.float32)


def bad_rows(store: EmbeddingStore) -> int:
    """Rows of the store's file whose key, size or checksum is wrong, read apart from the store (after quick_check)."""
    conn = sqlite3.connect(store.path)
    try:
        assert conn.execute("PRAGMA quick_check").fetchall() == [("ok",)]
        return sum(
            1
            for rowid, h, dim, crc, blob in conn.execute("SELECT rowid, h, dim, crc, vec FROM embeddings")
            if cache._rowid(bytes(h)) != rowid
            or len(bytes(blob)) != dim * 4
            or crc != cache._checksum(bytes(h), bytes(blob))
        )
    finally:
        conn.close()


def quiet_store(*args, **kwargs) -> EmbeddingStore:
    store = EmbeddingStore(*args, **kwargs)
    assert store.notes == [] and store.disabled is None  # a healthy store has nothing to say
    return store


# ----------------------------------------------------------------------------- basics


def test_roundtrip_hits_misses_len(tmp_path):
    store = quiet_store(MODEL, tmp_path)
    assert len(store) == 0 and store.dim is None
    vectors, found = store.get_many(["a", "b"])
    assert vectors.shape == (2, 0) and not found.any()
    assert (store.hits, store.misses) == (0, 2)

    texts = ["scam", "fraud", "Darth Vader", "ünïcödé ✓", ""]
    store.put_many(texts, vecs_of(texts))
    assert len(store) == 5 and store.dim == 8

    vectors, found = store.get_many(["fraud", "missing", "scam", "fraud"])
    assert found.tolist() == [True, False, True, True]
    assert vectors.dtype == np.float32 and vectors.shape == (4, 8)
    np.testing.assert_array_equal(vectors[0], vec_of("fraud"))
    np.testing.assert_array_equal(vectors[2], vec_of("scam"))
    np.testing.assert_array_equal(vectors[1], np.zeros(8, np.float32))  # a miss is a zero row
    assert (store.hits, store.misses) == (3, 3)

    # persisted: a new object (a new connection) sees the same rows
    store.close()
    again = quiet_store(MODEL, tmp_path)
    vectors, found = again.get_many(texts)
    assert found.all()
    np.testing.assert_array_equal(vectors, vecs_of(texts))
    assert (again.hits, again.misses) == (5, 0)


def test_insert_or_ignore_keeps_the_first_value(tmp_path):
    store = quiet_store(MODEL, tmp_path)
    store.put_many(["x", "x"], np.stack([np.ones(4), np.zeros(4)]).astype(np.float32))
    store.put_many(["x"], np.full((1, 4), 7, np.float32))
    vectors, found = store.get_many(["x"])
    assert found[0] and vectors[0].tolist() == [1, 1, 1, 1]
    assert len(store) == 1


def test_keys_are_exact_strings(tmp_path):
    # the store never rewrites a text: "Great!" and "great" are different keys
    store = quiet_store(MODEL, tmp_path)
    store.put_many(["great"], vecs_of(["great"]))
    assert store.get_many(["Great!", "great ", "great"])[1].tolist() == [False, False, True]


def test_rejects_bad_input(tmp_path):
    store = quiet_store(MODEL, tmp_path)
    store.put_many(["a"], vecs_of(["a"]))
    with pytest.raises(ValueError, match="8-dimensional"):
        store.put_many(["b"], np.ones((1, 3), np.float32))
    with pytest.raises(ValueError, match="NaN"):
        store.put_many(["b"], np.full((1, 8), np.nan, np.float32))
    with pytest.raises(ValueError, match="shape"):
        store.put_many(["b", "c"], np.ones((1, 8), np.float32))
    with pytest.raises(TypeError):
        store.get_many([None])
    assert len(store) == 1


def test_paths_and_cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("KWEVAL_CACHE_DIR", str(tmp_path / "env"))
    assert cache.cache_dir() == tmp_path / "env"
    store = quiet_store("sentence-transformers/all-MiniLM-L6-v2")
    assert store.path.parent == tmp_path / "env"
    assert store.path.name.startswith("sentence-transformers_all-MiniLM-L6-v2-") and store.path.suffix == ".sqlite"
    # ids that sanitize alike still get their own file
    assert store_path("a/b", tmp_path) != store_path("a_b", tmp_path)
    monkeypatch.delenv("KWEVAL_CACHE_DIR")
    import platformdirs

    assert cache.cache_dir() == Path(platformdirs.user_cache_dir("kweval")) / "embeddings"


# ----------------------------------------------------------------------------- damage


def _filled(tmp_path, n: int = 400) -> tuple[EmbeddingStore, list[str]]:
    texts = [f"keyword {i}" for i in range(n)]
    store = quiet_store(MODEL, tmp_path)
    store.put_many(texts, vecs_of(texts, 384))
    store.close()  # last connection: the WAL is checkpointed into the main file
    assert not Path(f"{store.path}-wal").exists()
    return store, texts


def _recovers(store_path_: Path, tmp_path, texts) -> EmbeddingStore:
    store = EmbeddingStore(MODEL, tmp_path)
    vectors, found = store.get_many(texts)
    assert len(store.notes) == 1 and "moved aside" in store.notes[0], store.notes
    assert not found.any() and not vectors.any()  # nothing from the damaged file is trusted
    assert store.moved == 1 and len(store) == 0 and store.disabled is None
    aside = list(tmp_path.glob(f"{store_path_.name}.corrupt-*"))
    assert len(aside) == 1 and aside[0].name in store.notes[0]
    # rebuilt: usable again
    store.put_many(texts[:3], vecs_of(texts[:3], 384))
    assert store.get_many(texts[:3])[1].all()
    return store


def test_truncated_file_is_moved_aside_and_rebuilt(tmp_path):
    store, texts = _filled(tmp_path)
    size = store.path.stat().st_size
    with open(store.path, "r+b") as fh:
        fh.truncate(size // 2)
    _recovers(store.path, tmp_path, texts)


def test_file_cut_inside_the_header_or_overwritten(tmp_path):
    store, texts = _filled(tmp_path)
    with open(store.path, "r+b") as fh:
        fh.truncate(50)
    _recovers(store.path, tmp_path, texts).close()
    cache_clear(tmp_path)
    store, texts = _filled(tmp_path)
    store.path.write_bytes(b"this is not a database" * 1000)
    _recovers(store.path, tmp_path, texts)


def test_corrupted_blob_in_the_file_is_dropped_not_returned(tmp_path):
    store, texts = _filled(tmp_path)
    victim = texts[123]
    blob = vec_of(victim, 384).astype("<f4").tobytes()
    raw = bytearray(store.path.read_bytes())
    at = raw.find(blob)
    assert at > 0 and raw.find(blob, at + 1) == -1
    raw[at + 700] ^= 0x5A  # one byte inside the vector, as a bad disk sector would
    store.path.write_bytes(bytes(raw))

    again = EmbeddingStore(MODEL, tmp_path)
    vectors, found = again.get_many(texts)
    assert len(again.notes) == 1 and "1 damaged row" in again.notes[0], again.notes
    assert found.sum() == len(texts) - 1 and not found[123]
    assert not vectors[123].any()
    np.testing.assert_array_equal(vectors[found], vecs_of(texts, 384)[found])
    assert again.dropped == 1 and len(again) == len(texts) - 1  # the bad row is gone ...
    again.put_many([victim], vecs_of([victim], 384))  # ... so the recomputed vector is stored
    vectors, found = again.get_many([victim])
    assert found[0]
    np.testing.assert_array_equal(vectors[0], vec_of(victim, 384))


@pytest.mark.parametrize(
    "update",
    [
        "UPDATE embeddings SET vec = substr(vec, 1, 100)",  # wrong length
        "UPDATE embeddings SET vec = zeroblob(length(vec))",  # checksum mismatch
        "UPDATE embeddings SET dim = 7",  # dimension mismatch
    ],
)
def test_bad_rows_are_detected(tmp_path, update):
    store, texts = _filled(tmp_path, 20)
    conn = sqlite3.connect(store.path)
    rowid = conn.execute("SELECT rowid FROM embeddings ORDER BY rowid LIMIT 1").fetchone()[0]
    conn.execute(f"{update} WHERE rowid = ?", (rowid,))
    conn.commit()
    conn.close()
    again = EmbeddingStore(MODEL, tmp_path)
    vectors, found = again.get_many(texts)
    assert len(again.notes) == 1 and "damaged row" in again.notes[0]
    assert found.sum() == 19 and again.dropped == 1 and len(again) == 19
    np.testing.assert_array_equal(vectors[found], vecs_of(texts, 384)[found])


def _spoil_checksums(path: Path, n: int) -> None:
    """Alter the checksum of `n` rows: the file stays sound to quick_check, the rows do not."""
    conn = sqlite3.connect(path)
    conn.execute("UPDATE embeddings SET crc = crc + 1 WHERE rowid IN (SELECT rowid FROM embeddings LIMIT ?)", (n,))
    conn.commit()
    conn.close()


def test_bad_rows_are_dropped_when_read(tmp_path):
    store, texts = _filled(tmp_path, 30)
    _spoil_checksums(store.path, 2)
    again = quiet_store(MODEL, tmp_path)
    assert bad_rows(again) == 2
    found = again.get_many(texts)[1]
    assert found.sum() == 28 and again.dropped == 2 and len(again.notes) == 1
    assert bad_rows(again) == 0 and len(again) == 28


_CRASH = """
import os, sys
import numpy as np
from kweval.embeddings.store import EmbeddingStore, _rowid, _checksum, text_key
store = EmbeddingStore("m", sys.argv[1])
store.put_many(["committed 1", "committed 2"], np.ones((2, 4), np.float32))
assert store.notes == [], store.notes
conn = store._connection()
conn.execute("BEGIN IMMEDIATE")
for t in ["half-written 1", "half-written 2"]:
    k = text_key(t); blob = np.ones(4, "<f4").tobytes()
    row = (_rowid(k), k, 4, _checksum(k, blob), blob)
    conn.execute("INSERT INTO embeddings (rowid, h, dim, crc, vec) VALUES (?, ?, ?, ?, ?)", row)
os._exit(3)  # dies mid-transaction: no commit, no close
"""


def test_crash_mid_write_keeps_what_was_committed(tmp_path):
    proc = subprocess.run([sys.executable, "-c", _CRASH, str(tmp_path)], cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 3, proc.stderr
    store = quiet_store("m", tmp_path)
    found = store.get_many(["committed 1", "committed 2", "half-written 1", "half-written 2"])[1]
    assert found.tolist() == [True, True, False, False]
    assert len(store) == 2 and bad_rows(store) == 0


# ----------------------------------------------------------------------------- concurrency


def _writer(folder: str, texts: list[str], start, batch: int) -> None:
    store = EmbeddingStore(MODEL, folder)
    start.wait()
    for i in range(0, len(texts), batch):
        chunk = texts[i : i + batch]
        store.put_many(chunk, vecs_of(chunk))
        store.get_many(chunk)  # readers beside the other writer
    store.close()


@pytest.mark.slow  # real embeddings / several processes: tens of seconds
def test_two_writer_processes_lose_nothing(tmp_path):
    shared = [f"shared {i}" for i in range(300)]
    own_a = [f"only a {i}" for i in range(300)]
    own_b = [f"only b {i}" for i in range(300)]
    texts_a = [t for pair in zip(shared, own_a) for t in pair]
    texts_b = [t for pair in zip(own_b, shared[::-1]) for t in pair]
    ctx = mp.get_context("spawn")
    start = ctx.Event()
    procs = [ctx.Process(target=_writer, args=(str(tmp_path), texts, start, 15)) for texts in (texts_a, texts_b)]
    for p in procs:
        p.start()
    start.set()
    for p in procs:
        p.join(120)
    assert [p.exitcode for p in procs] == [0, 0]

    everything = shared + own_a + own_b
    store = quiet_store(MODEL, tmp_path)
    vectors, found = store.get_many(everything)
    assert found.all() and len(store) == len(everything)
    np.testing.assert_array_equal(vectors, vecs_of(everything))
    assert bad_rows(store) == 0


# ----------------------------------------------------------------------------- warm call, folder tools


def test_warm_call_does_not_load_the_model_nor_import_torch(tmp_path):
    from kweval.embeddings import semantic

    texts = ["scam", "fraud", "cinematography", "lightsaber duel"]
    backend, precision = semantic.variant()  # the default backend's store (auto: onnx/fp32 on a CPU)
    store = quiet_store(MODEL, tmp_path, backend=backend, precision=precision)
    store.put_many(texts, vecs_of(texts, 384))
    store.close()
    script = textwrap.dedent(
        """
        import sys
        import numpy as np
        from kweval.embeddings import semantic
        from kweval.embeddings.store import EmbeddingStore
        texts = ["scam", "fraud", "scam", "cinematography", "lightsaber duel"]
        calls = []
        # the store from $KWEVAL_CACHE_DIR
        default = semantic.embed_texts(texts, progress=lambda d, t: calls.append((d, t)))
        backend, precision = semantic.variant()
        store = EmbeddingStore(semantic.DEFAULT_MODEL, backend=backend, precision=precision)
        explicit = semantic.embed_texts(texts, store=store)
        loaded = semantic.load_model.cache_info().currsize + semantic._onnx_encoder.cache_info().currsize
        assert loaded == 0, "model loaded"
        assert "torch" not in sys.modules and "sentence_transformers" not in sys.modules, "torch imported"
        assert "onnxruntime" not in sys.modules, "onnxruntime imported"
        assert calls == [(4, 4)], calls
        assert (store.hits, store.misses) == (4, 0), (store.hits, store.misses)
        np.save(sys.argv[1], np.stack([default, explicit]))
        print("ok")
        """
    )
    out = tmp_path / "warm.npy"
    env = dict(os.environ, KWEVAL_CACHE_DIR=str(tmp_path), HF_HUB_OFFLINE="1")
    proc = subprocess.run([sys.executable, "-c", script, str(out)], cwd=REPO, env=env, capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr
    default, explicit = np.load(out)
    expected = vecs_of(["scam", "fraud", "scam", "cinematography", "lightsaber duel"], 384)
    np.testing.assert_array_equal(default, expected)
    np.testing.assert_array_equal(explicit, expected)


def test_cache_info_and_clear(tmp_path):
    assert cache_info(tmp_path / "nowhere") == [] and cache_clear(tmp_path / "nowhere") == 0
    a = quiet_store("model-a", tmp_path)
    a.put_many(["x", "y", "z"], vecs_of(["x", "y", "z"], 16))
    b = quiet_store("org/model-b", tmp_path)
    b.put_many(["x"], vecs_of(["x"], 4))
    empty = quiet_store("model-c", tmp_path)
    for s in (a, b, empty):
        s.close()
    info = {i["model_id"]: i for i in cache_info(tmp_path)}
    assert set(info) == {"model-a", "org/model-b", "model-c"}
    assert (info["model-a"]["entries"], info["model-a"]["dimension"]) == (3, 16)
    assert (info["org/model-b"]["entries"], info["org/model-b"]["dimension"]) == (1, 4)
    assert (info["model-c"]["entries"], info["model-c"]["dimension"]) == (0, None)
    assert info["model-a"]["path"] == str(a.path) and info["model-a"]["bytes"] >= a.path.stat().st_size > 0

    assert cache_clear(tmp_path, model_id="org/model-b") == 1
    assert not b.path.exists()
    assert {i["model_id"] for i in cache_info(tmp_path)} == {"model-a", "model-c"}
    assert cache_clear(tmp_path, model_id="org/model-b") == 0
    (tmp_path / f"{a.path.name}.corrupt-20250101T000000").write_bytes(b"old")
    assert cache_clear(tmp_path) == 2
    assert cache_info(tmp_path) == [] and not any(tmp_path.glob("*.sqlite*"))


# ----------------------------------------------------------------------------- variants


def test_aliases_share_a_store_and_variants_never_mix(tmp_path):
    short = quiet_store("all-MiniLM-L6-v2", tmp_path)
    full = quiet_store("sentence-transformers/all-MiniLM-L6-v2", tmp_path)
    assert short.path == full.path and short.model_id == "sentence-transformers/all-MiniLM-L6-v2"
    short.put_many(["scam"], vecs_of(["scam"]))
    assert full.get_many(["scam"])[1].all()
    others = [
        quiet_store(MODEL, tmp_path, backend=b, precision=p)
        for b, p in (("torch", "fp16"), ("onnx", "fp32"), ("onnx", "int8"))
    ]
    assert len({short.path, *(o.path for o in others)}) == 4
    for other in others:
        assert not other.get_many(["scam"])[1].any()  # a torch fp32 vector is never served as another variant's
    info = {(i["backend"], i["precision"]): i for i in cache_info(tmp_path)}
    assert info[("torch", "fp32")]["entries"] == 1 and info[("onnx", "int8")]["entries"] == 0
    assert all(i["model_id"] == "sentence-transformers/all-MiniLM-L6-v2" for i in info.values())


def test_a_file_of_another_variant_under_this_name_is_damage(tmp_path):
    fp16 = quiet_store(MODEL, tmp_path, precision="fp16")
    fp16.put_many(["scam"], vecs_of(["scam"]))
    fp16.close()
    os.replace(fp16.path, store_path("sentence-transformers/all-MiniLM-L6-v2", tmp_path))  # a misplaced file
    fp32 = EmbeddingStore(MODEL, tmp_path)
    assert not fp32.get_many(["scam"])[1].any()
    assert len(fp32.notes) == 1 and "precision" in fp32.notes[0] and "moved aside" in fp32.notes[0]


def test_fp64_store_keeps_exact_values(tmp_path):
    store = quiet_store("vaderSentiment-x", tmp_path, backend="vader", precision="fp64")
    values = np.array([[0.1, 0.7, 0.2], [1 / 3, 0.0, 2 / 3]])
    store.put_many(["good", "bad"], values)
    got, found = quiet_store("vaderSentiment-x", tmp_path, backend="vader", precision="fp64").get_many(["bad", "good"])
    assert found.all() and got.dtype == np.float64
    np.testing.assert_array_equal(got, values[::-1])


# ----------------------------------------------------------------------------- the policy: never stops a run


def test_foreign_schema_is_moved_aside_and_rebuilt(tmp_path):
    path = store_path("sentence-transformers/all-MiniLM-L6-v2", tmp_path)
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE embeddings (text TEXT PRIMARY KEY, vector BLOB)")
    conn.execute("INSERT INTO embeddings VALUES ('scam', x'00')")
    conn.commit()
    conn.close()
    store = EmbeddingStore(MODEL, tmp_path)
    assert len(store.notes) == 1 and "foreign schema" in store.notes[0] and store.moved == 1
    store.put_many(["scam"], vecs_of(["scam"]))
    assert store.get_many(["scam"])[1].all() and store.disabled is None


def test_malformed_page_found_by_the_check_on_open(tmp_path):
    store, texts = _filled(tmp_path)
    raw = bytearray(store.path.read_bytes())
    page = 8192
    assert len(raw) > 6 * page
    raw[4 * page : 4 * page + 16] = b"\xff" * 16  # a b-tree page header scribbled over
    store.path.write_bytes(bytes(raw))
    assert "damage" in cache_info(tmp_path)[0] and cache_info(tmp_path)[0]["damage"]
    assert describe(cache_info(tmp_path)[0]).startswith("DAMAGED ")
    _recovers(store.path, tmp_path, texts)
    assert cache_info(tmp_path)[0]["damage"] is None


def test_cache_info_names_damage_not_none(tmp_path):
    store, _ = _filled(tmp_path, 5)
    store.path.write_bytes(b"garbage" * 100)
    [info] = cache_info(tmp_path)
    line = describe(info)
    assert "None" not in line and "not a SQLite database" in line and str(store.path) in line


def test_folder_that_cannot_exist_switches_the_store_off(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    store = EmbeddingStore(MODEL, blocker / "cache")  # its parent is a regular file: works as root too
    assert store.disabled and len(store.notes) == 1 and "without the cache" in store.notes[0]
    vectors, found = store.get_many(["scam"])
    assert not found.any()
    store.put_many(["scam"], vecs_of(["scam"]))  # a no-op, no exception
    assert len(store) == 0 and len(store.notes) == 1


_FSIZE = """
import resource, sys
import numpy as np
from kweval.embeddings.store import EmbeddingStore
store = EmbeddingStore("m", sys.argv[1])
resource.setrlimit(resource.RLIMIT_FSIZE, (200_000, 200_000))  # the disk 'fills' at 200 kB
texts = [f"keyword {i}" for i in range(2000)]
for i in range(0, 2000, 20):
    store.put_many(texts[i:i + 20], np.ones((20, 384), np.float32))
found = store.get_many(texts)[1]
print(store.disabled is not None, len(store.notes), int(found.sum()))
print(store.notes[0])
"""


def test_file_size_limit_mid_run_goes_on_uncached(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-c", _FSIZE, str(tmp_path)],
        cwd=REPO,
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(REPO)),
    )
    assert proc.returncode == 0, proc.stderr
    flag, notes, found = proc.stdout.splitlines()[0].split()
    assert (flag, notes, found) == ("True", "1", "0")  # off after the error: lookups miss, nothing raised
    assert "without the cache" in proc.stdout and "Traceback" not in proc.stderr
    again = quiet_store("m", tmp_path)  # what was committed before the limit is intact
    assert 0 < len(again) < 2000 and bad_rows(again) == 0


@pytest.mark.slow
def test_cli_semantic_run_with_an_unusable_cache_says_one_line(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    env: dict[str, str | None] = {"KWEVAL_CACHE_DIR": str(blocker / "cache"), "HF_HUB_OFFLINE": "1"}
    args = ["evaluate", "--semantic", "--movies", "night_heist", "--models", "yake"]
    proc = run_in_process(*args, env_extra=env, cwd=tmp_path)  # kweval.cli.main in this process
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if "cache" in line]
    assert len(lines) == 1 and lines[0].startswith("kweval: embedding cache: ") and "without the cache" in lines[0]
    assert "sem_f1" in proc.stdout.splitlines()[0] and "night_heist" in proc.stdout
    info = run_in_process("cache", "info", env_extra=env, cwd=tmp_path)
    assert info.returncode == 0 and "Traceback" not in info.stderr


def test_kweval_home_is_the_one_root(tmp_path, monkeypatch):
    """KWEVAL_HOME alone puts the caches and the judgments under one folder (a container's volume); the per-part
    variables still move a part elsewhere."""
    from kweval.cachedir import cache_dir, home_dir
    from kweval.judgments import default_path
    from kweval.text.stemming import default_cache_file

    for name in ("KWEVAL_CACHE_DIR", "KWEVAL_JUDGMENTS_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("KWEVAL_HOME", str(tmp_path / "home"))
    assert home_dir() == tmp_path / "home" and cache_dir() == tmp_path / "home" / "embeddings"
    for path in (store_path(MODEL), default_path("ab" * 32), default_cache_file()):
        assert path.is_relative_to(tmp_path / "home"), path
    monkeypatch.setenv("KWEVAL_CACHE_DIR", str(tmp_path / "elsewhere"))
    assert cache_dir() == tmp_path / "elsewhere" and store_path(MODEL).parent == tmp_path / "elsewhere"
    monkeypatch.delenv("KWEVAL_HOME")
    monkeypatch.delenv("KWEVAL_CACHE_DIR")
    assert home_dir().name == "kweval" and cache_dir() == home_dir() / "embeddings"  # the platform's cache folder


NOT_A_FILE = {
    "folder": lambda p: p.mkdir(),
    "dangling link": lambda p: p.symlink_to(p.with_name("gone.sqlite")),
    "link loop": lambda p: p.symlink_to(p),
}


@pytest.mark.parametrize("damage", sorted(NOT_A_FILE))
def test_a_store_that_is_no_file_is_named_damaged_then_moved_aside(tmp_path, damage):
    """`kweval cache info` listed nothing for a folder or link in a store's place (and runs went without the cache):
    it is damage, named, and the next run moves it aside and rebuilds the store."""
    path = store_path(canonical_model_id(MODEL), tmp_path)  # the file EmbeddingStore(MODEL) opens
    NOT_A_FILE[damage](path)
    [info] = cache_info(tmp_path)
    assert describe(info).startswith(f"DAMAGED {path}: not a file: ") and "None" not in describe(info)
    store = EmbeddingStore(MODEL, tmp_path)
    store.put_many(["scam"], vecs_of(["scam"]))
    assert store.disabled is None and store.moved == 1 and store.get_many(["scam"])[1].all(), store.notes
    [info] = cache_info(tmp_path)
    assert info["damage"] is None and info["entries"] == 1
    store.close()
    assert cache_clear(tmp_path) == 1 and not list(tmp_path.iterdir())  # the moved-aside entry too


def test_cache_info_counts_vectors_that_fail_their_checksum(tmp_path):
    """quick_check passes a file whose rows were altered; a lookup drops those rows: cache info says so."""
    store, texts = _filled(tmp_path, 5)
    _spoil_checksums(store.path, 2)
    [info] = cache_info(tmp_path)
    assert info["damage"] is None and info["bad_rows"] == 2 and info["entries"] == 5
    assert describe(info).startswith("DAMAGED ") and "2 vector(s) fail their checksum" in describe(info)
    assert EmbeddingStore(MODEL, tmp_path).get_many(texts)[1].sum() == 3  # what a run finds: the other three
    assert cache_info(tmp_path)[0]["bad_rows"] == 0  # dropped by that lookup


def test_an_empty_store_file_is_said_empty(tmp_path):
    path = store_path(MODEL, tmp_path)
    tmp_path.mkdir(exist_ok=True)
    path.write_bytes(b"")
    line = describe(cache_info(tmp_path)[0])
    assert line.startswith(f"EMPTY {path}: ") and "None" not in line
