"""Run every benchmark and write bench/RESULTS.md.

- bench_lexical.py: `kweval evaluate` vs the notebooks' loop on the DNLP data;
- bench_scale.py: 10k / 100k / 1M synthetic reviews (tidy) and 20k / 200k (DNLP);
- bench_semantic.py, bench_app.py, bench_dask.py (dask local:2 vs --jobs 2) and
  bench_scale.py --semantic (the semantic curve) when present (run as they are;
  their output is copied into the report).

Usage: python bench/run_all.py [--quick] [--repeat 3]
  --quick: smaller scale curve (10k, 100k tidy; 20k, 200k DNLP), for a fast check.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO / "bench"
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(REPO))

import bench_lexical  # noqa: E402
import bench_scale  # noqa: E402

OPTIONAL = (  # a script and its arguments
    "bench_semantic.py",
    "bench_cold_semantic.py",
    "bench_app.py",
    "bench_app.py --first-views",
    "bench_report_stages.py",
    "bench_randomization.py",
    "bench_highlight.py",
    "bench_keyphrase.py",
    "bench_gap.py",
    "bench_per_document.py",
    "bench_dask.py",
    "bench_failures.py",
    "bench_fates.py",
    "bench_parse.py",
    "bench_grounding.py",
    "bench_scale.py --semantic",
    "bench_runs.py",
)
OPTIONAL_TIMEOUT_S = 1800


def machine() -> dict:
    cpu = platform.processor() or "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    ram_gb = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                ram_gb = int(line.split()[1]) / 1024 / 1024
                break
    except OSError:
        pass
    import numpy
    import pandas
    import pyarrow

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": cpu,
        "cores": cores,
        "ram_gb": ram_gb,
        "os": platform.platform(),
        "python": platform.python_version(),
        "pandas": pandas.__version__,
        "numpy": numpy.__version__,
        "pyarrow": pyarrow.__version__,
        "commit": _git("rev-parse", "--short", "HEAD"),
        "dirty": bool(_git("status", "--porcelain", "--untracked-files=no", "--", "kweval")),
    }


def _git(*args: str) -> str:
    try:
        return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, check=False).stdout.strip()
    except OSError:
        return ""


def run_optional(name: str) -> dict | None:
    script, *script_args = name.split()
    path = BENCH / script
    if not path.is_file():
        return None
    start = time.perf_counter()
    try:
        proc = subprocess.run(
            [sys.executable, str(path), *script_args],
            cwd=REPO,
            capture_output=True,
            text=True,
            env=dict(os.environ, HF_HUB_OFFLINE="1"),
            timeout=OPTIONAL_TIMEOUT_S,
        )
        rc, out, err = proc.returncode, proc.stdout, proc.stderr
    except subprocess.TimeoutExpired as exc:
        rc = "timeout"
        out = (exc.stdout or b"").decode(errors="replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        err = f"stopped after {OPTIONAL_TIMEOUT_S} s"
    return {
        "name": name,
        "cmd": f"python bench/{name}",
        "rc": rc,
        "wall_s": time.perf_counter() - start,
        "stdout": out.strip(),
        "stderr": err.strip()[-3000:],
    }


def render(info: dict, lexical: dict, scale: dict, others: list[dict], total_s: float) -> str:
    out = [
        "# Benchmark results",
        "",
        "Written by `python bench/run_all.py` (do not edit by hand; rerun it).",
        "",
        "## Machine",
        "",
        f"- date: {info['date']}",
        f"- CPU: {info['cpu']}, {info['cores']} cores available",
        f"- RAM: {info['ram_gb']:.1f} GB" if info["ram_gb"] else "- RAM: unknown",
        f"- OS: {info['os']}",
        f"- Python {info['python']}, pandas {info['pandas']}, numpy {info['numpy']}, pyarrow {info['pyarrow']}",
        f"- kweval at commit {info['commit']}" + (" (with uncommitted changes in kweval/)" if info["dirty"] else ""),
        "",
        "## Lexical evaluation vs the notebooks' loop (DNLP data, 6 movies × 4 models)",
        "",
        "The commands are timed as whole processes (start-up, imports, reading the pickles, "
        f"evaluating, writing), taking turns in {len(lexical['round_ratios'])} rounds (each round: the notebook "
        f"loop once, "
        "then each kweval command twice), so that a shared machine's changing speed touches them alike. "
        "`bench/notebook_loop.py` restates seed 000's "
        "global weighted metrics and nDCG@5 and seed 001's per-review P/R/F1 for every movie × model, "
        "with the notebooks' own per-call structure.",
        "",
        "| command | best wall time | all runs (s) | peak RSS |",
        "| --- | ---: | --- | ---: |",
        f"| `{lexical['notebook_cmd']}` | {lexical['notebook']['wall_s']:.2f} s | {lexical['notebook']['all_s']} | "
        f"{lexical['notebook']['peak_rss_mb']:.0f} MB |",
        f"| `{lexical['kweval_cmd']}` | {lexical['kweval']['wall_s']:.3f} s | {lexical['kweval']['all_s']} | "
        f"{lexical['kweval']['peak_rss_mb']:.0f} MB |",
        f"| `{lexical['one_process_cmd']}` (one process) | {lexical['one_process']['wall_s']:.3f} s | "
        f"{lexical['one_process']['all_s']} | {lexical['one_process']['peak_rss_mb']:.0f} MB |",
        "",
        f"**Ratio: {lexical['ratio']:.1f}×** (best times; target ≥ {lexical['target_ratio']:.0f}×: "
        f"{'met' if lexical['met'] else 'NOT met'}); "
        f"the rounds' own ratios {lexical['round_ratios']}, median {lexical['median_round_ratio']:.1f}×. "
        f"By default kweval shares the movie files out over {lexical['jobs']} processes here (`--jobs auto`: one "
        f"per core); "
        f"held to one process it is {lexical['notebook']['wall_s'] / lexical['one_process']['wall_s']:.1f}× the "
        f"notebook loop "
        f"(rounds {lexical['round_ratios_one_process']}, median {lexical['median_round_ratio_one_process']:.1f}×). "
        "Peak RSS is per process (`ru_maxrss`, the largest of the processes).",
        "",
        "kweval's bytecode was written first (`python -m compileall kweval`): this environment sets "
        "PYTHONDONTWRITEBYTECODE, so an editable install would otherwise recompile kweval in every process."
        if lexical.get("bytecode_compiled")
        else "",
        "",
    ]
    if lexical.get("fuller"):
        out += [
            "For information only (not the issue-2 baseline): with seed 001's per-review weighted P/R/F1 as well "
            f"(`{lexical['fuller_cmd']}`, as its all-movies cell computes them) the notebook loop takes "
            f"{lexical['fuller']['wall_s']:.2f} s (1 run), "
            f"{lexical['fuller']['wall_s'] / lexical['kweval']['wall_s']:.1f}× kweval's time.",
            "",
        ]
    out += [
        "## Scale (synthetic data, `kweval synth`, "
        f"{scale['movies']} movies × {scale['models']} models, seed {scale['seed']})",
        "",
        "Each run is `python -m kweval evaluate DATA --out FILE --quiet` as a whole process "
        "(load + evaluate + aggregate + write); peak RSS is the child's `ru_maxrss`. On the DNLP layout "
        "kweval shares the movie files out over one process per core by default (`--jobs`), and `ru_maxrss` "
        "is then the largest of those processes; the in-process split below is always one process.",
        "",
        "| layout | reviews | prediction rows | best wall time | all runs (s) | peak RSS |",
        "| --- | ---: | ---: | ---: | --- | ---: |",
    ]
    for r in scale["rows"]:
        e = r["evaluate"]
        n_pred = r["profile"]["n_predictions"] if "profile" in r else r.get("n_predictions")
        shown = f"{n_pred:,}" if n_pred else ""
        out.append(
            f"| {r['layout']} | {r['reviews']:,d} | {shown} | {e['wall_s']:.2f} s | {e['all_s']} | "
            f"{e['peak_rss_mb']:.0f} MB |"
        )
    out += ["", "Ratios for 10× the reviews:", ""]
    for q in scale["ratios"]:
        out.append(f"- {q['layout']}: {q['from']:,d} → {q['to']:,d} reviews: time ×{q['ratio']:.2f}")
    out += ["", "Targets:", ""]
    for name, (value, ok) in scale["checks"].items():
        out.append(f"- {name}: {value} — {'met' if ok else '**NOT met**'}")
    profiled = [r for r in scale["rows"] if "profile" in r]
    if profiled:
        stages = list(dict.fromkeys(k for r in profiled for k in r["profile"]["stages_s"]))
        out += [
            "",
            "### Where the time goes (one in-process run of the Python API, seconds)",
            "",
            "`python bench/bench_scale.py --profile DATA`, timed with `time.perf_counter` (no number changed): "
            "import (kweval and pandas); load (`load_dataset`); gt (cleaning the GT); matching (time inside "
            "`candidate_table` and `assign_matches_table`, wrapped for this run: candidate GT keywords of each "
            "distinct keyword, one-to-one assignment); metrics (per-review metrics, scores and keywords tables, "
            "coverage, skipped); cleaning (the rest of `evaluate`: grouping by review × model, ordering, "
            "normalizing, de-duplicating, output buffers); aggregate; write (render + write the CSV).",
            "",
            "| layout | reviews | " + " | ".join(stages) + " | total | peak RSS |",
            "| --- | ---: | " + " | ".join("---:" for _ in stages) + " | ---: | ---: |",
        ]
        for r in profiled:
            p = r["profile"]
            cells = " | ".join(f"{p['stages_s'].get(s, 0.0):.2f}" for s in stages)
            out.append(f"| {r['layout']} | {r['reviews']:,d} | {cells} | {p['total_s']:.2f} | {p['peak_rss_mb']} MB |")
    out += ["", "### Commands", "", "```"]
    for r in scale["rows"]:
        d = r["data"]
        note = f"  # {d['synth_s']} s, peak {d['synth_rss_mb']} MB" if "synth_s" in d else ""
        out.append(f"{d['cmd']}{note}")
        if "synth_log" in d:
            out.append(f"#   {d['synth_log']}")
    for r in scale["rows"]:
        out.append(r["evaluate"]["cmd"])
    out.append("```")
    for o in others:
        out += [
            "",
            f"## {o['name']}",
            "",
            f"`{o['cmd']}` (exit {o['rc']}, {o['wall_s']:.1f} s)",
            "",
            "```",
            o["stdout"] or "(no output)",
            "```",
        ]
        if o["rc"] != 0 and o["stderr"]:
            out += ["", "stderr (tail):", "", "```", o["stderr"], "```"]
    missing = [n for n in OPTIONAL if n not in {o["name"] for o in others}]
    if missing:
        out += ["", "Not run (not present yet): " + ", ".join(f"`bench/{n}`" for n in missing) + "."]
    out += ["", f"All benchmarks took {total_s:.0f} s.", ""]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="skip the 1M-review run")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", default=str(BENCH / "RESULTS.md"))
    args = parser.parse_args(argv)
    start = time.perf_counter()
    info = machine()
    print(
        f"machine: {info['cpu']}, {info['cores']} cores, {info['ram_gb']:.1f} GB; Python {info['python']}, pandas "
        f"{info['pandas']}"
    )
    print("== lexical ==", flush=True)
    lexical = bench_lexical.run(repeat=args.repeat)
    print(bench_lexical.report(lexical), flush=True)
    print("== scale ==", flush=True)
    sizes = (10_000, 100_000) if args.quick else (10_000, 100_000, 1_000_000)
    scale = bench_scale.run(sizes=sizes, repeat=args.repeat)
    print(bench_scale.report(scale), flush=True)
    others = []
    for name in OPTIONAL:
        res = run_optional(name)
        if res is not None:
            print(f"== {name} (exit {res['rc']}) ==\n{res['stdout']}", flush=True)
            others.append(res)
    text = render(info, lexical, scale, others, time.perf_counter() - start)
    Path(args.out).write_text(text, encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
