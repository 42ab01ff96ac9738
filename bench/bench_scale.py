"""Benchmark: how `kweval evaluate` scales with the number of reviews (issue 2 / issue 6).

Synthetic datasets (`kweval synth`, 10 movies, 3 models, seed 0) are generated
once into bench/out/ (gitignored) and reused:

- tidy layout: 10k, 100k and 1M reviews;
- DNLP layout: 20k and 200k reviews.

For each, the whole process `python -m kweval evaluate DATA --out FILE` (load +
evaluate + aggregate + write) is timed (best of N) with the child's peak RSS.
Printed: the time ratios for 10× the reviews, and a split of one in-process
run of the Python API (load / GT+cleaning / matching / metrics / aggregate /
write), timed with time.perf_counter at the stage boundaries that
`evaluate`'s progress callback reports.

Targets (2 cores): 20k → 200k DNLP costs at most 12× the time; 200k reviews
peak under 3 GB RSS; 1M reviews × 3 models (tidy) at most 60 s and 4 GB.

Semantic curve (`--semantic`, issue 14): `kweval evaluate DATA --semantic`
on synthetic tidy sets of 10k and 100k reviews × 3 models whose keyword
vocabulary is bounded (few noise phrases, no Heaps growth: the default
generator's 139k distinct keywords at 100k reviews would take ~10 min to
embed on 2 cores), each cold (an empty KWEVAL_CACHE_DIR) then warm, in one
process and with `--scheduler local:2`.  Printed per run: the time, the
distinct keywords embedded and the cost per keyword embedded (cold − warm).

Usage: python bench/bench_scale.py [--sizes 10000,100000,1000000] [--dnlp-sizes 20000,200000] [--repeat 3]
       python bench/bench_scale.py --profile DATA     (the in-process split only, as JSON)
       python bench/bench_scale.py --semantic [--semantic-sizes 10000,100000]   (the semantic curve only)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "bench" / "out"
MOVIES = 10
MODELS = 3
SEED = 0
TARGETS = {"dnlp_10x_ratio": 12.0, "rss_200k_mb": 3 * 1024, "time_1m_s": 60.0, "rss_1m_mb": 4 * 1024}


def run_timed(cmd: list[str], cwd: Path = REPO) -> dict:
    """Run `cmd` as a child process: wall and CPU seconds, the child's peak RSS (MB), exit status, stderr/stdout
    tails."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=out, stderr=err, env=dict(os.environ, HF_HUB_OFFLINE="1"))
        _, status, usage = os.wait4(proc.pid, 0)  # this child's own usage; ru_maxrss is in KB on Linux
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    return {
        "wall_s": wall,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "peak_rss_mb": usage.ru_maxrss / 1024,
        "rc": proc.returncode,
        "stdout": stdout.decode(errors="replace")[-4000:],
        "stderr": stderr.decode(errors="replace")[-2000:],
    }


def dataset_dir(layout: str, reviews: int) -> Path:
    return OUT / f"synth_{layout}_{reviews // 1000}k_m{MOVIES}_k{MODELS}_s{SEED}"


def ensure_dataset(layout: str, reviews: int) -> dict:
    """Generate the dataset unless bench/out/ already has it (a marker file records a finished write)."""
    folder = dataset_dir(layout, reviews)
    marker = folder / ".complete"
    cmd = [
        sys.executable,
        "-m",
        "kweval",
        "synth",
        str(folder),
        "--movies",
        str(MOVIES),
        "--reviews-per-movie",
        str(reviews // MOVIES),
        "--models",
        str(MODELS),
        "--seed",
        str(SEED),
        "--layout",
        layout,
    ]
    if marker.is_file():
        return {"folder": str(folder), "cmd": _show(cmd), "generated": False, **json.loads(marker.read_text())}
    res = run_timed(cmd)
    if res["rc"] != 0:
        raise SystemExit(f"synth failed: {_show(cmd)}\n{res['stderr']}")
    info = {
        "synth_s": round(res["wall_s"], 2),
        "synth_rss_mb": round(res["peak_rss_mb"]),
        "synth_log": res["stderr"].strip().splitlines()[-1],
    }
    marker.write_text(json.dumps(info))
    return {"folder": str(folder), "cmd": _show(cmd), "generated": True, **info}


def _rows_from_log(data: dict) -> int | None:
    """The prediction rows `kweval synth` reported for a dataset (None if unknown)."""
    import re

    found = re.search(r"(\d+) prediction row", data.get("synth_log", ""))
    return int(found.group(1)) if found else None


def _show(cmd: list[str]) -> str:
    parts = ["python"] + cmd[1:]
    return " ".join(str(p).replace(str(REPO) + "/", "") for p in parts)


def time_evaluate(folder: str, repeat: int) -> dict:
    out_file = OUT / "summary.csv"
    cmd = [sys.executable, "-m", "kweval", "evaluate", folder, "--out", str(out_file), "--quiet"]
    runs = []
    for _ in range(repeat):
        res = run_timed(cmd)
        if res["rc"] != 0:
            raise SystemExit(f"evaluate failed (exit {res['rc']}): {_show(cmd)}\n{res['stderr']}")
        runs.append(res)
    best = min(runs, key=lambda r: r["wall_s"])
    return {
        "cmd": _show(cmd),
        "wall_s": best["wall_s"],
        "all_s": [round(r["wall_s"], 2) for r in runs],
        "peak_rss_mb": max(r["peak_rss_mb"] for r in runs),
    }


# --- in-process split ------------------------------------------------------------------------------


def profile(folder: str) -> dict:
    """One run of the Python API, timed with time.perf_counter (no number is changed).

    Stages: load (load_dataset); gt (evaluate's GT cleaning, up to its
    "cleaning" progress report); matching (time inside candidate_table and
    assign_matches_table, wrapped for this run); metrics (from the "metrics"
    progress report to the end: per-review metrics, scores and keywords
    tables, coverage, skipped); cleaning (the rest of evaluate: grouping,
    ordering, normalizing, de-duplicating, output buffers); aggregate; write
    (rendering the CSV and writing it).
    """
    t0 = time.perf_counter()
    import kweval.evaluation.pipeline  # noqa: F401
    from kweval.data import load_dataset
    from kweval.evaluation.aggregate import aggregate
    from kweval.io import report

    ev_module = sys.modules["kweval.evaluation.pipeline"]
    t_import = time.perf_counter()
    dataset = load_dataset(folder)
    t_load = time.perf_counter()

    spent = {"matching": 0.0}

    def timed(fn):
        def wrapper(*args, **kwargs):
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                spent["matching"] += time.perf_counter() - start

        return wrapper

    match_stage = sys.modules["kweval.evaluation.match"]  # where the stage looks the matching functions up
    for name in ("candidate_table", "assign_matches_table"):
        setattr(match_stage, name, timed(getattr(match_stage, name)))
    marks: dict[str, float] = {}

    def progress(stage: str, fraction: float) -> None:
        marks.setdefault(stage, time.perf_counter())

    options = ev_module.EvalOptions()
    evaluation = ev_module.evaluate(dataset, options, progress=progress)
    t_eval = time.perf_counter()
    summary = aggregate(evaluation, "macro")
    t_agg = time.perf_counter()
    text = report.render(summary, "csv", {"data": folder, "aggregate": "macro", "legacy": False, **options.as_dict()})
    (OUT / "profile_summary.csv").write_text(text, encoding="utf-8")
    t_write = time.perf_counter()

    gt = marks.get("cleaning", t_load) - t_load
    metrics = t_eval - marks.get("metrics", t_eval)
    stages = {
        "import": t_import - t0,
        "load": t_load - t_import,
        "gt": gt,
        "cleaning": (t_eval - t_load) - gt - spent["matching"] - metrics,
        "matching": spent["matching"],
        "metrics": metrics,
        "aggregate": t_agg - t_eval,
        "write": t_write - t_agg,
    }
    import resource

    return {
        "folder": folder,
        "n_predictions": len(dataset.predictions),
        "n_scores": len(evaluation.scores),
        "stages_s": {k: round(v, 3) for k, v in stages.items()},
        "total_s": round(t_write - t0, 3),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
    }


def profile_child(folder: str) -> dict:
    res = run_timed([sys.executable, "bench/bench_scale.py", "--profile", folder])
    if res["rc"] != 0:
        raise SystemExit(f"profile failed: {folder}\n{res['stderr']}")
    return json.loads(res["stdout"].strip().splitlines()[-1])


# --- semantic curve (issue 14) ------------------------------------------------------------------------

# A bounded vocabulary: the curve measures evaluation and embedding, not a vocabulary that grows with the reviews.
SEMANTIC_SYNTH = {"n_noise": 400, "heaps_beta": 0.0}


def ensure_semantic_dataset(reviews: int) -> dict:
    """A tidy synthetic set with a bounded vocabulary (SEMANTIC_SYNTH), written once into bench/out/."""
    from kweval.data import load_dataset
    from kweval.data.synth import SynthOptions, synthesize, write_synthetic
    from kweval.evaluation.pipeline import EvalOptions, evaluate, semantic_texts

    folder = OUT / f"synth_sem_{reviews // 1000}k_m{MOVIES}_k{MODELS}_s{SEED}"
    marker = folder / ".complete"
    if not marker.is_file():
        dataset = synthesize(
            movies=MOVIES,
            reviews_per_movie=reviews // MOVIES,
            models=MODELS,
            seed=SEED,
            options=SynthOptions(**SEMANTIC_SYNTH),
        )
        write_synthetic(dataset, folder, layout="tidy")
        distinct = len(semantic_texts(evaluate(load_dataset(folder), EvalOptions())))
        marker.write_text(json.dumps({"distinct_keywords": distinct, "prediction_rows": len(dataset.predictions)}))
    info = json.loads(marker.read_text())
    shown = (
        f"synthesize(movies={MOVIES}, reviews_per_movie={reviews // MOVIES}, models={MODELS}, seed={SEED}, "
        f"options=SynthOptions(**{SEMANTIC_SYNTH}))"
    )
    return {"folder": str(folder), "reviews": reviews, "synth": shown, **info}


def semantic_curve(sizes=(10_000, 100_000), schedulers=("", "local:2")) -> dict:
    """Cold then warm `kweval evaluate --semantic` per size and scheduler, each cold run with a fresh cache folder."""
    OUT.mkdir(parents=True, exist_ok=True)
    rows = []
    for n in sizes:
        data = ensure_semantic_dataset(n)
        for scheduler in schedulers:
            with tempfile.TemporaryDirectory(prefix="kweval-bench-cache-") as cache:
                os.environ["KWEVAL_CACHE_DIR"] = cache
                try:
                    cmd = [
                        sys.executable,
                        "-m",
                        "kweval",
                        "evaluate",
                        data["folder"],
                        "--semantic",
                        "--quiet",
                        "--out",
                        str(OUT / "semantic_summary.csv"),
                    ] + (["--scheduler", scheduler] if scheduler else [])
                    runs = {}
                    for state in ("cold", "warm"):
                        res = run_timed(cmd)
                        if res["rc"] != 0:
                            raise SystemExit(f"semantic run failed: {_show(cmd)}\n{res['stderr']}")
                        runs[state] = round(res["wall_s"], 2)
                finally:
                    os.environ.pop("KWEVAL_CACHE_DIR", None)
            per_keyword = (runs["cold"] - runs["warm"]) / max(1, data["distinct_keywords"])
            rows.append(
                {
                    "data": data,
                    "scheduler": scheduler or "one process",
                    "cmd": "KWEVAL_CACHE_DIR=EMPTY " + _show(cmd),
                    **runs,
                    "ms_per_keyword": round(1000 * per_keyword, 3),
                }
            )
    from kweval.evaluation.pipeline import EvalOptions

    return {"backend": EvalOptions().embedding_backend, "cores": len(os.sched_getaffinity(0)), "rows": rows}


def semantic_report(result: dict) -> str:
    lines = [
        f"### Semantic curve (`--semantic`, default embedding backend {result['backend']}, {result['cores']} cores)",
        "",
        "Synthetic tidy data, 10 movies × 3 models, bounded vocabulary: "
        f"`{result['rows'][0]['data']['synth'] if result['rows'] else ''}` (reviews per movie as the size says). "
        "Cold: an empty KWEVAL_CACHE_DIR (every distinct keyword embedded); warm: the same command again. "
        "Per keyword embedded: (cold − warm) / distinct keywords.",
        "",
        "| reviews | prediction rows | distinct keywords | where | cold | warm | ms per keyword embedded |",
        "| ---: | ---: | ---: | --- | ---: | ---: | ---: |",
    ]
    for r in result["rows"]:
        d = r["data"]
        lines.append(
            f"| {d['reviews']:,d} | {d['prediction_rows']:,d} | {d['distinct_keywords']:,d} | {r['scheduler']} | "
            f"{r['cold']:.1f} s | {r['warm']:.1f} s | {r['ms_per_keyword']:.2f} |"
        )
    lines += ["", "Commands:", "", "```"] + sorted({r["cmd"] for r in result["rows"]}) + ["```"]
    return "\n".join(lines)


# --- the benchmark ---------------------------------------------------------------------------------------


def run(
    sizes=(10_000, 100_000, 1_000_000), dnlp_sizes=(20_000, 200_000), repeat: int = 3, profiles: bool = True
) -> dict:
    OUT.mkdir(parents=True, exist_ok=True)
    rows = []
    for layout, sizes_ in (("tidy", sizes), ("dnlp", dnlp_sizes)):
        for n in sizes_:
            data = ensure_dataset(layout, n)
            reps = repeat if n < 1_000_000 else max(1, min(repeat, 2))
            timing = time_evaluate(data["folder"], reps)
            row = {
                "layout": layout,
                "reviews": n,
                "data": data,
                "evaluate": timing,
                "n_predictions": _rows_from_log(data),
            }
            if profiles and n >= 100_000:
                row["profile"] = profile_child(data["folder"])
            rows.append(row)
    ratios = []
    for layout in ("tidy", "dnlp"):
        got = sorted((r for r in rows if r["layout"] == layout), key=lambda r: r["reviews"])
        for a, b in zip(got[:-1], got[1:]):
            if b["reviews"] == 10 * a["reviews"]:
                ratios.append(
                    {
                        "layout": layout,
                        "from": a["reviews"],
                        "to": b["reviews"],
                        "ratio": b["evaluate"]["wall_s"] / a["evaluate"]["wall_s"],
                    }
                )
    checks = {}
    for r in ratios:
        if r["layout"] == "dnlp" and (r["from"], r["to"]) == (20_000, 200_000):
            checks["dnlp 20k -> 200k time ratio <= 12"] = (
                round(r["ratio"], 2),
                r["ratio"] <= TARGETS["dnlp_10x_ratio"],
            )
    for r in rows:
        if r["reviews"] == 200_000:
            rss = r["evaluate"]["peak_rss_mb"]
            checks[f"{r['layout']} 200k peak RSS < 3 GB"] = (f"{rss:.0f} MB", rss < TARGETS["rss_200k_mb"])
        if r["reviews"] == 1_000_000 and r["layout"] == "tidy":
            t, rss = r["evaluate"]["wall_s"], r["evaluate"]["peak_rss_mb"]
            checks["tidy 1M x 3 models <= 60 s"] = (f"{t:.1f} s", t <= TARGETS["time_1m_s"])
            checks["tidy 1M x 3 models peak RSS <= 4 GB"] = (f"{rss:.0f} MB", rss <= TARGETS["rss_1m_mb"])
    return {
        "name": "scale",
        "movies": MOVIES,
        "models": MODELS,
        "seed": SEED,
        "repeat": repeat,
        "rows": rows,
        "ratios": ratios,
        "checks": checks,
    }


def report(result: dict) -> str:
    lines = []
    for r in result["rows"]:
        d, e = r["data"], r["evaluate"]
        gen = f"generated in {d['synth_s']} s, peak {d['synth_rss_mb']} MB" if "synth_s" in d else "reused"
        lines.append(f"$ {d['cmd']}   # {gen}")
        if "synth_log" in d:
            lines.append(f"  {d['synth_log']}")
        lines.append(f"$ {e['cmd']}")
        lines.append(
            f"  {r['layout']:4s} {r['reviews']:>9,d} reviews: best {e['wall_s']:.2f} s of {e['all_s']}, peak RSS "
            f"{e['peak_rss_mb']:.0f} MB"
        )
        if "profile" in r:
            p = r["profile"]
            split = ", ".join(f"{k} {v:.2f}" for k, v in p["stages_s"].items())
            lines.append(f"  in-process split (s): {split}; total {p['total_s']:.2f} s, peak RSS {p['peak_rss_mb']} MB")
    for q in result["ratios"]:
        lines.append(f"{q['layout']}: {q['from']:,d} -> {q['to']:,d} reviews (10x): time x{q['ratio']:.2f}")
    for name, (value, ok) in result["checks"].items():
        lines.append(f"target {name}: {value} ({'met' if ok else 'NOT met'})")
    return "\n".join(lines)


def _ints(value: str) -> list[int]:
    return [int(v) for v in value.split(",") if v.strip()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=_ints, default=[10_000, 100_000, 1_000_000], help="tidy sizes (reviews)")
    parser.add_argument("--dnlp-sizes", type=_ints, default=[20_000, 200_000], help="DNLP sizes (reviews)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-profile", action="store_true")
    parser.add_argument("--profile", metavar="DATA", help="only the in-process split of DATA, printed as JSON")
    parser.add_argument(
        "--semantic", action="store_true", help="only the semantic curve (cold/warm, one process and local:2)"
    )
    parser.add_argument(
        "--semantic-sizes", type=_ints, default=[10_000, 100_000], help="semantic curve sizes (reviews)"
    )
    args = parser.parse_args(argv)
    if args.semantic:
        print(semantic_report(semantic_curve(args.semantic_sizes)))
        return 0
    if args.profile:
        OUT.mkdir(parents=True, exist_ok=True)
        print(json.dumps(profile(args.profile)))
        return 0
    print(report(run(args.sizes, args.dnlp_sizes, args.repeat, not args.no_profile)))
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    raise SystemExit(main())
