"""Orchestration benchmarks (prints a table, writes benchmarks/results.json). Run from the project root:

    python benchmarks/orchestration.py overhead    # ms per trivial stage: Prefect+Ray vs local loop vs direct calls
    python benchmarks/orchestration.py cached      # fully cached `paperdag run all` vs no-op `dvc repro`
    python benchmarks/orchestration.py parallel    # `run all --profile smoke --force`: Ray in parallel vs one by one
    python benchmarks/orchestration.py tracking    # cost of tracking where users feel it, as ratios (issue targets)

`cached` and `tracking` compare no-ops on an up-to-date workspace (`paperdag run all`, then `dvc repro`). On a
workspace where only some papers were run they measure those papers, the same set for both tools
(`paperdag run <papers>` vs `dvc repro --glob "<paper>-*" ...`); name papers after the mode to choose the set.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results.json"
BIN = Path(sys.executable).parent


def _record(name: str, rows: dict, merge: bool = False) -> None:
    """Record ``rows`` as results[name] (with the time and CPU count); ``merge`` keeps the rows of the previous record
    that ``rows`` does not name (a run over some papers updates theirs), ``measured_at`` then being the latest."""
    results = json.loads(RESULTS.read_text()) if RESULTS.is_file() else {}
    kept = results.get(name, {}) if merge else {}
    results[name] = kept | rows | {"measured_at": time.strftime("%Y-%m-%d %H:%M"), "cpus": os.cpu_count()}
    RESULTS.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
    width = max(len(k) for k in rows)
    print(f"\n{name}")
    for k, v in rows.items():
        print(f"  {k:<{width}}  {v}")


def overhead(repeats: int = 3) -> None:
    """Median ms per stage of a 21-stage trivial DAG, warm (Ray started, Prefect API up, modules imported), and the
    marginal cost of one more stage (21- vs 6-stage DAG), which excludes a Prefect flow run's fixed cost."""
    os.environ.update(PAPERDAG_EXTRA_PIPELINES="benchmarks.trivial_pipeline", PYTHONPATH=str(ROOT))
    sys.path.insert(0, str(ROOT))
    from benchmarks.trivial_pipeline import PIPELINE, SMALL, Params, work
    from paperdag.dag import register
    from paperdag.ray_exec import connect
    from paperdag.runs import Execution, drive
    from paperdag.stage import StageContext
    from paperdag.testing import make_project

    register(SMALL)
    n = len(PIPELINE.stages)
    project = make_project(Path(tempfile.mkdtemp()) / "proj", "bench_trivial:\n  seed: 0\nbench_small:\n  seed: 0\n")
    os.chdir(project.root)
    connect()
    from flows.papers import run_execution

    def timed(fn, stages: int = n) -> float:
        samples = []
        for _ in range(repeats + 1):  # the first call warms up
            t0 = time.perf_counter()
            fn()
            samples.append(time.perf_counter() - t0)
        return statistics.median(samples[1:]) / stages * 1000

    def direct() -> None:
        for stage in PIPELINE.stages:
            out = Path(tempfile.mkdtemp())
            work(StageContext(Params(seed=0), out, np.random.default_rng(0), outputs=stage.outputs))

    rows = {"stages": n, "direct call ms/stage": round(timed(direct), 2)}
    for tracking in ("off", "on"):
        os.environ["PAPERDAG_TRACKING"] = tracking
        rows[f"local loop, tracking {tracking}, ms/stage"] = round(timed(
            lambda: drive(Execution.open(["bench_trivial"], force=True, trigger="benchmark"))), 2)
        big = timed(lambda: run_execution(Execution.open(["bench_trivial"], force=True, trigger="benchmark")))
        small = timed(lambda: run_execution(Execution.open(["bench_small"], force=True, trigger="benchmark")),
                      len(SMALL.stages))
        rows[f"Prefect+Ray, tracking {tracking}, ms/stage"] = round(big, 2)
        rows[f"Prefect+Ray, tracking {tracking}, marginal ms/stage"] = round(
            (big * n - small * len(SMALL.stages)) / (n - len(SMALL.stages)), 2)
    _record("overhead", rows)


def _wall(cmd: list[str], repeats: int = 3, cwd: Path = ROOT) -> float:
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        subprocess.run(cmd, cwd=cwd, check=True, capture_output=True, env={**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}"})
        samples.append(time.perf_counter() - t0)
    return round(statistics.median(samples), 2)


def cached_papers(names: list[str]) -> tuple[list[str], int, bool]:
    """The named papers (default: every paper whose default-profile stages are all in the store), their stage count,
    and whether they are every paper; a named paper with a stage to compute is an error (the benchmark times
    no-ops)."""
    from paperdag.runs import Execution

    execution = Execution.open(names or ["all"], track=False)
    stale = {p.paper for p in execution.pending()}
    if names and stale:
        raise SystemExit(f"not fully cached (run them first): {', '.join(sorted(stale))}")
    papers = [p.slug for p in execution.pipelines if p.slug not in stale]
    if not papers:
        raise SystemExit("no paper is fully cached: run `paperdag run all`, then `dvc repro`")
    return papers, sum(p.run for p in execution.plans if p.paper in papers), not names and not stale


def _noops(papers: list[str], every: bool) -> tuple[list[str], list[str]]:
    """`paperdag run <papers>` and the `dvc repro` of the same stages (`run all` and a plain `dvc repro` when the
    papers are ``every`` paper)."""
    run = [str(BIN / "paperdag"), "run", *(["all"] if every else papers)]
    repro = [str(BIN / "dvc"), "repro", *([] if every else ["--glob", *(f"{p}-*" for p in papers)])]
    return run, repro


def cached(names: list[str]) -> None:
    """Both no-ops on an up-to-date workspace (run `dvc repro` first)."""
    papers, stages, every = cached_papers(names)
    run, repro = _noops(papers, every)
    rows = {
        "papers": " ".join(papers), "stages": stages,
        "dvc repro (no-op) s": _wall(repro),
        "paperdag run (cached, tracked) s": _wall(run),
    }
    os.environ["PAPERDAG_TRACKING"] = "off"
    rows["paperdag run (cached, untracked) s"] = _wall(run)
    _record("cached", rows)


def parallel() -> None:
    """`run all --profile smoke --force` in a scratch project: Prefect+Ray (parallel) vs --local (one by one)."""
    from paperdag.testing import make_project

    os.environ["PAPERDAG_TRACKING"] = "off"
    scratch = make_project(Path(tempfile.mkdtemp()) / "proj").root
    base = [str(BIN / "paperdag"), "run", "all", "--profile", "smoke", "--force"]
    ray_s = _wall(base, repeats=1, cwd=scratch)
    local_s = _wall([*base, "--local"], repeats=1, cwd=scratch)
    _record("parallel", {"Ray parallel s": ray_s, "local sequential s": local_s,
                         "speedup": round(local_s / ray_s, 2)})


def tracking(names: list[str]) -> None:
    """Targets: a store hit through `paperdag stage` (what `dvc repro` runs) at most 5x a bare `import paperdag.cli`;
    a fully cached `paperdag run` with MLflow tracking on no slower than `dvc repro`'s no-op of the same stages."""
    os.environ["PAPERDAG_TRACKING"] = "on"
    papers, stages, every = cached_papers(names)
    run, repro = _noops(papers, every)
    bare = _wall([sys.executable, "-c", "import paperdag.cli"], repeats=5)
    stage = _wall([str(BIN / "paperdag"), "stage", papers[0], "evaluate"], repeats=5)
    run_s, repro_s = _wall(run), _wall(repro)
    _record("tracking", {
        "papers": " ".join(papers), "stages": stages,
        "bare import s": bare, f"paperdag stage {papers[0]} evaluate (store hit) s": stage,
        "stage hit / bare import": round(stage / bare, 2),
        "paperdag run (cached, tracked) s": run_s, "dvc repro (no-op) s": repro_s,
        "run cached tracked / dvc repro no-op": round(run_s / repro_s, 2),
    })


if __name__ == "__main__":
    modes = {"overhead": overhead, "cached": cached, "parallel": parallel, "tracking": tracking}
    mode = sys.argv[1] if len(sys.argv) > 1 else "overhead"
    if mode in ("cached", "tracking"):
        modes[mode](sys.argv[2:])
    else:
        modes[mode]()
