"""`kweval failures` on the DNLP data as whole processes: wall time, CPU time and peak RSS; CSV, Parquet, --summary.

Target (issue 21): DNLP (6 movies, 9,362 reviews, 4 models, movie-level GT
lists of 272-449 keywords: 13.6 million rows) within 20 s and 3 GB peak RSS
on 2 cores.  Each run is a `python -m kweval failures` child: its wall
seconds, CPU seconds (user + system) and own ru_maxrss (`os.wait4`).  The
load average is printed beside, since the machine may be shared: on a loaded
machine the wall time grows, the CPU time much less.

    python bench/bench_failures.py [--data $KWEVAL_SHARED/data/dnlp/Dataset] [--repeat 1]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DNLP = Path(os.environ.get("KWEVAL_SHARED") or REPO.parent / "shared") / "data" / "dnlp" / "Dataset"
TARGET_S, TARGET_MB = 20.0, 3072.0


def run_timed(cmd: list[str]) -> dict:
    """Run `cmd` as a child: wall and CPU seconds, peak RSS (MB), exit status, stderr."""
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    stderr = proc.stderr.read() if proc.stderr else b""
    _, status, usage = os.wait4(proc.pid, 0)
    return {
        "wall_s": time.perf_counter() - start,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "peak_rss_mb": usage.ru_maxrss / 1024,
        "rc": os.waitstatus_to_exitcode(status),
        "stderr": stderr.decode(errors="replace"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default=str(DNLP))
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for name, extra in (("csv", []), ("parquet", []), ("csv", ["--summary"])):
            out = Path(tmp) / f"failures.{name}"
            cmd = [sys.executable, "-m", "kweval", "failures", args.data, "--out", str(out), "--quiet", *extra]
            for _ in range(args.repeat):
                load = os.getloadavg()[0]
                res = run_timed(cmd)
                if res["rc"] != 0:
                    print(res["stderr"], file=sys.stderr)
                    raise SystemExit(f"failed: {' '.join(cmd)}")
                ok = res["wall_s"] <= TARGET_S and res["peak_rss_mb"] <= TARGET_MB
                label = f"{name}{' --summary' if extra else ''}"
                print(
                    f"failures {label:15s} {res['wall_s']:6.1f} s (cpu {res['cpu_s']:5.1f} s)  "
                    f"peak {res['peak_rss_mb']:6.0f} MB  file {out.stat().st_size / 1e6:8.1f} MB  "
                    f"load avg {load:4.2f}  {'ok' if ok else 'OVER TARGET'} "
                    f"(target {TARGET_S:.0f} s, {TARGET_MB / 1024:.0f} GB)  {res['stderr'].strip().splitlines()[-1]}"
                )


if __name__ == "__main__":
    main()
