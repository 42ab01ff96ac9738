"""Evaluation on a dask.distributed cluster: ``kweval evaluate --scheduler ADDRESS|local[:N]``.

Two ways to share the work out, both combined with `combine_evaluations` in
movie order, so the result is the one a single process computes (movies
share nothing in evaluate; tests/test_distributed.py checks the outputs are
byte-identical):

- a dataset with a file per movie (DNLP layout): `evaluate_files_on_cluster`
  sends each worker the folder's path and a run of movie names; the worker
  reads those files itself (kweval.file_groups, as `--jobs` does).  Only
  paths and options go out; per-review tables (and per-keyword tables when
  asked for) come back.  The folder must be at the same path on every
  worker (a shared filesystem); each worker's view is checked first
  (same movie files, same sizes) and otherwise the other way is taken.
- any other dataset: `evaluate_on_cluster` cuts the dataset read here into
  partitions of consecutive movies with similar numbers of prediction
  rows and scatters each partition's rows (a pickled `Dataset`) to a worker.

The semantic metrics are not shared out yet: they embed the keywords through
this machine's embedding store, which workers cannot write to (see
`SCHEDULER_METRICS`).  dask is an optional extra (``pip install kweval[dask]``):
this module imports it only when called.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from kweval import file_groups
from kweval.data import Dataset
from kweval.evaluate import EvalOptions, Evaluation, combine_evaluations, evaluate
from kweval.extras import require
from kweval.parallel import contiguous_groups, usable_cores

if TYPE_CHECKING:
    from distributed import Client

LOCAL = "local"
SCHEDULER_METRICS = "lexical and sentiment"


def parse_scheduler(spec: str) -> tuple[str, int | None]:
    """("local", N or None) for ``local`` / ``local:N``, else (address, None); ValueError on a bad spec."""
    spec = spec.strip()
    if not spec:
        raise ValueError("--scheduler: give a scheduler address (tcp://host:8786) or local[:N]")
    name, _, count = spec.partition(":")
    if name != LOCAL:
        return spec, None
    if not count:
        return LOCAL, None
    if not count.isdigit() or int(count) < 1:
        raise ValueError(f"--scheduler {spec}: N in local:N must be a positive whole number")
    return LOCAL, int(count)


@contextlib.contextmanager
def connect(spec: str) -> Iterator["Client"]:
    """A dask Client for `spec` (see parse_scheduler); a local cluster is started and stopped with it."""
    distributed = require("distributed", "dask", "--scheduler")
    Client, LocalCluster = distributed.Client, distributed.LocalCluster
    address, n_workers = parse_scheduler(spec)
    if address != LOCAL:
        with Client(address) as client:
            yield client
        return
    with LocalCluster(  # a free port for its status page, and no logs: a failure reaches kweval as an exception from gather
        n_workers=n_workers or usable_cores(), threads_per_worker=1, processes=True, dashboard_address=":0",
        silence_logs=logging.CRITICAL,
    ) as cluster, Client(cluster) as client:
        yield client


def movie_partitions(dataset: Dataset, n: int) -> list[list[str]]:
    """The dataset's movies, in order, cut into at most `n` runs with similar numbers of prediction rows."""
    movies = dataset.movie_ids
    rows = dataset.predictions["movie"].value_counts()
    weights = [int(rows.get(m, 0)) + 1 for m in movies]
    return [[movies[i] for i in run] for run in contiguous_groups(weights, max(1, n))] if movies else [[]]


def evaluate_on_cluster(client: "Client", dataset: Dataset, options: EvalOptions, partitions: int | None = None) -> Evaluation:
    """`evaluate(dataset, options)` computed partition by partition on the cluster's workers.

    `partitions` defaults to the cluster's worker threads.  Options that need
    this machine's embedding store (semantic) raise ValueError.
    """
    if options.semantic:
        raise ValueError(f"--scheduler evaluates the {SCHEDULER_METRICS} metrics; run --semantic without --scheduler")
    n = partitions or max(1, sum(client.nthreads().values()))
    parts = [dataset.subset(movies=group) for group in movie_partitions(dataset, n)]
    futures = client.map(evaluate, client.scatter(parts), options=options, pure=False)  # scattered: data, not task graph
    return combine_evaluations(client.gather(futures))


def evaluate_files_on_cluster(
    client: "Client",
    path: str | Path,
    options: EvalOptions,
    movies: Sequence[str] | None = None,
    models: Sequence[str] | None = None,
    keywords: bool = True,
    partitions: int | None = None,
) -> tuple[str, Evaluation] | None:
    """(dataset source, evaluation) of the dataset folder `path` with a file per movie, each worker reading its own files.

    `partitions` defaults to the cluster's worker threads.  None when the
    layout has no file per movie, when a worker does not see the same movie
    files (then send the rows: `evaluate_on_cluster`), or when a movie or
    model asked for is missing (kweval.file_groups.combine_groups).
    """
    if options.semantic:
        raise ValueError(f"--scheduler evaluates the {SCHEDULER_METRICS} metrics; run --semantic without --scheduler")
    folder = os.path.abspath(path)  # a worker's working folder is its own
    sizes = file_groups.movie_file_sizes(folder, movies)
    if not sizes or not workers_see_files(client, folder, movies, sizes):
        return None
    n = partitions or max(1, sum(client.nthreads().values()))
    futures = client.map(
        file_groups.evaluate_movie_files, file_groups.movie_groups(sizes, n),
        path=folder, options=options, models=models, keywords=keywords, pure=False,
    )
    return file_groups.combine_groups(client.gather(futures), movies, models)


def workers_see_files(client: "Client", folder: str, movies: Sequence[str] | None, sizes: dict[str, int]) -> bool:
    """Whether every worker finds the same movie files (names and sizes) at `folder` as this machine does."""
    seen = client.run(file_groups.movie_file_sizes, folder, movies, on_error="return")
    return bool(seen) and all(view == sizes for view in seen.values())
