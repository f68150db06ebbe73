"""How long a plan will take on this machine, from the stage timings the store already holds.

Each store entry's run.json records its stage's wall time, the profile it ran under and a hash of its params slice.
A stage's expected time (``expected``) is its own entry's, where the store holds the same key (a forced recompute);
else the latest run of the same stage with the same params slice (its code or an upstream stage changed); else the
latest run of the same stage under the same profile; else it has no history. Sizes are not extrapolated: a stage
whose params changed is estimated from its last run under the profile, as recorded.

``simulate`` replays the scheduling loop (``runs.drive``) on those times: a stage starts once its upstream stages
have finished and its CPUs are free beside the running ones (one stage at a time when ``cpus`` is None: ``--local``
or ``paperdag stage``), in declaration order. Its last finish is the plan's expected wall time; during a run the
stages already running count with what is left of their expected time.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from paperdag.engine import StagePlan
from paperdag.provenance import canonical_sha256
from paperdag.store import Store


def _seconds(run: dict[str, Any]) -> float | None:
    seconds = (run.get("timing") or {}).get("seconds")
    return float(seconds) if isinstance(seconds, int | float) else None


def expected(plan: StagePlan, history: dict[str, dict[str, Any]]) -> float | None:
    """The expected seconds of ``plan`` from ``history`` (key -> run.json of its stage's entries; module
    docstring), or None without one."""
    if plan.key in history and _seconds(history[plan.key]) is not None:
        return _seconds(history[plan.key])
    params = canonical_sha256(plan.params)
    for same in (lambda r: r.get("params_sha256") == params, lambda r: r.get("profile") == plan.profile):
        runs = [r for r in history.values() if same(r) and _seconds(r) is not None]
        if runs:
            return _seconds(max(runs, key=lambda r: str((r.get("timing") or {}).get("started", ""))))
    return None


def estimates(store: Store, plans: Iterable[StagePlan]) -> dict[str, float | None]:
    """Label -> expected seconds of each plan, from the store's past runs of its stage."""
    return {p.label: expected(p, store.past_runs(p.paper, p.name)) for p in plans}


@dataclass(frozen=True)
class Job:
    """A stage to simulate: its expected seconds (0 without history), CPUs and upstream labels."""

    label: str
    seconds: float
    cpus: float
    upstream: tuple[str, ...]


def simulate(jobs: list[Job], cpus: float | None, running: dict[str, float] | None = None) -> dict[str, float]:
    """Label -> expected finish, in seconds from now, of every job (in declaration order), on ``cpus`` CPUs (None:
    one job at a time). ``running``: label -> seconds it has run already (it finishes at the rest of its expected
    time, at least now). Upstream labels that are not jobs count as finished."""
    running = running or {}
    labels = {j.label for j in jobs}
    active = [(max(j.seconds - running[j.label], 0.0), j) for j in jobs if j.label in running]
    waiting = [j for j in jobs if j.label not in running]
    finish: dict[str, float] = {}
    now = 0.0
    while waiting or active:
        for job in list(waiting):
            ready = all(u in finish or u not in labels for u in job.upstream)
            used = sum(j.cpus for _, j in active)
            fits = not active or (cpus is not None and used + job.cpus <= cpus)
            if ready and fits:
                waiting.remove(job)
                active.append((now + job.seconds, job))
        if not active:  # a job waits on one that never runs: nothing more can finish
            break
        now = min(end for end, _ in active)
        for end, job in [a for a in active if a[0] == now]:
            finish[job.label] = end
            active.remove((end, job))
    return finish


def clock(seconds: float) -> str:
    """``h:mm:ss`` (``m:ss`` under an hour), as progress lines print elapsed time."""
    s = int(round(seconds))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


def human(seconds: float) -> str:
    """``40 s``, ``12 min``, ``3.1 h``."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.0f} min" if seconds < 5400 else f"{seconds / 3600:.1f} h"


@dataclass
class Estimate:
    """The expected durations of one execution's stages and the CPUs they share (None: one at a time)."""

    plans: list[StagePlan]
    seconds: dict[str, float | None]
    cpus: float | None

    @classmethod
    def of(cls, store: Store, plans: list[StagePlan], cpus: float | None) -> Estimate:
        pending = [p for p in plans if p.run and not p.cached]
        return cls(pending, estimates(store, pending), cpus)

    def total(self) -> str:
        """The expected wall time of all the plans, ``~T`` (``~T+`` where some have no history; ``-`` for none)."""
        if not self.plans or self.unknown == len(self.plans):
            return "-"
        return f"~{human(max(self.finishes(set(), {}).values(), default=0.0))}{'+' if self.unknown else ''}"

    @property
    def unknown(self) -> int:
        """Stages without history (their time counts as 0: the estimate is then a lower bound)."""
        return sum(v is None for v in self.seconds.values())

    def finishes(self, settled: set[str], running: dict[str, float]) -> dict[str, float]:
        """Label -> expected finish from now of each stage not yet ``settled`` (``running``: label -> seconds run)."""
        jobs = [Job(p.label, self.seconds[p.label] or 0.0, p.resources.cpus,
                    tuple(f"{p.paper}.{u}" for u in p.upstream)) for p in self.plans if p.label not in settled]
        return simulate(jobs, self.cpus, running)

    def paper_line(self, cached: set[str]) -> str:
        """What ``paperdag list`` says of a paper whose stages are all in ``plans``: the expected time of its stale
        stages (those not ``cached``) and of a full run, or that there is no history."""
        stale = [p for p in self.plans if p.label not in cached]
        left = Estimate(stale, {p.label: self.seconds[p.label] for p in stale}, self.cpus).total()
        now = "all cached" if not stale else f"{len(stale)} stale" + (f", {left} to run" if left != "-" else "")
        full = self.total()
        if full == "-":
            return f"{now}; no past runs here to estimate from"
        return f"{now}; a full run {full} on {self.cpus:g} CPUs from past runs"

    def plan_line(self, cached: int) -> str:
        """``N stages to run, ~T on C CPUs from past runs; k cached`` (or that there is no history; ``0 to run, k
        cached`` when everything is cached)."""
        n = len(self.plans)
        if not n:
            return f"0 to run, {cached} cached"
        if self.unknown == n:
            return f"{n} stages to run, no past runs of them in the store to estimate from; {cached} cached"
        where = "one at a time" if self.cpus is None else f"on {self.cpus:g} CPUs"
        partial = f" ({self.unknown} of them without history: more)" if self.unknown else ""
        return f"{n} stages to run, {self.total().rstrip('+')} {where} from past runs{partial}; {cached} cached"
