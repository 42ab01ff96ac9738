"""The embedder: sentence embeddings of keywords, each distinct string once, through the persistent store.

- backends (`BACKENDS`, `resolve_backend`, `variant`): torch, or ONNX Runtime
  (fp32, or int8-quantized); `auto` is onnx on the CPU, torch on a GPU;
- loading (`load_model`, `load_encoder`): the model once per process;
- `embed_texts`: L2-normalized float32 rows with the model's own pooling
  (sentence-transformers ``encode``: mean pooling over real tokens, attention
  mask applied), in length-sorted batches, reading and filling the persistent
  `kweval.embeddings.store.EmbeddingStore`.  When every string is cached the
  model is not loaded and torch is not even imported.

torch and sentence-transformers are imported only inside `load_model` /
`pick_device`; onnxruntime only in `kweval.embeddings.onnx`.  The CLI, the
dashboard and the tests reach the loader through this module (`load_encoder`
is what they patch to count or refuse model loads).  What the vectors are
used for, the similarities and the semantic metrics, is in
`kweval.embeddings.similarity`.
"""

from __future__ import annotations

import importlib.util
import os
import re
import tempfile
import time
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from kweval.embeddings.models import DEFAULT_MODEL, canonical_model_id, resolve_model_path
from kweval.embeddings.similarity import unit_rows
from kweval.extras import require
from kweval.messages import say

if TYPE_CHECKING:  # pragma: no cover
    from kweval.embeddings.store import EmbeddingStore

__all__ = [
    "DEFAULT_MODEL",
    "resolve_model_path",
    "pick_device",
    "load_model",
    "load_encoder",
    "canonical_model_id",
    "variant",
    "used_variant",
    "BACKENDS",
    "DEFAULT_BACKEND",
    "resolve_backend",
    "embed_texts",
    "progress_with_estimate",
]

Progress = Callable[[int, int], None]


# --------------------------------------------------------------------------- model


def pick_device() -> str:
    """``"cuda"`` if available, else ``"mps"``, else ``"cpu"`` (imports torch)."""
    torch = require("torch", "semantic", "semantic matching")

    if torch.cuda.is_available():
        return "cuda"
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        return "mps"
    return "cpu"


BACKENDS = ("auto", "torch", "onnx", "onnx-int8")
DEFAULT_BACKEND = "auto"


def resolve_backend(backend: str = DEFAULT_BACKEND, device: str | None = None) -> str:
    """The concrete backend that `backend` runs on `device` (default: the best available, see `pick_device`).

    ``auto`` is onnx on the CPU (the same vectors as torch fp32 within 6e-7 in
    cosine, and faster: ``bench/bench_semantic.py --mode backends``), torch on
    CUDA or MPS (fp16 on CUDA) or where onnxruntime or onnx is not installed.  Any other
    name is returned as is (after checking it is one of `BACKENDS`).
    """
    if backend not in BACKENDS:
        raise ValueError(f"embedding backend must be one of {', '.join(BACKENDS)}; got {backend!r}")
    if backend != "auto":
        return backend
    on_cpu = str(device or _default_device()) == "cpu"
    exportable = all(importlib.util.find_spec(name) is not None for name in ("onnxruntime", "onnx"))  # run and export
    return "onnx" if on_cpu and exportable else "torch"


def variant(backend: str = DEFAULT_BACKEND, device: str | None = None) -> tuple[str, str]:
    """(backend, precision) of the vectors a backend produces: torch fp32 on CPU, fp16 on CUDA; onnx fp32 or int8.

    ``auto`` is resolved first (`resolve_backend`): stores are keyed by what actually computed the vectors.
    """
    backend = resolve_backend(backend, device)
    if backend == "onnx-int8":
        return "onnx", "int8"
    if backend == "onnx":
        return "onnx", "fp32"
    return "torch", "fp16" if str(device or _default_device()).startswith("cuda") else "fp32"


def used_variant(backend: str = DEFAULT_BACKEND, model_id: str = DEFAULT_MODEL) -> tuple[str, str]:
    """`variant(backend)`, or torch fp32 where this process fell back from a broken ONNX export (what the protocol
    card names: the backend that actually computed the vectors)."""
    kind = variant(backend)
    if kind[0] == "onnx" and (model_id, kind[1] == "int8") in _ONNX_FAILED:
        return "torch", "fp32"
    return kind


def _default_device() -> str:
    """`pick_device()`, but without importing torch when its build has no CUDA (read from torch/version.py)."""
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return "cpu"
    try:
        text = (Path(list(spec.submodule_search_locations)[0]) / "version.py").read_text()
    except OSError:
        text = ""
    if re.search(r"^cuda\s*(:[^=]*)?=\s*None", text, re.M):
        return "cpu"  # mps, if any, computes in fp32 as the CPU does
    return pick_device()


@lru_cache(maxsize=4)
def load_model(model_id: str = DEFAULT_MODEL, device: str | None = None):
    """The sentence-transformers model for `model_id` on `device` (default `pick_device()`), loaded once per process.

    fp16 on CUDA (``model.half()``); eval mode; on CPU torch uses as many
    threads as the cores this process may run on.  Imports torch and
    sentence-transformers here, never at module import.
    """
    device = device or pick_device()
    path = resolve_model_path(model_id)
    SentenceTransformer = require("sentence_transformers", "semantic", "semantic matching").SentenceTransformer
    import torch

    from kweval.embeddings.onnx import available_cores

    torch.set_num_threads(available_cores())
    try:
        model = SentenceTransformer(path, device=device)
    except OSError as exc:
        offline = os.environ.get("HF_HUB_OFFLINE", "") not in ("", "0")
        hint = " (HF_HUB_OFFLINE is set and it is not in the local Hugging Face cache)" if offline else ""
        raise OSError(f"cannot load embedding model {model_id!r}{hint}: {exc}") from exc
    if str(device).startswith("cuda"):
        model = model.half()
    model.eval()
    return model


def load_encoder(
    model_id: str = DEFAULT_MODEL, device: str | None = None, backend: str = DEFAULT_BACKEND
) -> Callable[[list[str]], np.ndarray]:
    """A function texts → unit float32 rows for `backend` (torch: `load_model`; onnx: the exported model), loaded
    once."""
    backend = resolve_backend(backend, device)
    if backend == "torch":
        return _TorchEncoder(load_model(model_id, device))
    key = (model_id, backend == "onnx-int8")
    if key not in _ONNX_FAILED:
        from kweval.embeddings.onnx import ExportError

        try:
            return _onnx_encoder(*key)
        except ExportError as exc:
            _ONNX_FAILED[key] = str(exc)
            _say(f"ONNX export of {model_id}: {exc}; this run embeds with the torch backend")
    return _TorchEncoder(load_model(model_id, "cpu"), variant=("torch", "fp32"))


_ONNX_FAILED: dict[tuple[str, bool], str] = {}  # exports that could not be used in this process: torch instead


def _say(note: str) -> None:
    """One `kweval: ...` line on stderr: the embedder's own events (a damaged export rebuilt, the torch fallback)."""
    say(note)


class _TorchEncoder:
    """sentence-transformers' ``encode`` on one batch, and the token counts `embed_texts` sorts by."""

    def __init__(self, model, variant: tuple[str, str] | None = None):
        self.model = model
        self.variant = variant  # (backend, precision) when it stands in for another backend's encoder

    def __call__(self, batch: list[str]) -> np.ndarray:
        return self.model.encode(
            batch, batch_size=len(batch), normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
        )

    def token_counts(self, texts: list[str]) -> np.ndarray:
        ids = self.model.tokenizer(texts, truncation=True, max_length=self.model.max_seq_length)["input_ids"]
        return np.fromiter(map(len, ids), dtype=np.int64, count=len(texts))


def _token_counts(encode: Callable[[list[str]], np.ndarray], texts: list[str]) -> np.ndarray:
    """Tokens per text as the encoder counts them (its ``token_counts``), else characters: the sort key of batches."""
    counts = getattr(encode, "token_counts", None)
    if counts is None:
        return np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    return np.asarray(counts(texts), dtype=np.int64)


@lru_cache(maxsize=4)
def _onnx_encoder(model_id: str, quantized: bool) -> Callable[[list[str]], np.ndarray]:
    """The ONNX encoder from the export in the cache (a damaged one rebuilt once); where the cache cannot hold it
    (read-only, full, over quota), an export for this run only; ExportError when neither works."""
    from kweval.embeddings.onnx import ExportError, load_exported
    from kweval.embeddings.store import cache_dir

    path = resolve_model_path(model_id)
    try:
        return load_exported(path, cache_dir(), quantized, on_note=_say)
    except (OSError, ExportError) as exc:
        if isinstance(exc, ExportError) and not exc.storage:
            raise
    try:
        with tempfile.TemporaryDirectory(prefix="kweval-onnx-") as folder:  # the session holds the model
            return load_exported(path, Path(folder), quantized, on_note=_say)
    except OSError as exc:
        raise ExportError(f"cannot be written to the cache nor to a temporary folder ({exc})", storage=True) from exc


# --------------------------------------------------------------------------- embedding


def embed_texts(
    texts: Sequence[str],
    model_id: str = DEFAULT_MODEL,
    store: EmbeddingStore | None | bool = None,
    batch_size: int = 256,
    progress: Progress | None = None,
    device: str | None = None,
    backend: str = DEFAULT_BACKEND,
) -> np.ndarray:
    """L2-normalized float32 embeddings, one row per input text (``[len(texts), d]``).

    Each distinct string is embedded once (rows of repeated texts are copies).
    `store`: an `EmbeddingStore` to read hits from and write misses to; None
    (default) opens the store of `model_id` × `backend`'s variant in
    `kweval.embeddings.store.cache_dir()`; False disables caching.  Misses are encoded in
    batches of `batch_size` after sorting them by token count (similar lengths
    pad little) and each batch is written to the store in its own transaction, so
    an interrupted run keeps what it finished.  `progress(done, total)` is
    called with counts of distinct strings (cache hits count as done at once).
    When every string is cached, the model is not loaded and torch is not imported.
    """
    texts = list(texts)
    for t in texts:
        if not isinstance(t, str):
            raise TypeError(f"embed_texts takes strings; got {type(t).__name__}: {t!r}")
    if batch_size < 1:
        raise ValueError(f"batch_size must be positive, got {batch_size}")
    unique = list(dict.fromkeys(texts))
    total = len(unique)
    backend = resolve_backend(backend, device)
    kind = variant(backend, device)
    cache = _checked_store(store, model_id, kind)
    if cache is not None and unique:
        cached, found = cache.get_many(unique)
    else:
        cached, found = np.zeros((total, 0), np.float32), np.zeros(total, dtype=bool)
    done = int(found.sum())
    if progress is not None:
        progress(done, total)

    missing = [i for i in np.flatnonzero(~found)]
    dim = cached.shape[1]
    out = cached if dim else None
    if missing:
        encode = load_encoder(model_id, device, backend)
        used = getattr(encode, "variant", None)
        if used is not None and cache is not None and used != kind:  # the torch stand-in of a broken ONNX export
            cache = cache.sibling(*used)
        # sorted by token count, a batch pads little (sorting by characters pads more: docs/scaling.md)
        order = [missing[j] for j in np.argsort(_token_counts(encode, [unique[i] for i in missing]), kind="stable")]
        for start in range(0, len(order), batch_size):
            idx = order[start : start + batch_size]
            batch = [unique[i] for i in idx]
            vecs = unit_rows(np.asarray(encode(batch), dtype=np.float32))  # fp16 output: re-normalize in float32
            if out is None:
                dim = vecs.shape[1]
                out = np.zeros((total, dim), dtype=np.float32)
            elif vecs.shape[1] != dim:
                raise ValueError(
                    f"model {model_id!r} gives {vecs.shape[1]}-d vectors but the cache holds {dim}-d ones; "
                    "clear it with `kweval cache clear --embedding-model ...`"
                )
            out[idx] = vecs
            if cache is not None:
                cache.put_many(batch, vecs)
            done += len(idx)
            if progress is not None:
                progress(done, total)
    if out is None:  # no text at all, or nothing known about the dimension
        out = np.zeros((total, 0), dtype=np.float32)
    if len(unique) == len(texts):
        return out
    position = {t: i for i, t in enumerate(unique)}
    return out[[position[t] for t in texts]]


def _checked_store(store: EmbeddingStore | None | bool, model_id: str, kind: tuple[str, str]) -> EmbeddingStore | None:
    """The store `embed_texts` reads and fills (None: no cache): the default one of `model_id` × `kind` for None,
    none for False; a store of another model or variant is a ValueError (its vectors would be wrong ones)."""
    if store is None:
        from kweval.embeddings.store import EmbeddingStore

        return EmbeddingStore(model_id, backend=kind[0], precision=kind[1])
    if store is False:
        return None
    if store is True:
        raise TypeError("store must be an EmbeddingStore, None (default store) or False (no cache)")
    if getattr(store, "model_id", None) != canonical_model_id(model_id):
        raise ValueError(f"the store holds vectors of {store.model_id!r}, not {model_id!r}")
    if (store.backend, store.precision) != kind:
        raise ValueError(f"the store holds {store.backend}/{store.precision} vectors, not {'/'.join(kind)} ones")
    return store


def progress_with_estimate(
    report: Callable[[str, float], None], unit: str, start: float = 0.1, end: float = 0.95
) -> Progress:
    """A ``(done, total)`` callback for `embed_texts` that reports ``(stage line, fraction)`` to `report`.

    The line names counts and an estimate ("embedding 12,000 / 36,684 keywords · ~2 min left"), the
    estimate from the rate measured so far; the fraction runs from `start` to `end` in proportion to
    the strings actually embedded (cache hits cost nothing, so they do not move the bar).
    """
    state: dict[str, float] = {}

    def update(done: int, total: int) -> None:
        now = time.perf_counter()
        if not state:
            state.update(t0=now, done0=done)
        todo = total - state["done0"]
        work = (done - state["done0"]) / todo if todo > 0 else 1.0
        line = f"embedding {done:,} / {total:,} {unit}"
        elapsed = now - state["t0"]
        if 0 < work < 1 and elapsed > 0:
            line += f" · ~{_duration(elapsed * (1 - work) / work)} left"
        report(line, start + (end - start) * work)

    return update


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    if seconds < 90 * 60:
        return f"{round(seconds / 60)} min"
    return f"{seconds / 3600:.1f} h"
