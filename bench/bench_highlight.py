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
    print(f"review text: {len(text)} chars")
    print(f"{'keyword chars':>14} {'word index ms':>14} {'regex ms':>10} {'ratio':>7} same")
    for n_words in (10, 400, 4000):
        keyword = " ".join(f"w{i}" for i in range(n_words)) + " fraud"
        new = best_of(lambda: match_spans(text, [keyword]))
        old = best_of(lambda: regex_spans(text, [keyword]), repeat=1)
        same = [s[:2] for s in match_spans(text, [keyword])] == regex_spans(text, [keyword])
        print(f"{len(keyword):>14} {new * 1000:>14.2f} {old * 1000:>10.1f} {old / new:>6.0f}x {same}")


if __name__ == "__main__":
    main()
