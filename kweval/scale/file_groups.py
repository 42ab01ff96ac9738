"""A dataset with a file per movie (DNLP), evaluated by groups of movie files, each read where it is evaluated.

`--jobs` (forked processes, kweval.scale.parallel) and `--scheduler` (dask
workers, kweval.scale.distributed) share this: the movie files are cut into runs
of consecutive movies with similar sizes, a worker gets only the folder's
path, its movie names and the options, reads those files itself and sends
back its evaluation; `combine_evaluations` joins the parts in movie order,
so the result is the one a single process computes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from kweval.evaluation.pipeline import EvalOptions, Evaluation, combine_evaluations, evaluate
from kweval.scale.parallel import contiguous_groups


@dataclass
class GroupResult:
    """One group's evaluation and what its files held (to check that every movie and model asked for was there)."""

    movies: list[str]
    models: list[str]
    source: str
    evaluation: Evaluation


def movie_file_sizes(path: str | Path | None, movies: Sequence[str] | None = None) -> dict[str, int] | None:
    """Movie -> bytes of its file, in the dataset's order, for the `movies` asked for (all when None);
    None for a layout without a file per movie."""
    from kweval.data import movie_file_sizes as all_sizes

    sizes = all_sizes(path)
    if sizes is None or movies is None:
        return sizes
    return {movie: size for movie, size in sizes.items() if movie in set(movies)}


def movie_groups(sizes: dict[str, int], n: int) -> list[list[str]]:
    """The movies of `sizes`, in order, cut into at most `n` runs of consecutive movies with similar total bytes."""
    names = list(sizes)
    return [[names[i] for i in run] for run in contiguous_groups(list(sizes.values()), max(1, n))]


def evaluate_movie_files(
    movies: list[str],
    path: str | Path,
    options: EvalOptions,
    models: Sequence[str] | None = None,
    keywords: bool = True,
) -> GroupResult:
    """Read the files of `movies` from the dataset folder `path` and evaluate them (the models asked for that are
    there).

    `keywords=False` leaves out the per-keyword table (a summary needs only
    the per-review scores): `evaluate(keywords=False)` does not build it
    unless the semantic or sentiment metrics read it, so less is held and sent back.
    """
    from kweval.data import load_dataset

    dataset = load_dataset(path, movies=movies)
    wanted = None if models is None else [m for m in models if m in dataset.model_names]
    evaluation = evaluate(dataset.subset(models=wanted), options, keywords=keywords)
    return GroupResult(dataset.movie_ids, dataset.model_names, dataset.source, evaluation)


def combine_groups(
    parts: Sequence[GroupResult], movies: Sequence[str] | None = None, models: Sequence[str] | None = None
) -> tuple[str, Evaluation] | None:
    """(dataset source, the whole evaluation) from the groups' results, in movie order.

    None when a movie or model asked for is in no group, or when the groups'
    files name different models: then one process should evaluate everything
    (and report the mistake).
    """
    loaded_movies = {m for part in parts for m in part.movies}
    loaded_models = {m for part in parts for m in part.models}
    if not (loaded_movies >= set(movies or ()) and loaded_models >= set(models or ())):
        return None
    try:
        return parts[0].source, combine_evaluations([part.evaluation for part in parts])
    except ValueError:
        return None
