"""Benchmark: keyword-embedding throughput, kweval vs the notebook's call pattern (issue 4).

Data: the predicted keywords of one model for one movie, read straight from
the DNLP pickle (default SW_Episode6, model ``base``: ``keywords_base`` is a
list of (keyword, score) per review).

- kweval: `kweval.embeddings.semantic.embed_texts` on the *distinct normalized* keywords
  (each string once, length-sorted batches, no cache: ``store=False``), for
  each batch size of ``--batch-sizes``.
- notebook style (seed 001): one encoder call per review on that review's
  5 raw keywords (tokenize with padding, forward, mean-pool, normalize),
  repeated keywords included, on the first ``--notebook-reviews`` reviews
  (0 = all; by default a subset because one call per review is slow on CPU).

Both use the very same loaded weights on the same device (fp16 on CUDA), so
the difference is the call pattern and the de-duplication.  Model loading is
timed apart.  Throughput = strings embedded per second; the end-to-end ratio
compares the time each needs to cover the same reviews.

Usage: python bench/bench_semantic.py [--device cpu|cuda] [--batch-sizes 32,64,128,256,512]
       [--notebook-reviews 200] [--repeat 1] [--data PKL] [--model base] [--threads N]
"""

from __future__ import annotations

import argparse
import os
import platform
import shlex
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

DNLP = REPO.parent / "shared" / "data" / "dnlp" / "Dataset"
DEFAULT_DATA = str(REPO.parent / "shared" / "data" / "dnlp" / "Dataset" / "Extracted_Keywords" / "kw_SW_Episode6.pkl")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=DEFAULT_DATA, help="DNLP kw_<movie>.pkl file")
    ap.add_argument("--model", default="base", help="which keywords_<model> column")
    ap.add_argument("--embedding-model", default="all-MiniLM-L6-v2")
    ap.add_argument("--batch-sizes", default="32,64,128,256,512", help="comma-separated sweep for kweval")
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    ap.add_argument("--notebook-reviews", type=int, default=200, help="reviews timed in notebook style (0 = all)")
    ap.add_argument("--repeat", type=int, default=1, help="best of N for every timing")
    ap.add_argument("--threads", type=int, default=0, help="torch CPU threads (0 = torch's default)")
    ap.add_argument(
        "--mode",
        choices=["backends", "instant", "notebook"],
        default="backends",
        help="backends: torch vs onnx vs onnx-int8 (or the GPU sweep with --device cuda); "
        "instant: τ change and sentiment a second time; notebook: kweval vs the notebook's calls",
    )
    ap.add_argument("--limit", type=int, default=0, help="only the first N unique keywords (0 = all)")
    ap.add_argument("--batch", type=int, default=256, help="batch size of the backends comparison")
    ap.add_argument("--busy", action="store_true", help="repeat the comparison beside one busy process")
    ap.add_argument("--backend", default="torch", help="embedding backend of --mode instant")
    ap.add_argument(
        "--stand-in-vectors",
        action="store_true",
        help="--mode instant: fill a (KWEVAL_CACHE_DIR) store with random vectors first (timings only)",
    )
    return ap.parse_args(argv)


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def load_reviews(path: str, model: str) -> list[list[str]]:
    import pandas as pd

    frame = pd.read_pickle(path)
    col = f"keywords_{model}"
    if col not in frame.columns:
        raise SystemExit(f"{path} has no column {col}; columns: {', '.join(map(str, frame.columns))}")
    reviews = []
    for cell in frame[col]:
        if isinstance(cell, list):
            reviews.append([kw for kw, *_ in cell if isinstance(kw, str)])
    return reviews


def best_of(repeat: int, fn) -> float:
    best = float("inf")
    for _ in range(max(1, repeat)):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def notebook_style(model, reviews: list[list[str]], device: str) -> None:
    """One forward pass per review on its raw keywords: the seed notebook's call pattern."""
    import torch

    tokenizer = model.tokenizer
    encoder = model[0].auto_model
    with torch.inference_mode():
        for kws in reviews:
            if not kws:
                continue
            batch = tokenizer(kws, padding=True, truncation=True, return_tensors="pt").to(device)
            hidden = encoder(**batch).last_hidden_state
            emb = torch.nn.functional.normalize(hidden.mean(dim=1).float(), p=2, dim=1)
            emb.cpu().numpy()  # like the notebook's use of the result: forces the device to finish


def notebook_main(args: argparse.Namespace) -> int:
    print("$ " + " ".join(shlex.quote(a) for a in [Path(sys.executable).name, *sys.argv]))
    sizes = [int(s) for s in args.batch_sizes.split(",") if s.strip()]

    import torch

    from kweval.embeddings import semantic
    from kweval.text.normalize import normalize

    if args.threads:
        torch.set_num_threads(args.threads)
    if args.device == "cuda" and not torch.cuda.is_available():
        print("--device cuda: no CUDA device available", file=sys.stderr)
        return 2
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    gpu = f", GPU {torch.cuda.get_device_name(0)}" if args.device == "cuda" else ""
    load = f"; load average {os.getloadavg()[0]:.1f}" if hasattr(os, "getloadavg") else ""
    print(
        f"device {args.device}{gpu}; CPU {cpu_name()}, {cores} cores available, "
        f"torch {torch.__version__} with {torch.get_num_threads()} threads{load}"
    )

    reviews = load_reviews(args.data, args.model)
    every = [normalize(k) for kws in reviews for k in kws]
    unique = [t for t in dict.fromkeys(every) if t]
    print(
        f"data: {args.data} [{args.model}]: {len(reviews)} reviews, {sum(map(len, reviews))} keywords, "
        f"{len(unique)} distinct normalized"
    )

    t0 = time.perf_counter()
    model = semantic.load_model(args.embedding_model, args.device)
    print(f"model {args.embedding_model} loaded in {time.perf_counter() - t0:.2f} s (not counted below)")
    semantic.embed_texts(unique[:64], args.embedding_model, store=False, device=args.device)  # warm-up
    notebook_style(model, reviews[:8], args.device)

    print()
    print(f"kweval embed_texts, {len(unique)} distinct strings, best of {args.repeat}:")
    print("| batch size | seconds | strings/s |")
    print("| ---: | ---: | ---: |")
    rates = {}
    for bs in sizes:
        secs = best_of(
            args.repeat,
            lambda bs=bs: semantic.embed_texts(
                unique, args.embedding_model, store=False, batch_size=bs, device=args.device
            ),
        )
        rates[bs] = (secs, len(unique) / secs)
        print(f"| {bs} | {secs:.3f} | {len(unique) / secs:,.0f} |")
    best_bs = max(rates, key=lambda b: rates[b][1])
    best_secs, best_rate = rates[best_bs]

    n_nb = len(reviews) if args.notebook_reviews <= 0 else min(args.notebook_reviews, len(reviews))
    subset = reviews[:n_nb]
    nb_strings = sum(map(len, subset))
    nb_secs = best_of(args.repeat, lambda: notebook_style(model, subset, args.device))
    nb_rate = nb_strings / nb_secs
    sub_unique = [t for t in dict.fromkeys(normalize(k) for kws in subset for k in kws) if t]
    k_sub_secs = best_of(
        args.repeat,
        lambda: semantic.embed_texts(
            sub_unique, args.embedding_model, store=False, batch_size=best_bs, device=args.device
        ),
    )

    scope = "all" if n_nb == len(reviews) else f"the first {n_nb} of {len(reviews)}"
    print()
    print(
        f"notebook style on {scope} reviews: {n_nb} calls, {nb_strings} strings in {nb_secs:.3f} s = "
        f"{nb_rate:,.0f} strings/s"
    )
    print(
        f"kweval on the same reviews: {len(sub_unique)} distinct strings in {k_sub_secs:.3f} s "
        f"= {len(sub_unique) / k_sub_secs:,.0f} strings/s (batch {best_bs})"
    )
    print()
    print(
        f"throughput ratio (kweval best, batch {best_bs}: {best_rate:,.0f} strings/s) / notebook ({nb_rate:,.0f} "
        f"strings/s): "
        f"{best_rate / nb_rate:.1f}x"
    )
    print(
        f"same {n_nb} reviews covered: notebook {nb_secs:.3f} s / kweval {k_sub_secs:.3f} s = "
        f"{nb_secs / k_sub_secs:.1f}x"
    )
    if n_nb < len(reviews):
        est = nb_secs * len(reviews) / n_nb
        print(
            f"whole movie ({len(reviews)} reviews): notebook about {est:.1f} s (extrapolated from {n_nb} reviews) "
            f"/ kweval {best_secs:.3f} s (measured) = {est / best_secs:.1f}x"
        )
    else:
        print(
            f"whole movie ({len(reviews)} reviews): notebook {nb_secs:.3f} s / kweval {best_secs:.3f} s = "
            f"{nb_secs / best_secs:.1f}x"
        )
    return 0


# --------------------------------------------------------------------------- issue 14 / 11 figures


def dnlp_texts(limit: int) -> tuple[list[str], list[tuple[np.ndarray, np.ndarray]]]:
    """The DNLP unique normalized keywords (predictions and GT), and per movie (keyword ids, GT ids) for agreement."""
    from kweval.data import load_dataset
    from kweval.evaluation.pipeline import EvalOptions, evaluate

    ev = evaluate(load_dataset(DNLP), EvalOptions())
    kw, gt = ev.keywords, ev.ground_truth
    texts = list(dict.fromkeys(kw["norm"].tolist() + gt["norm"].tolist()))
    if limit:
        keep = set(texts[:limit])
        texts = texts[:limit]
    else:
        keep = set(texts)
    pos = {t: i for i, t in enumerate(texts)}
    pairs = []
    for movie, rows in kw.groupby("movie", sort=False):
        p = np.array([pos[t] for t in dict.fromkeys(rows["norm"]) if t in keep], dtype=np.int64)
        g = np.array([pos[t] for t in dict.fromkeys(gt.loc[gt["movie"] == movie, "norm"]) if t in keep], dtype=np.int64)
        if len(p) and len(g):
            pairs.append((p, g))
    return texts, pairs


def timed_embed(texts: list[str], backend: str, device: str, batch: int) -> tuple[np.ndarray, float]:
    from kweval.embeddings import semantic

    semantic.load_encoder(semantic.DEFAULT_MODEL, device, backend)  # load/export apart from the timing
    semantic.embed_texts(texts[:64], store=False, backend=backend, device=device, batch_size=batch)  # warm-up
    t0 = time.perf_counter()
    vecs = semantic.embed_texts(texts, store=False, backend=backend, device=device, batch_size=batch)
    return vecs, time.perf_counter() - t0


def agreement(ref: np.ndarray, other: np.ndarray, pairs, tau: float = 0.75) -> tuple[float, float, int]:
    """(max |Δcos|, share of keyword × GT pairs with the same decision at τ, pairs) over each movie's pairs."""
    worst, same, total = 0.0, 0, 0
    thr = np.float32(tau)
    for p, g in pairs:
        a, b = ref[p] @ ref[g].T, other[p] @ other[g].T
        worst = max(worst, float(np.abs(a - b).max()))
        same += int(((a > thr) == (b > thr)).sum())
        total += a.size
    return worst, same / max(total, 1), total


def busy_process() -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", "while True: pass"])


def backends_main(args: argparse.Namespace) -> int:
    """Throughput of torch fp32, onnx and onnx-int8 on the DNLP keywords, and their agreement with torch fp32."""
    from kweval.embeddings.onnx import available_cores

    texts, pairs = dnlp_texts(args.limit)
    load = f"; load average {os.getloadavg()[0]:.1f}" if hasattr(os, "getloadavg") else ""
    print(f"CPU {cpu_name()}, {available_cores()} cores available{load}")
    print(
        f"data: {DNLP}: {len(texts)} unique normalized keywords (predictions + GT), "
        f"{sum(len(p) * len(g) for p, g in pairs):,} keyword x GT pairs; batch {args.batch}"
    )
    print()
    print("| backend | condition | seconds | strings/s | vs torch fp32 | max abs dcos | same decision at 0.75 |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    conditions = ["idle-ish", "1 busy process"] if args.busy else ["as is"]
    verdicts = []
    for condition in conditions:
        hog = busy_process() if condition == "1 busy process" else None
        try:
            ref = None
            for backend in ("torch", "onnx", "onnx-int8"):
                vecs, secs = timed_embed(texts, backend, "cpu", args.batch)
                if ref is None:
                    ref, ref_secs = vecs, secs
                worst, same, _ = agreement(ref, vecs, pairs)
                print(
                    f"| {backend} | {condition} | {secs:.1f} | {len(texts) / secs:,.0f} | {ref_secs / secs:.2f}x "
                    f"| {worst:.2e} | {100 * same:.3f} % |",
                    flush=True,
                )
                if backend == "onnx":
                    verdicts.append((condition, ref_secs / secs, worst, same))
        finally:
            if hog is not None:
                hog.kill()
    print()
    print("Both paths sort their batches by token count (embed_texts); `auto` (the CPU default) is onnx.")
    for condition, ratio, worst, same in verdicts:
        agrees = worst <= 2e-3 and same >= 0.999
        print(
            f"- {condition}: onnx agreement (max |dcos| <= 2e-3, >= 99.9 % same decisions at 0.75): "
            f"{'met' if agrees else 'not met'}; speed target onnx >= 2.5x torch fp32: {ratio:.2f}x, "
            f"{'met' if ratio >= 2.5 else 'not met'}"
        )
    return 0


def cuda_main(args: argparse.Namespace) -> int:
    """GPU: throughput per batch size in fp32 and fp16, and fp16-vs-fp32 agreement."""
    import torch

    from kweval.embeddings import semantic
    from kweval.embeddings.similarity import unit_rows

    if not torch.cuda.is_available():
        print("--device cuda: no CUDA device available", file=sys.stderr)
        return 2
    texts, pairs = dnlp_texts(args.limit)
    print(f"GPU {torch.cuda.get_device_name(0)}; {len(texts)} unique normalized keywords")
    print("| precision | batch | seconds | strings/s |")
    print("| --- | ---: | ---: | ---: |")
    out = {}
    for precision in ("fp32", "fp16"):
        semantic.load_model.cache_clear()
        model = semantic.load_model(semantic.DEFAULT_MODEL, "cuda")
        model = model.float() if precision == "fp32" else model.half()
        for bs in (64, 128, 256, 512, 1024):
            model.encode(texts[:bs], batch_size=bs)
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            vecs = model.encode(texts, batch_size=bs, normalize_embeddings=True, convert_to_numpy=True)
            torch.cuda.synchronize()
            secs = time.perf_counter() - t0
            out[precision] = unit_rows(np.asarray(vecs, dtype=np.float32))
            print(f"| {precision} | {bs} | {secs:.2f} | {len(texts) / secs:,.0f} |", flush=True)
    worst, same, n = agreement(out["fp32"], out["fp16"], pairs)
    print(f"\nfp16 vs fp32: max |dcos| {worst:.2e}; same decision at 0.75 on {100 * same:.3f} % of {n:,} pairs")
    return 0


def instant_main(args: argparse.Namespace) -> int:
    """Issue 11 item 7: τ change from stored similarities, and sentiment a second time (persistent VADER store)."""
    from kweval.data import load_dataset
    from kweval.evaluation import sentiment
    from kweval.evaluation.pipeline import EvalOptions, evaluate, with_threshold

    dataset = load_dataset(DNLP)
    if args.stand_in_vectors:  # τ re-thresholding costs the same whatever the vectors: fill the store without a model
        from kweval.embeddings import semantic
        from kweval.embeddings.store import EmbeddingStore

        lexical = evaluate(dataset, EvalOptions())
        texts = list(dict.fromkeys(lexical.keywords["norm"].tolist() + lexical.ground_truth["norm"].tolist()))
        vecs = np.random.default_rng(0).standard_normal((len(texts), 384)).astype(np.float32)
        EmbeddingStore(
            semantic.DEFAULT_MODEL,
            backend=semantic.variant(args.backend)[0],
            precision=semantic.variant(args.backend)[1],
        ).put_many(texts, vecs)
        print(f"store filled with {len(texts)} stand-in random vectors (timings only)")
    t0 = time.perf_counter()
    ev = evaluate(dataset, EvalOptions(semantic=True, embedding_backend=args.backend))
    print(
        f"semantic evaluation of {DNLP} ({args.backend}; store in "
        f"{os.environ.get('KWEVAL_CACHE_DIR', 'the user cache')}): "
        f"{time.perf_counter() - t0:.1f} s"
    )
    times = []
    for tau in (0.76, 0.74, 0.8, 0.6):
        t0 = time.perf_counter()
        with_threshold(ev, tau)
        times.append(time.perf_counter() - t0)
    print(f"τ change (with_threshold): max {max(times):.3f} s over {len(times)} changes")
    for attempt in ("first", "second"):
        sentiment._MEMO.clear()  # as a new process: only the persistent store remembers
        t0 = time.perf_counter()
        evaluate(dataset, EvalOptions(sentiment=True))
        print(f"sentiment evaluation, {attempt} time (process memo cleared): {time.perf_counter() - t0:.1f} s")
    t0 = time.perf_counter()
    evaluate(dataset, EvalOptions())
    print(f"(the lexical evaluation alone: {time.perf_counter() - t0:.1f} s)")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    print("$ " + " ".join(shlex.quote(a) for a in [Path(sys.executable).name, *sys.argv]))
    if args.mode == "notebook":
        return notebook_main(args)
    if args.mode == "instant":
        return instant_main(args)
    return cuda_main(args) if args.device == "cuda" else backends_main(args)


if __name__ == "__main__":
    raise SystemExit(main())
