"""Sentence embeddings of keywords and the semantic metrics (docs/metrics.md §4).

- `embed_texts` embeds each *unique* string once, L2-normalized float32, with
  the model's own pooling (sentence-transformers ``encode``: mean pooling over
  real tokens, attention mask applied), in length-sorted batches, reading and
  filling the persistent `kweval.embeddings.store.EmbeddingStore`.  When every string is
  cached the model is not loaded and torch is not even imported.
- `semantic_metrics` computes, per review × model, ``sem_precision =
  #{i : max_j S_ij > τ} / |P|`` and ``sem_recall = #{j : max_i S_ij > τ} / |G|``
  (strict ``>``) with one matrix product per movie.

torch and sentence-transformers are imported only inside `load_model` /
`pick_device`; onnxruntime only in `kweval.embeddings.onnx`.

Why one module (~580 lines): the embedder and the metrics share one
numeric contract (unit float32 rows, τ compared in float32 with strict
``>``: `_unit_rows`, `_threshold_like`), and the CLI, the dashboard and the
tests reach the loader through this one namespace (`load_encoder` is what
they patch to count or refuse model loads).  The stages inside are separate
functions: backend choice (`resolve_backend`, `variant`), loading
(`load_model`, `load_encoder`), embedding through the store (`embed_texts`),
similarities once per embedding set (`similarities`) and thresholds
(`Similarities.at_threshold`).
"""

from __future__ import annotations

import importlib.util
import os
import re
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from kweval.data.dataset import KEY
from kweval.embeddings.models import DEFAULT_MODEL, canonical_model_id, resolve_model_path
from kweval.extras import require
from kweval.metrics.per_review import harmonic_mean, safe_ratio

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
    "BACKENDS",
    "DEFAULT_BACKEND",
    "resolve_backend",
    "embed_texts",
    "progress_with_estimate",
    "semantic_counts",
    "semantic_metrics",
    "similarities",
    "Similarities",
    "nearest_gt",
    "nearest_gt_table",
]

SEMANTIC_COLUMNS = [
    "sem_n_pred",
    "sem_pred_matched",
    "sem_n_gt",
    "sem_gt_matched",
    "sem_precision",
    "sem_recall",
    "sem_f1",
]
# Dense boolean block (keyword rows × GT) handled at once by the recall reduction.
_BLOCK_CELLS = 1 << 24

Vectors = Mapping[str, np.ndarray] | Callable[[list[str]], np.ndarray]
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
    return _onnx_encoder(model_id, backend == "onnx-int8")


class _TorchEncoder:
    """sentence-transformers' ``encode`` on one batch, and the token counts `embed_texts` sorts by."""

    def __init__(self, model):
        self.model = model

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
    from kweval.embeddings.onnx import OnnxEncoder, onnx_file
    from kweval.embeddings.store import cache_dir

    path = resolve_model_path(model_id)
    try:
        return OnnxEncoder(path, onnx_file(path, cache_dir(), quantized=quantized))
    except OSError:  # the cache folder is unusable (the store says so and runs uncached): export for this run only
        with tempfile.TemporaryDirectory(prefix="kweval-onnx-") as folder:
            return OnnxEncoder(path, onnx_file(path, Path(folder), quantized=quantized))  # the session holds the model


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
    if store is None:
        from kweval.embeddings.store import EmbeddingStore

        store = EmbeddingStore(model_id, backend=kind[0], precision=kind[1])
    elif store is True:
        raise TypeError("store must be an EmbeddingStore, None (default store) or False (no cache)")
    elif store is not False and getattr(store, "model_id", None) != canonical_model_id(model_id):
        raise ValueError(f"the store holds vectors of {store.model_id!r}, not {model_id!r}")
    elif store is not False and (store.backend, store.precision) != kind:
        raise ValueError(f"the store holds {store.backend}/{store.precision} vectors, not {'/'.join(kind)} ones")

    if store is not False and unique:
        cached, found = store.get_many(unique)
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
        # sorted by token count, a batch pads little (by characters: 1.69× the real tokens at 256 on DNLP; by tokens
        # 1.02×)
        order = [missing[j] for j in np.argsort(_token_counts(encode, [unique[i] for i in missing]), kind="stable")]
        for start in range(0, len(order), batch_size):
            idx = order[start : start + batch_size]
            batch = [unique[i] for i in idx]
            vecs = _unit_rows(np.asarray(encode(batch), dtype=np.float32))  # fp16 output: re-normalize in float32
            if out is None:
                dim = vecs.shape[1]
                out = np.zeros((total, dim), dtype=np.float32)
            elif vecs.shape[1] != dim:
                raise ValueError(
                    f"model {model_id!r} gives {vecs.shape[1]}-d vectors but the cache holds {dim}-d ones; "
                    "clear it with `kweval cache clear --embedding-model ...`"
                )
            out[idx] = vecs
            if store is not False:
                store.put_many(batch, vecs)
            done += len(idx)
            if progress is not None:
                progress(done, total)
    if out is None:  # no text at all, or nothing known about the dimension
        out = np.zeros((total, 0), dtype=np.float32)
    if len(unique) == len(texts):
        return out
    position = {t: i for i, t in enumerate(unique)}
    return out[[position[t] for t in texts]]


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


def _unit_rows(mat: np.ndarray) -> np.ndarray:
    mat = np.asarray(mat, dtype=np.float32)
    norms = np.linalg.norm(mat, axis=1, keepdims=True)
    return np.divide(mat, norms, out=np.zeros_like(mat), where=norms > 0)


def _matrix(texts: list[str], vectors: Vectors) -> np.ndarray:
    """Unit-row float32 matrix for `texts` from a mapping or an embedder function."""
    if not texts:
        return np.zeros((0, 0), dtype=np.float32)
    if callable(vectors) and not isinstance(vectors, Mapping):
        mat = np.asarray(vectors(list(texts)), dtype=np.float32)
        if mat.ndim != 2 or mat.shape[0] != len(texts):
            raise ValueError(f"the embedder returned shape {mat.shape} for {len(texts)} text(s)")
    else:
        rows = []
        for t in texts:
            try:
                rows.append(np.asarray(vectors[t], dtype=np.float32))
            except KeyError:
                raise KeyError(f"no vector for keyword {t!r}") from None
        mat = np.stack(rows)
    return _unit_rows(mat)


# --------------------------------------------------------------------------- metrics


def semantic_counts(sim: np.ndarray, threshold: float) -> tuple[int, int]:
    """For one review's |P|×|G| cosine matrix: (#predictions with max_j S_ij > τ, #GT with max_i S_ij > τ).

    Strict ``>``; τ is compared in the matrix's own precision.
    """
    sim = np.asarray(sim)
    if sim.ndim != 2:
        raise ValueError(f"sim must be a 2-d matrix, got shape {sim.shape}")
    if sim.size == 0:
        return 0, 0
    above = sim > _threshold_like(threshold, sim.dtype)
    return int(above.any(axis=1).sum()), int(above.any(axis=0).sum())


def _threshold_like(threshold: float, dtype) -> np.floating:
    # Compare in the similarities' precision: a float32 cosine of exactly 0.75
    # is not "> 0.75", whatever float64 rounding of the threshold says.
    dtype = np.dtype(dtype) if np.issubdtype(np.dtype(dtype), np.floating) else np.dtype(np.float64)
    return dtype.type(threshold)


@dataclass(frozen=True)
class Similarities:
    """What every threshold needs, computed once per embedding set (docs/metrics.md §4).

    Per review × model group (``keys``, first-appearance order): ``n_pred`` |P|
    and ``n_gt`` |G|; per distinct predicted keyword of a group, its best
    cosine to the movie's GT (``pred_best``, grouped by ``pred_group``); per
    GT keyword of a group, its best cosine to the group's keywords
    (``gt_best``, grouped by ``gt_group``).  ``max_j S_ij > τ`` is the same test
    as ``∃j S_ij > τ``, so any τ is then a comparison and a count (`at_threshold`).
    """

    keys: pd.DataFrame
    n_pred: np.ndarray
    n_gt: np.ndarray
    pred_group: np.ndarray
    pred_best: np.ndarray
    gt_group: np.ndarray
    gt_best: np.ndarray

    def at_threshold(self, threshold: float) -> pd.DataFrame:
        """The semantic counts and metrics at `threshold` (strict ``>``, in float32 as the cosines)."""
        thr = _threshold_like(float(threshold), np.float32)
        n = len(self.keys)
        pred_matched = np.bincount(self.pred_group[self.pred_best > thr], minlength=n).astype(np.int64)
        gt_matched = np.bincount(self.gt_group[self.gt_best > thr], minlength=n).astype(np.int64)
        precision = safe_ratio(pred_matched, self.n_pred)
        recall = safe_ratio(gt_matched, self.n_gt)
        out = self.keys.copy()
        out["sem_n_pred"] = self.n_pred
        out["sem_pred_matched"] = pred_matched
        out["sem_n_gt"] = self.n_gt
        out["sem_gt_matched"] = gt_matched
        out["sem_precision"] = precision
        out["sem_recall"] = recall
        out["sem_f1"] = harmonic_mean(precision, recall)
        return out


def similarities(pred: pd.DataFrame, gt: pd.DataFrame, vectors: Vectors) -> Similarities:
    """The best cosines of `semantic_metrics`, for every threshold at once.

    `pred`: movie, review_id, model, norm (rows without a usable norm are
    ignored; a norm repeated within a review counts once).  `gt`: movie,
    rank, norm (repeated norms count once).  `vectors`: a mapping text → vector
    or a function list[str] → [n, d] (called once with every distinct text).
    One matrix product per movie (its distinct keywords × its GT), reduced per
    review with `np.maximum.reduceat` in slices of at most `_BLOCK_CELLS` cells.
    """
    p = pred[KEY + ["norm"]]
    p = p[p["norm"].map(lambda t: isinstance(t, str) and t != "").to_numpy(dtype=bool)].drop_duplicates(KEY + ["norm"])
    g = gt[["movie", "rank", "norm"]]
    g = g[g["norm"].map(lambda t: isinstance(t, str) and t != "").to_numpy(dtype=bool)]
    g = g.sort_values(["movie", "rank"], kind="stable").drop_duplicates(["movie", "norm"])
    keys = p[KEY].drop_duplicates().reset_index(drop=True)
    empty = np.zeros(0, dtype=np.int64)
    if p.empty:
        return Similarities(keys, empty, empty, empty, np.zeros(0, np.float32), empty, np.zeros(0, np.float32))

    text_codes, texts = pd.factorize(pd.concat([p["norm"], g["norm"]], ignore_index=True), sort=False)
    emb = _matrix(list(texts), vectors)
    p_text, g_text = text_codes[: len(p)], text_codes[len(p) :]
    group = p.groupby(KEY, sort=False, dropna=False).ngroup().to_numpy()
    n_groups = len(keys)
    movie_codes, movies = pd.factorize(p["movie"], sort=False)
    gt_by_movie = dict(g.groupby("movie", sort=False).indices.items())
    n_pred = np.bincount(group, minlength=n_groups).astype(np.int64)
    first_row = np.unique(group, return_index=True)[1]
    n_gt = np.array([len(gt_by_movie.get(m, ())) for m in movies], dtype=np.int64)[movie_codes[first_row]]

    pred_best = np.full(len(p), -np.inf, dtype=np.float32)
    gt_parts: list[np.ndarray] = []
    gt_groups: list[np.ndarray] = []
    order = np.lexsort((group, movie_codes))  # each movie a block, each review a sub-block
    for block in np.split(order, np.flatnonzero(np.diff(movie_codes[order])) + 1):
        gt_rows = gt_by_movie.get(movies[movie_codes[block[0]]])
        if gt_rows is None or len(gt_rows) == 0:
            continue
        uniq, local = np.unique(p_text[block], return_inverse=True)
        sim = emb[uniq] @ emb[g_text[gt_rows]].T
        pred_best[block] = sim.max(axis=1)[local]
        rows_group = group[block]
        starts = np.concatenate(([0], np.flatnonzero(np.diff(rows_group)) + 1))
        step = max(1, _BLOCK_CELLS // sim.shape[1])
        s = 0
        while s < len(starts):
            lo = starts[s]
            e = max(s + 1, int(np.searchsorted(starts, lo + step, side="left")))
            hi = starts[e] if e < len(starts) else len(block)
            best = np.maximum.reduceat(sim[local[lo:hi]], starts[s:e] - lo, axis=0)
            gt_parts.append(best.ravel())
            gt_groups.append(np.repeat(rows_group[starts[s:e]], sim.shape[1]))
            s = e
    gt_best = np.concatenate(gt_parts) if gt_parts else np.zeros(0, np.float32)
    gt_group = np.concatenate(gt_groups) if gt_groups else empty
    return Similarities(keys, n_pred, n_gt, group, pred_best, gt_group, gt_best.astype(np.float32))


def semantic_metrics(
    pred: pd.DataFrame,
    gt: pd.DataFrame,
    vectors: Vectors,
    threshold: float = 0.75,
) -> pd.DataFrame:
    """Per review × model semantic counts and metrics (docs/metrics.md §4): ``similarities(...).at_threshold(τ)``.

    Returns one row per (movie, review_id, model) of `pred` with a usable
    keyword, in order of first appearance: ``sem_n_pred`` |P|,
    ``sem_pred_matched``, ``sem_n_gt`` |G|, ``sem_gt_matched``,
    ``sem_precision``, ``sem_recall``, ``sem_f1`` (0 where a denominator is 0;
    a movie without GT scores 0 everywhere).
    """
    if not 0.0 <= float(threshold) <= 1.0:
        raise ValueError(f"threshold must be within [0, 1], got {threshold!r}")
    return similarities(pred, gt, vectors).at_threshold(threshold)


def nearest_gt(pred_norms: Sequence[str], gt_norms: Sequence[str], vectors: Vectors) -> tuple[np.ndarray, np.ndarray]:
    """For each predicted keyword: the index of its most similar GT keyword (first on ties) and that cosine.

    With no GT keyword: index -1 and cosine NaN.  For the dashboard's
    "closest GT keyword" column.
    """
    pred_norms = list(pred_norms)
    gt_norms = list(gt_norms)
    if not pred_norms:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
    if not gt_norms:
        return np.full(len(pred_norms), -1, dtype=np.int64), np.full(len(pred_norms), np.nan)
    texts = list(dict.fromkeys(pred_norms + gt_norms))
    pos = {t: i for i, t in enumerate(texts)}
    emb = _matrix(texts, vectors)
    sim = emb[[pos[t] for t in pred_norms]] @ emb[[pos[t] for t in gt_norms]].T
    idx = sim.argmax(axis=1)
    return idx.astype(np.int64), sim[np.arange(len(pred_norms)), idx].astype(np.float64)


def nearest_gt_table(pred: pd.DataFrame, gt: pd.DataFrame, vectors: Vectors, threshold: float = 0.75) -> pd.DataFrame:
    """One review's predicted keywords, each with its most similar GT keyword of the movie (the explorer's view).

    `pred`: one model's cleaned keywords of one review (``norm`` and any other
    columns, e.g. position and keyword, which are kept).  `gt`: the movie's
    cleaned GT (``rank``, ``keyword``, ``norm``); as in `semantic_metrics` it is
    taken in rank order and a repeated norm counts once.  Adds
    ``nearest_gt`` (the raw GT keyword), ``nearest_rank`` (its 0-based GT
    rank), ``cosine`` and ``above`` (``cosine > threshold``, strict and in the
    vectors' float32 precision, as `semantic_metrics` counts it).  A keyword
    without a usable norm, or a movie without GT, gets None / -1 / NaN / False.
    """
    out = pred.reset_index(drop=True).copy()
    usable = out["norm"].map(lambda s: isinstance(s, str) and s != "").to_numpy(dtype=bool)
    g = gt[gt["norm"].map(lambda s: isinstance(s, str) and s != "").to_numpy(dtype=bool)]
    g = g.sort_values("rank", kind="stable").drop_duplicates("norm")
    nearest = np.full(len(out), None, dtype=object)
    rank = np.full(len(out), -1, dtype=np.int64)
    cosine = np.full(len(out), np.nan, dtype=np.float64)
    above = np.zeros(len(out), dtype=bool)
    rows = np.flatnonzero(usable)
    if len(rows) and len(g):
        idx, cos = nearest_gt(out["norm"].to_numpy()[rows].tolist(), g["norm"].tolist(), vectors)
        gt_kw = g["keyword"].to_numpy(dtype=object) if "keyword" in g.columns else g["norm"].to_numpy(dtype=object)
        nearest[rows] = gt_kw[idx]
        rank[rows] = g["rank"].to_numpy(dtype=np.int64)[idx]
        cosine[rows] = cos
        # nearest_gt's cosines are float32 products widened to float64: compare as semantic_metrics does
        above[rows] = cos.astype(np.float32) > _threshold_like(threshold, np.float32)
    out["nearest_gt"] = nearest
    out["nearest_rank"] = rank
    out["cosine"] = cosine
    out["above"] = above
    return out
