"""The test suite's wall time against its target (well under 20 minutes on 2 cores). Run from the project root:

    python benchmarks/suite.py                # the README's command: two pytest-xdist workers, every test
    python benchmarks/suite.py --workers 0    # one process, for comparison
    python benchmarks/suite.py --log ci.log   # only summarise a log written by `bash .ci/run` (no run)

Prints the wall time, each test file's summed test time (setup + call + teardown, from pytest's JUnit XML; on a
log, from its "slowest durations" section) and the files that take the most, and records them in
benchmarks/results.json under "suite". Exits 1 when the wall time is over ``--target-s`` (default 1,200 s), so a
growing suite is noticed before CI's 90-minute limit.
"""

from __future__ import annotations

import argparse
import collections
import re
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from orchestration import ROOT, _record  # noqa: E402 - the shared results file

DURATION = re.compile(r"^([0-9.]+)s (?:setup|call|teardown) +([^:]+)::")
WALL = re.compile(r" in ([0-9.]+)s")


def per_file_from_junit(path: Path) -> dict[str, float]:
    """Seconds per test file: the sum of its test cases' ``time`` (pytest's setup + call + teardown)."""
    totals: dict[str, float] = collections.defaultdict(float)
    for case in ET.parse(path).iter("testcase"):
        parts = case.get("classname", "").split(".")  # tests.papers.test_x, or tests.test_y.TestClass
        if parts[-1][:1].isupper():
            parts = parts[:-1]
        totals["/".join(parts) + ".py"] += float(case.get("time", 0))
    return dict(totals)


def per_file_from_log(text: str) -> tuple[dict[str, float], float | None]:
    """Seconds per test file from a log's "slowest durations" lines, and the wall time of its summary line."""
    totals: dict[str, float] = collections.defaultdict(float)
    for line in text.splitlines():
        if m := DURATION.match(line):
            totals[m.group(2)] += float(m.group(1))
    walls = [float(m.group(1)) for line in text.splitlines() if "passed" in line and (m := WALL.search(line))]
    return dict(totals), (walls[-1] if walls else None)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2, help="pytest-xdist workers (0: one process)")
    parser.add_argument("--log", type=Path, help="summarise this log instead of running the suite")
    parser.add_argument("--target-s", type=float, default=1200.0)
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args()
    if args.log:
        files, wall = per_file_from_log(args.log.read_text())
        rc = 0
    else:
        with tempfile.TemporaryDirectory() as tmp:
            junit = Path(tmp) / "junit.xml"
            t0 = time.perf_counter()
            rc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", str(args.workers), "--dist", "loadfile",
                                 f"--junitxml={junit}"], cwd=ROOT).returncode
            wall = time.perf_counter() - t0
            files = per_file_from_junit(junit)
    ranked = sorted(files.items(), key=lambda kv: -kv[1])
    rows = {"wall_s": None if wall is None else round(wall, 1), "target_s": args.target_s,
            "workers": "log" if args.log else args.workers, "pytest_exit": rc,
            # a log lists only its slowest durations; the JUnit report has every test
            ("listed_durations_s" if args.log else "test_time_s"): round(sum(files.values()), 1),
            **{f"file {name}": round(seconds, 1) for name, seconds in ranked[:args.top]}}
    _record("suite", rows)
    return 1 if rc or (wall is not None and wall > args.target_s) else 0


if __name__ == "__main__":
    sys.exit(main())
