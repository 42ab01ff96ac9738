"""Fates under the keyphrase presets (`kweval.keyphrase.fates.preset_failure_table`): the speed trick against the
definition, in CPU seconds, on a docsutf8 collection with two extractors' predictions.

The explorer's marks and the Failures page under pke / kpeval / meng read every prediction's and gold phrase's
fate.  The definitions run the preset's scorer on every prefix of each list and on each (gold phrase, match) pair
(`fates.REFERENCE`, ~n² work per document); the speed trick reads the same off one run per document × model
(`fates.ONE_RUN`, `fates.ScoredRun`).  Per preset: the least CPU seconds of `--repeat` runs of each (after one
warm-up run that fills the stem and phrase caches), their ratio, and whether the two tables are equal.  CPU time
(`time.process_time`), since the machine may be shared; the load average is printed beside.

    python bench/bench_fates.py [--data ../shared/data/keyphrase/SemEval2017] [--predictions DIR] [--k 5] [--repeat 3]

Without ``--predictions`` (a folder holding yake.jsonl and firstphrases.jsonl), `kweval extract` makes them in a
temporary folder first (not timed).
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = Path(os.environ.get("KWEVAL_SHARED") or REPO.parent / "shared") / "data" / "keyphrase" / "SemEval2017"
EXTRACTORS = ("yake", "firstphrases")
PRESETS = ("pke", "kpeval", "meng")

from timing import best_of  # noqa: E402  (bench/timing.py, beside this script)


def predictions(data: Path, folder: Path) -> dict[str, str]:
    """{extractor: JSONL path} in `folder`, made with `kweval extract` where missing."""
    from kweval.cli import main

    files = {}
    for extractor in EXTRACTORS:
        path = folder / f"{extractor}.jsonl"
        if not path.exists() and main(["extract", str(data), "--extractor", extractor, "--out", str(path)]) != 0:
            raise SystemExit(f"kweval extract {data} --extractor {extractor} failed")
        files[extractor] = str(path)
    return files


def bench(data: Path, files: dict[str, str], k: int, repeat: int) -> None:
    import pandas as pd

    from kweval.data import load_dataset
    from kweval.keyphrase import fates

    dataset = load_dataset(str(data), predictions=files)
    print(f"{data.name}: {len(dataset.reviews)} documents × {len(files)} models, k={k}")
    total = {"reference": 0.0, "trick": 0.0}
    for preset in PRESETS:
        fates.preset_failure_table(dataset, preset, k)  # warm-up: stems and phrase readings cached
        load = os.getloadavg()[0]
        table = functools.partial(fates.preset_failure_table, dataset, preset, k)
        ref_s, ref = best_of(functools.partial(table, reading=fates.REFERENCE), repeat, time.process_time)
        fast_s, fast = best_of(table, repeat, time.process_time)
        same = ref.equals(fast)
        if not same:
            pd.testing.assert_frame_equal(fast, ref)
        total["reference"] += ref_s
        total["trick"] += fast_s
        print(
            f"  {preset:7s} {len(fast):7d} rows  reference {ref_s:6.2f} s cpu  one run {fast_s:6.2f} s cpu  "
            f"ratio {ref_s / fast_s:5.1f}×  identical {same}  load avg {load:4.2f}"
        )
    print(
        f"  all     reference {total['reference']:6.2f} s cpu  one run {total['trick']:6.2f} s cpu  "
        f"ratio {total['reference'] / total['trick']:5.1f}×"
    )
    print(f"command: {' '.join([Path(sys.executable).name, *sys.argv])}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--predictions", type=Path, help="a folder holding yake.jsonl and firstphrases.jsonl")
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3, help="runs of each, the least CPU time reported")
    args = parser.parse_args()
    if not args.data.is_dir():
        print(f"no collection at {args.data}: nothing to measure")
        return
    if args.predictions is not None:
        args.predictions.mkdir(parents=True, exist_ok=True)
        bench(args.data, predictions(args.data, args.predictions), args.k, args.repeat)
        return
    with tempfile.TemporaryDirectory() as tmp:
        bench(args.data, predictions(args.data, Path(tmp)), args.k, args.repeat)


if __name__ == "__main__":
    main()
