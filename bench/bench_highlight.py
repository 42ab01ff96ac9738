"""Explorer highlighting cost: dashboard.highlight.match_spans (word index) vs the former regex-per-keyword method.

Prints, for a ~1,000-character review and keywords of growing length (a hostile upload's
2,500-character keyword and beyond), the time of each method, their ratio, and whether both
find the same spans.  Usage: python bench/bench_highlight.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dashboard.highlight import match_spans  # noqa: E402
from tests.highlight_reference import regex_spans  # noqa: E402  (the former method)


def best_of(fn, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    text = "A fraud, w7 and w199999. " * 40
    print("## Explorer highlighting: word index vs regex per keyword\n")
    print(f"Command: `python bench/bench_highlight.py`; review text: {len(text)} chars\n")
    print("| keyword chars | word index ms | regex ms | ratio | same spans |")
    print("| ---: | ---: | ---: | ---: | --- |")
    ratios, all_same = [], True
    for n_words in (10, 400, 4000):
        keyword = " ".join(f"w{i}" for i in range(n_words)) + " fraud"
        new = best_of(lambda keyword=keyword: match_spans(text, [keyword]))
        old = best_of(lambda keyword=keyword: regex_spans(text, [keyword]), repeat=1)
        same = [s[:2] for s in match_spans(text, [keyword])] == regex_spans(text, [keyword])
        ratios.append(old / new)
        all_same &= same
        print(f"| {len(keyword)} | {new * 1000:.2f} | {old * 1000:.1f} | {old / new:.0f}x | {same} |")
    ok = all_same and min(ratios[1:]) >= 10
    print(
        f"\nTarget: the same spans, and ≥ 10x faster than the regex method for keywords of 1,000+ characters: "
        f"{'met' if ok else 'not met'}."
    )


if __name__ == "__main__":
    main()
