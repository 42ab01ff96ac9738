"""A damaged ONNX export (truncated, emptied, overwritten; fp32 and int8) is detected, moved aside and rebuilt once;
one that cannot be built or loaded falls back to torch with one line; a full disk does the same (issue 22).

The transformer's export is replaced by a tiny ONNX graph with its inputs and output (`_tiny_export`), so these
run in a second; one slow test damages the real export under the real CLI.
"""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from kweval.embeddings import exports, semantic
from kweval.embeddings import onnx as kw_onnx
from kweval.embeddings.store import EmbeddingStore

onnx = pytest.importorskip("onnx")

REPO = Path(__file__).resolve().parents[1]
DIM = 4


def _tiny_export(model_path: str, target: Path) -> None:
    """token_embeddings[b, t, :] = input_ids[b, t] * W (a MatMul with weights, so int8 quantization has work)."""
    from onnx import TensorProto, helper, numpy_helper

    inputs = [helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "tokens"]) for n in _INPUTS]
    output = helper.make_tensor_value_info("token_embeddings", TensorProto.FLOAT, ["batch", "tokens", DIM])
    weight = numpy_helper.from_array(np.linspace(0.1, 1.0, 16 * DIM, dtype=np.float32).reshape(16, DIM), "W")
    axes = numpy_helper.from_array(np.array([2], dtype=np.int64), "axes")
    nodes = [
        helper.make_node("Cast", ["input_ids"], ["ids_f"], to=TensorProto.FLOAT),
        helper.make_node("Unsqueeze", ["ids_f", "axes"], ["ids_3"]),
        helper.make_node("Tile", ["ids_3", "reps"], ["wide"]),
        helper.make_node("MatMul", ["wide", "W"], ["token_embeddings"]),
    ]
    reps = numpy_helper.from_array(np.array([1, 1, 16], dtype=np.int64), "reps")
    graph = helper.make_graph(nodes, "tiny", inputs, [output], initializer=[weight, axes, reps])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(target))


_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
DAMAGE = {
    "truncated": lambda p: p.write_bytes(p.read_bytes()[: p.stat().st_size // 2]),
    "empty": lambda p: p.write_bytes(b""),
    "random": lambda p: p.write_bytes(np.random.default_rng(0).bytes(p.stat().st_size)),
    "folder": lambda p: (p.unlink(), p.mkdir()),  # no file: an export was built over it, and failed, every run
    "dangling link": lambda p: (p.unlink(), p.symlink_to(p.with_name("gone.onnx"))),
    "link loop": lambda p: (p.unlink(), p.symlink_to(p)),
}


@pytest.fixture
def model_path():
    return semantic.resolve_model_path(semantic.DEFAULT_MODEL)  # its tokenizer; the graph is `_tiny_export`'s


@pytest.fixture
def builds(monkeypatch):
    """Count exports; each one writes the tiny graph."""
    made: list[Path] = []

    def export(model_path, target):
        made.append(Path(target))
        _tiny_export(model_path, target)

    monkeypatch.setattr(kw_onnx, "_export", export)
    exports._CHECKED.clear()
    return made


@pytest.fixture
def fresh(monkeypatch, tmp_path):
    """A cache folder of its own, no encoder or failure remembered from another test, torch faked."""
    monkeypatch.setenv("KWEVAL_CACHE_DIR", str(tmp_path / "cache"))
    semantic._onnx_encoder.cache_clear()
    semantic._ONNX_FAILED.clear()
    loaded: list[str] = []

    class FakeTorch:
        max_seq_length = 16

        def tokenizer(self, texts, **_):
            return {"input_ids": [[1] * len(t) for t in texts]}

        def encode(self, batch, **_):
            return np.tile(np.array([[0.0, 1.0, 0.0, 0.0]], np.float32), (len(batch), 1))

    def load_model(model_id=semantic.DEFAULT_MODEL, device=None):
        loaded.append(str(device))
        return FakeTorch()

    monkeypatch.setattr(semantic, "load_model", load_model)
    yield loaded
    semantic._onnx_encoder.cache_clear()
    semantic._ONNX_FAILED.clear()


@pytest.mark.parametrize("quantized", [False, True], ids=["onnx", "onnx-int8"])
@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_damaged_export_is_moved_aside_and_rebuilt_once(tmp_path, model_path, builds, damage, quantized):
    encoder = kw_onnx.load_exported(model_path, tmp_path, quantized)
    good = encoder.encode(["topic models", "scam"])
    path = kw_onnx.onnx_file(model_path, tmp_path, quantized)
    assert exports.manifest_path(path).is_file() and len(builds) == 1
    DAMAGE[damage](path)
    notes: list[str] = []
    again = kw_onnx.load_exported(model_path, tmp_path, quantized, on_note=notes.append)
    assert np.allclose(again.encode(["topic models", "scam"]), good)
    aside = list(path.parent.glob(f"{path.name}.corrupt-*"))
    assert len(aside) == 1 and len(notes) == 1 and "moved aside" in notes[0] and str(path) in notes[0]
    assert len(builds) == (1 if quantized else 2)  # int8 is rebuilt from the sound fp32 file, not re-exported
    assert exports.check(path) is None


def test_an_export_without_manifest_is_load_checked_then_recorded(tmp_path, model_path, builds):
    path = kw_onnx.onnx_file(model_path, tmp_path, quantized=False)
    exports.manifest_path(path).unlink()  # as an older kweval wrote it
    path.write_bytes(b"\x08\x01garbage that is no protobuf model" * 10)
    notes: list[str] = []
    kw_onnx.load_exported(model_path, tmp_path, False, on_note=notes.append)
    assert len(notes) == 1 and "onnxruntime cannot load it" in notes[0] and len(builds) == 2
    exports.manifest_path(path).unlink()
    kw_onnx.load_exported(model_path, tmp_path, False)  # a sound file without manifest: it loads, so recorded
    assert exports.manifest_path(path).is_file() and len(builds) == 2


def test_damaged_again_after_the_rebuild_falls_back_to_torch_with_one_line(fresh, monkeypatch, capsys):
    monkeypatch.setattr(kw_onnx, "_export", lambda model_path, target: Path(target).write_bytes(b"junk" * 100))
    texts = ["topic models", "scam", "fraud"]
    vectors = semantic.embed_texts(texts, backend="onnx", device="cpu")
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("kweval: ")]
    assert vectors.shape == (3, DIM) and fresh == ["cpu"]
    assert sum("torch backend" in line for line in lines) == 1 and "Traceback" not in err
    assert all("\n" not in line for line in lines)
    semantic.embed_texts(["another"], backend="onnx", device="cpu")  # remembered: no second try, no second line
    assert "torch backend" not in capsys.readouterr().err
    cache = Path(os.environ["KWEVAL_CACHE_DIR"])
    onnx_store = EmbeddingStore(semantic.DEFAULT_MODEL, cache, backend="onnx", precision="fp32")
    torch_store = EmbeddingStore(semantic.DEFAULT_MODEL, cache, backend="torch", precision="fp32")
    assert len(onnx_store) == 0 and len(torch_store) == 4  # torch vectors never filed as onnx ones


@pytest.mark.parametrize("code", [errno.EFBIG, errno.ENOSPC, errno.EDQUOT])
def test_export_that_cannot_be_written_falls_back_to_torch(fresh, monkeypatch, capsys, code):
    tries: list[Path] = []

    def full(model_path, target):
        tries.append(Path(target))
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(kw_onnx, "_export", full)
    vectors = semantic.embed_texts(["topic models"], backend="onnx-int8", device="cpu")
    err = capsys.readouterr().err
    assert vectors.shape == (1, DIM) and fresh == ["cpu"] and "Traceback" not in err
    assert len(tries) == 2 and str(tries[0]).startswith(os.environ["KWEVAL_CACHE_DIR"])  # the cache, then a tmp dir
    lines = [line for line in err.splitlines() if line.startswith("kweval: ")]
    assert len(lines) == 1 and os.strerror(code) in lines[0] and "torch backend" in lines[0]
    assert not list(Path(os.environ["KWEVAL_CACHE_DIR"]).rglob("*.tmp*"))  # no half-written export left


def test_cache_info_and_clear_cover_exports_and_stems(tmp_path, model_path, builds, monkeypatch, capsys):
    from kweval.cli import main
    from kweval.text.stemming import PorterCache, default_cache_file

    monkeypatch.setenv("KWEVAL_CACHE_DIR", str(tmp_path))
    path = kw_onnx.onnx_file(model_path, tmp_path, quantized=True)
    stems = PorterCache(default_cache_file())
    stems.stem("models")
    stems.save()
    DAMAGE["random"](path)
    assert main(["cache", "info"]) == 0
    out = capsys.readouterr().out
    assert str(path) in out and str(path.with_name("model.onnx")) in out and "DAMAGED" in out
    assert str(default_cache_file()) in out and "1 stem(s)" in out
    assert main(["cache", "clear"]) == 0
    out = capsys.readouterr().out
    assert "2 ONNX export file(s)" in out and "stem cache" in out
    assert not (tmp_path / exports.EXPORTS_DIR).exists() and not default_cache_file().exists()
    assert main(["cache", "info"]) == 0 and "no ONNX export" in capsys.readouterr().out


@pytest.mark.slow  # the real transformer exported (tens of seconds)
def test_cli_embed_and_semantic_survive_a_damaged_real_export(tmp_path, seed_onnx_export):
    """onnx, then onnx-int8 in the same cache: the int8 export is quantized from the fp32 one rebuilt before it (a
    case each with a cache of its own exported the transformer once more, ~10 s of CPU, for the same checks).  The
    cache starts with the run's fp32 export (`seed_onnx_export`): the real export damaged is the same, and the one
    rebuilt after the damage is the export this test is about; a first build of its own cost ~12 s of CPU more."""
    cache = seed_onnx_export(tmp_path / "cache")
    env = dict(os.environ, KWEVAL_CACHE_DIR=str(cache), HF_HUB_OFFLINE="1", PYTHONPATH=str(REPO))

    def kweval(*args):
        return subprocess.run([sys.executable, "-m", "kweval", *args], cwd=tmp_path, env=env, capture_output=True)

    for backend in ("onnx", "onnx-int8"):
        first = kweval("embed", "--embedding-backend", backend)
        assert first.returncode == 0, (backend, first.stderr)
        name = "model_int8" if "8" in backend else "model"
        [path] = (tmp_path / "cache" / exports.EXPORTS_DIR).glob(f"*/{name}.onnx")
        DAMAGE["truncated"](path)
        args = ["--semantic", "--embedding-backend", backend, "--movies", "night_heist", "--models", "yake"]
        shutil_clear = kweval("cache", "clear", "--embedding-model", semantic.DEFAULT_MODEL)  # vectors gone: embed
        assert shutil_clear.returncode == 0
        run = kweval("evaluate", *args)
        err = run.stderr.decode()
        assert run.returncode == 0 and "Traceback" not in err, (backend, err)
        assert sum("moved aside" in line for line in err.splitlines()) == 1 and b"sem_f1" in run.stdout, backend
        assert exports.check(path) is None


@pytest.mark.parametrize(
    "error",
    [OSError(errno.EFBIG, "File too large"), OSError(errno.EDQUOT, "Disk quota exceeded"), "sqlite-full"],
    ids=["EFBIG", "EDQUOT", "SQLITE_FULL"],
)
def test_a_full_disk_under_the_embedding_store_goes_on_uncached(fresh, tmp_path, monkeypatch, error):
    import sqlite3

    raised = sqlite3.OperationalError("database or disk is full") if error == "sqlite-full" else error

    def full(self, *args, **kwargs):
        raise raised

    monkeypatch.setattr(EmbeddingStore, "_write", full)
    notes: list[str] = []
    store = EmbeddingStore(semantic.DEFAULT_MODEL, tmp_path, backend="torch", precision="fp32", on_note=notes.append)
    vectors = semantic.embed_texts(["a", "b"], store=store, device="cpu", backend="torch")
    assert vectors.shape[0] == 2 and store.disabled and len(notes) == 1 and "without the cache" in notes[0]
    semantic.embed_texts(["c"], store=store, device="cpu", backend="torch")
    assert len(notes) == 1  # said once


def test_keybert_extract_with_a_broken_export_writes_every_document(fresh, monkeypatch, tmp_path, capsys):
    pytest.importorskip("keybert")
    from kweval.cli import main

    monkeypatch.setattr(kw_onnx, "_export", lambda model_path, target: Path(target).write_bytes(b""))
    out = tmp_path / "keybert.jsonl"
    data = REPO / "tests" / "data" / "keyphrase_edge"
    status = main(["extract", str(data), "--extractor", "keybert", "--embedding-backend", "onnx", "--out", str(out)])
    err = capsys.readouterr().err
    assert status == 0 and "Traceback" not in err
    assert sum("torch backend" in line for line in err.splitlines()) == 1
    assert len(out.read_text().splitlines()) == len(list((data / "docsutf8").glob("*.txt")))


def test_the_card_names_torch_after_a_fallback(fresh, monkeypatch, capsys):
    from kweval.evaluation.pipeline import EvalOptions
    from kweval.io.card import evaluation_card

    options = EvalOptions(semantic=True, embedding_backend="onnx")
    assert "(onnx, fp32)" in evaluation_card(options, "d", "h", aggregation="macro")["semantic"]
    monkeypatch.setattr(kw_onnx, "_export", lambda model_path, target: Path(target).write_bytes(b""))
    semantic.embed_texts(["scam"], backend="onnx", device="cpu")
    capsys.readouterr()
    assert "(torch, fp32)" in evaluation_card(options, "d", "h", aggregation="macro")["semantic"]


def test_a_worker_whose_export_is_broken_says_so_instead_of_filing_torch_vectors(fresh, monkeypatch, capsys):
    from kweval.scale import distributed

    monkeypatch.setattr(kw_onnx, "_export", lambda model_path, target: Path(target).write_bytes(b""))
    with pytest.raises(distributed.EmbeddingError, match="ONNX export"):
        distributed.embed_share(["scam"], semantic.DEFAULT_MODEL, "onnx", ("onnx", "fp32"))
    capsys.readouterr()


@pytest.mark.parametrize("damage", ["folder", "dangling link", "link loop"])
def test_cache_info_names_an_export_that_is_no_file(tmp_path, model_path, builds, monkeypatch, capsys, damage):
    """It said "no ONNX export yet" for a folder or link in the export's place."""
    from kweval.cli import main

    monkeypatch.setenv("KWEVAL_CACHE_DIR", str(tmp_path))
    path = kw_onnx.onnx_file(model_path, tmp_path, quantized=False)
    DAMAGE[damage](path)
    assert main(["cache", "info"]) == 0
    out = capsys.readouterr().out
    assert f"ONNX export {path}: 0.0 MB, DAMAGED (not a file: " in out and "no ONNX export yet" not in out
    assert main(["cache", "clear"]) == 0 and "1 ONNX export file(s)" in capsys.readouterr().out
