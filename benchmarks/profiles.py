"""Each paper's profiles against their speed targets (README, "Fast"). Run from the project root:

    python benchmarks/profiles.py                   # every paper's default profile, from the store's past runs
    python benchmarks/profiles.py default mhc hamn  # the same for some papers
    python benchmarks/profiles.py smoke             # measured: every paper's smoke profile, forced, one at a time

Targets: a default profile in about 10 minutes on 2 CPU cores (``--target-s``, 600; a paper whose note argues that
nothing smaller reaches its regime is allowed 15, which the table marks), a smoke profile in seconds
(``--target-s`` for ``smoke``, 60).

``default`` computes nothing. It reads what ``paperdag list`` reads: each stage's latest recorded wall time in the
store (``timings.expected``), replayed with the run's scheduler on this machine's CPUs (``timings.simulate``), so the
estimate is a full run from scratch, as good as the history (times recorded under load overstate it). A paper
some of whose stages have no history here is listed as such and not judged. ``smoke`` runs
``paperdag run PAPER -p smoke --local --force`` with tracking off, one paper after another, and times it.

Prints a table, records it in benchmarks/results.json (``profiles default`` / ``profiles smoke``; a run that names
papers updates their rows and keeps the others') and exits 1 when a judged time is over its target.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from orchestration import BIN, ROOT, _record  # noqa: E402 - the shared results file

LONG_S = 900.0  # the 15 minutes a paper may take where its note argues nothing smaller reaches the regime


def default_estimates(papers: list[str], cpus: int) -> dict[str, tuple[float | None, int, int]]:
    """Paper -> (expected seconds of a full default run on ``cpus`` CPUs or None without history, stages without
    history, stages)."""
    from paperdag.dag import registry
    from paperdag.engine import load_pipeline_params, plan_pipeline
    from paperdag.params import read_params_file
    from paperdag.project import Project
    from paperdag.timings import Estimate, estimates

    project = Project.find(ROOT)
    data = read_params_file(project.params_path)
    store = project.store()
    out = {}
    for slug in papers:
        pipeline = registry()[slug]
        plans = plan_pipeline(pipeline, load_pipeline_params(project, pipeline, "default", data), store)
        for plan in plans:
            plan.profile = "default"
        est = Estimate(plans, estimates(store, plans), cpus)
        known = len(plans) - est.unknown
        out[slug] = ((max(est.finishes(set(), {}).values(), default=0.0) if known else None), est.unknown, len(plans))
    return out


def smoke_times(papers: list[str]) -> dict[str, tuple[float, int]]:
    """Paper -> (wall seconds, exit code) of ``paperdag run PAPER -p smoke --local --force``, tracking off."""
    env = os.environ | {"PAPERDAG_TRACKING": "off"}
    out = {}
    for slug in papers:
        t0 = time.perf_counter()
        rc = subprocess.run([str(BIN / "paperdag"), "run", slug, "-p", "smoke", "--local", "--force"], cwd=ROOT,
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
        out[slug] = (time.perf_counter() - t0, rc)
        print(f"  {slug}: {out[slug][0]:.0f} s (exit {rc})", flush=True)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", nargs="?", choices=["default", "smoke"], default="default")
    parser.add_argument("papers", nargs="*", help="paper slugs (default: every paper)")
    parser.add_argument("--target-s", type=float, help="the target (default profile 600, smoke 60)")
    args = parser.parse_args()
    os.chdir(ROOT)
    from paperdag.dag import known_slugs

    papers = args.papers or sorted(known_slugs())
    unknown = sorted(set(papers) - set(known_slugs()))
    if unknown:
        print(f"error: unknown paper {', '.join(unknown)}", file=sys.stderr)
        return 2
    over: list[str] = []
    rows: dict[str, object] = {}
    if args.mode == "default":
        target = args.target_s or 600.0
        cpus = os.cpu_count() or 1
        for slug, (seconds, missing, n) in default_estimates(papers, cpus).items():
            if seconds is None or missing:
                rows[slug] = "no history in this store" if seconds is None else (
                    f"not judged: {n - missing} of {n} stages have history here (at least {seconds / 60:.1f} min)")
                continue
            mark = "ok" if seconds <= target else ("over (within 15 min)" if seconds <= LONG_S else "over")
            rows[slug] = f"{seconds / 60:.1f} min {mark}"
            over += [slug] if seconds > target else []
        rows |= {"cpus_simulated": cpus, "target_s": target}
    else:
        target = args.target_s or 60.0
        for slug, (seconds, rc) in smoke_times(papers).items():
            rows[slug] = f"{seconds:.0f} s " + ("ok" if rc == 0 and seconds <= target else
                                               f"exit {rc}" if rc else "over")
            over += [slug] if rc or seconds > target else []
        rows["target_s"] = target
    _record(f"profiles {args.mode}", rows, merge=bool(args.papers))
    if over:
        print(f"\nover target ({target:.0f} s): {', '.join(over)}")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
