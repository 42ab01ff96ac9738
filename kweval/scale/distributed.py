"""Evaluation on a dask.distributed cluster: ``kweval evaluate --scheduler ADDRESS|local[:N]``.

Two ways to share the work out, both combined with `combine_evaluations` in
movie order, so the result is the one a single process computes (movies
share nothing in evaluate; tests/test_distributed.py checks the outputs are
byte-identical):

- a dataset with a file per movie (DNLP layout): `evaluate_files_on_cluster`
  sends each worker the folder's path and a run of movie names; the worker
  reads those files itself (kweval.scale.file_groups, as `--jobs` does).  Only
  paths and options go out; per-review tables (and per-keyword tables when
  asked for) come back.  The folder must be at the same path on every
  worker (a shared filesystem); each worker's view is checked first
  (same movie files, same sizes) and otherwise the other way is taken.
- any other dataset: `evaluate_on_cluster` cuts the dataset read here into
  partitions of consecutive movies with similar numbers of prediction
  rows and scatters each partition's rows (a pickled `Dataset`) to a worker.

With --semantic the lexical parts come back with their per-keyword tables;
the distinct keywords this machine's embedding store lacks are dealt out to
the workers (`embed_on_cluster`: strings out, float32 vectors back, into the
store here), then the similarities are computed here from the store, as one
process computes them.  dask is an optional extra (``pip install kweval[dask]``):
this module imports it only when called.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from kweval.data import Dataset
from kweval.evaluation.pipeline import EvalOptions, Evaluation, combine_evaluations, evaluate
from kweval.extras import require
from kweval.messages import shown
from kweval.scale import address, file_groups
from kweval.scale.parallel import can_fork, contiguous_groups, usable_cores

if TYPE_CHECKING:
    import numpy as np
    from distributed import Client

    from kweval.embeddings.store import EmbeddingStore

LOCAL = "local"


class EmbeddingError(Exception):
    """A worker could not embed (the model or its backend cannot be loaded there)."""


def parse_scheduler(spec: str) -> tuple[str, int | None]:
    """("local", N or None) for ``local`` / ``local:N``, else (address, None); ValueError on a bad spec."""
    spec = spec.strip()
    if not spec:
        raise ValueError("--scheduler: give a scheduler address (tcp://host:8786) or local[:N]")
    name, _, count = spec.partition(":")
    if name != LOCAL:
        try:
            address.check_address(spec)
        except address.SchedulerAddressError as exc:
            raise ValueError(f"--scheduler {shown(spec)}: {exc}") from None
        return spec, None
    if not count:
        return LOCAL, None
    if not count.isdigit() or int(count) < 1:
        raise ValueError(f"--scheduler {shown(spec)}: N in local:N must be a positive whole number")
    return LOCAL, int(count)


def local_start_method() -> str:
    """How a local cluster starts its workers: ``fork`` where forking is safe and no threaded numeric runtime
    (torch, onnxruntime: OpenMP pools do not survive a fork) is loaded here, else dask's default ``spawn``."""
    heavy = {"torch", "onnxruntime"} & sys.modules.keys()
    return "fork" if can_fork() and not heavy else "spawn"


@contextlib.contextmanager
def connect(spec: str, timeout: float = address.DEFAULT_TIMEOUT_S) -> Iterator[Client]:
    """A dask Client for `spec` (see parse_scheduler); a local cluster is started and stopped with it.

    A remote address is probed first (`address.probe`: a dask handshake within `timeout` seconds, else
    SchedulerAddressError), and the Client's own connection has the same limit.
    """
    distributed = require("distributed", "dask", "--scheduler")
    Client, LocalCluster = distributed.Client, distributed.LocalCluster
    where, n_workers = parse_scheduler(spec)
    if where != LOCAL:
        scheme, host, port = address.check_address(where)
        if scheme == "tcp":
            address.probe(host, port, timeout)
        with Client(where, timeout=f"{timeout}s") as client:
            yield client
        return
    import dask

    # Workers of a local cluster share this machine's cores with each other: no sampling profiler thread taking
    # the GIL from the one thread that evaluates (the nanny hands this config to the workers it starts).
    # They are forked where that is safe (`local_start_method`): a spawned worker starts a fresh interpreter
    # and imports kweval and pandas again, a large share of a short evaluation (measured: docs/scaling.md).
    config = {
        "distributed.worker.profile.enabled": False,
        "distributed.worker.multiprocessing-method": local_start_method(),
    }
    with (
        dask.config.set(config),
        LocalCluster(
            # a free port for its status page, and no logs: a failure reaches kweval as an exception from gather
            n_workers=n_workers or usable_cores(),
            threads_per_worker=1,
            processes=True,
            dashboard_address=":0",
            silence_logs=logging.CRITICAL,
        ) as cluster,
        Client(cluster) as client,
    ):
        yield client


def movie_partitions(dataset: Dataset, n: int) -> list[list[str]]:
    """The dataset's movies, in order, cut into at most `n` runs with similar numbers of prediction rows."""
    movies = dataset.movie_ids
    rows = dataset.predictions["movie"].value_counts()
    weights = [int(rows.get(m, 0)) + 1 for m in movies]
    return [[movies[i] for i in run] for run in contiguous_groups(weights, max(1, n))] if movies else [[]]


def evaluate_on_cluster(
    client: Client, dataset: Dataset, options: EvalOptions, partitions: int | None = None
) -> Evaluation:
    """`evaluate(dataset, options)` computed partition by partition on the cluster's workers (`partitions` defaults
    to the cluster's worker threads); with semantic options, see `with_semantic`.  A match "auto" is resolved on
    the whole dataset first: every partition is matched alike."""
    options = options.for_data(dataset.per_document)
    n = partitions or _threads(client)
    parts = [dataset.subset(movies=group) for group in movie_partitions(dataset, n)]
    lexical = replace(options, semantic=False)
    futures = client.map(
        evaluate, client.scatter(parts), options=lexical, pure=False
    )  # scattered: data, not task graph
    return with_semantic(client, combine_evaluations(client.gather(futures)), options)


def evaluate_files_on_cluster(
    client: Client,
    path: str | Path,
    options: EvalOptions,
    movies: Sequence[str] | None = None,
    models: Sequence[str] | None = None,
    keywords: bool = True,
    partitions: int | None = None,
) -> tuple[str, Evaluation] | None:
    """(dataset source, evaluation) of the dataset folder `path` with a file per movie, each worker reading its own
    files.

    `partitions` defaults to the cluster's worker threads.  None when the
    layout has no file per movie, when a worker does not see the same movie
    files (then send the rows: `evaluate_on_cluster`), or when a movie or
    model asked for is missing (kweval.scale.file_groups.combine_groups).
    """
    folder = os.path.abspath(path)  # a worker's working folder is its own
    sizes = file_groups.movie_file_sizes(folder, movies)
    if not sizes or not workers_see_files(client, folder, movies, sizes):
        return None
    futures = client.map(
        file_groups.evaluate_movie_files,
        file_groups.movie_groups(sizes, partitions or _threads(client)),
        path=folder,
        options=replace(options, semantic=False),
        models=models,
        keywords=keywords or options.semantic,
        pure=False,
    )
    combined = file_groups.combine_groups(client.gather(futures), movies, models)
    if combined is None:
        return None
    from kweval.data import dnlp

    _, evaluation = combined
    source = str(
        dnlp.find_root(Path(path)) or path
    )  # named as given here, as one process names it, not as the workers read it
    evaluation = with_semantic(client, evaluation, options)
    if not keywords:
        evaluation.keywords = evaluation.keywords.iloc[:0]
    return source, evaluation


def workers_see_files(client: Client, folder: str, movies: Sequence[str] | None, sizes: dict[str, int]) -> bool:
    """Whether every worker finds the same movie files (names and sizes) at `folder` as this machine does."""
    seen = client.run(file_groups.movie_file_sizes, folder, movies, on_error="return")
    return bool(seen) and all(view == sizes for view in seen.values())


def with_semantic(client: Client, evaluation: Evaluation, options: EvalOptions) -> Evaluation:
    """The lexical `evaluation` with the semantic columns when `options` asks for them: the distinct keywords
    missing from this machine's embedding store are embedded on the workers (`embed_on_cluster`), then the
    similarities are computed here from the store, as one process computes them."""
    if not options.semantic:
        return evaluation
    from kweval.embeddings import semantic
    from kweval.embeddings.store import EmbeddingStore
    from kweval.evaluation.pipeline import add_semantic, semantic_texts

    backend, precision = semantic.variant(options.embedding_backend)
    store = EmbeddingStore(options.embedding_model, backend=backend, precision=precision)
    embed_on_cluster(client, semantic_texts(evaluation), options.embedding_model, options.embedding_backend, store)
    return add_semantic(evaluation)


def embed_on_cluster(
    client: Client,
    texts: Sequence[str],
    model_id: str,
    backend: str,
    store: EmbeddingStore,
    partitions: int | None = None,
) -> int:
    """Embed the distinct `texts` that `store` lacks on the cluster's workers and put their vectors in `store`.

    Only strings go out and float32 rows come back.  The texts, sorted by
    length, are dealt out like cards (each worker's share has similar lengths,
    so batches pad little, and the shares similar costs).  Every worker
    computes the store's own variant (backend/precision: a GPU worker computes
    torch fp32 on its CPU for an fp32 store), so no vector of another variant
    enters it.  Returns how many texts were embedded.
    """
    unique = list(dict.fromkeys(texts))
    found = store.get_many(unique)[1] if unique else np.zeros(0, dtype=bool)
    missing = sorted((t for t, hit in zip(unique, found) if not hit), key=len)
    if not missing:
        return 0
    n = min(len(missing), partitions or _threads(client))
    shares = [missing[i::n] for i in range(n)]
    wanted = (store.backend, store.precision)
    futures = client.map(embed_share, shares, model_id=model_id, backend=backend, wanted=wanted, pure=False)
    for share, vectors in zip(shares, client.gather(futures)):
        store.put_many(share, vectors)
    return len(missing)


def embed_share(texts: list[str], model_id: str, backend: str, wanted: tuple[str, str]) -> np.ndarray:
    """On a worker: unit float32 rows of `texts` in the `wanted` (backend, precision) variant; ValueError if it
    cannot."""
    from kweval.embeddings import semantic

    device = None if semantic.variant(backend) == wanted else "cpu"  # torch fp32 wanted on a GPU worker: its CPU
    if semantic.variant(backend, device) != wanted:
        raise EmbeddingError(f"a worker cannot compute {'/'.join(wanted)} vectors with the {backend} backend")
    try:
        vectors = semantic.embed_texts(texts, model_id=model_id, store=False, device=device, backend=backend)
    except (OSError, ImportError) as exc:  # not "cannot reach the scheduler": say what failed where
        raise EmbeddingError(f"a worker cannot load the embedding model {model_id!r}: {exc}") from None
    if device is None and semantic.used_variant(backend, model_id) != wanted:  # its ONNX export broke: torch ran
        raise EmbeddingError(f"a worker's ONNX export of {model_id!r} cannot be used; its vectors would be torch's")
    return vectors


def _threads(client: Client) -> int:
    """The cluster's worker threads (at least 1)."""
    return max(1, sum(client.nthreads().values()))
