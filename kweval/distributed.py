"""Evaluation on a dask.distributed cluster: ``kweval evaluate --scheduler ADDRESS|local[:N]``.

The dataset is read here (the client), cut into partitions of consecutive
movies with similar numbers of prediction rows, and each partition's tables
are sent to a worker, which runs `kweval.evaluate.evaluate` on it and sends
its `Evaluation` back.  `combine_evaluations` joins them in movie order, so
the result is the one a single process computes (movies share nothing in
evaluate; tests/test_distributed.py checks the outputs are byte-identical).

What crosses the network: each partition's rows of the dataset tables (a
pickled `Dataset`) out, its per-review and per-keyword tables back.  Workers
need kweval (and its dependencies) installed, not the data files.

The semantic metrics are not shared out yet: they embed the keywords through
this machine's embedding store, which workers cannot write to (see
`SCHEDULER_METRICS`).  dask is an optional extra (``pip install kweval[dask]``):
this module imports it only when called.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from typing import TYPE_CHECKING

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
