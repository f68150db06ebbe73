"""A team's shared store: ``pull`` the shared root's outputs for the current keys into ``artifacts/``, ``push``
the local store's entries the shared root lacks, and ``compare`` the local store with the shared root key by key.

The shared root is ``PAPERDAG_ARTIFACT_ROOT`` (``s3://bucket/prefix?endpoint_override=...``); the local store is the
project's own ``artifacts/.store``, where runs compute when no shared root is set. ``pull`` also reads a folder root
(``file:///path``, e.g. the one a GPU node without network collected its entries in, brought back): its entries are
copied into the local store, so the project stays cached once the folder is gone. Keys are the ones ``run`` would use
(same papers, ``--profile`` and ``--only`` selection), so a pulled project is fully cached for ``run`` and clean for
``dvc status``.
"""

from __future__ import annotations

import json
import math
import shutil
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from paperdag.dag import known_slugs
from paperdag.engine import StagePlan, load_pipeline_params, plan_pipeline, publish_metrics
from paperdag.environment import differences
from paperdag.errors import UsageError
from paperdag.params import check_sections, read_params_file
from paperdag.project import Project
from paperdag.runs import resolve_papers
from paperdag.store import DOWNLOADS, MANIFEST, Store, materialize

PROGRESS_EVERY_S = 2.0


@dataclass
class PaperTransfer:
    """What a pull or push did for one paper."""

    paper: str
    moved: list[str] = field(default_factory=list)  # stages transferred
    present: list[str] = field(default_factory=list)  # already where they should be
    missing: list[str] = field(default_factory=list)  # in neither place the command reads from
    bytes: int = 0

    def line(self, verb: str) -> str:
        missing = f"; missing: {', '.join(self.missing)}" if self.missing else ""
        return (f"  {self.paper}: {len(self.moved)} {verb} ({_mb(self.bytes)}), {len(self.present)} already "
                f"there{missing}")


def _mb(n: int) -> str:
    return f"{n / 1e6:.1f} MB"


def _echo(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


class _Progress:
    """``[paper.stage] <verb> x/y MB (elapsed)`` at most every ``PROGRESS_EVERY_S`` while one stage transfers."""

    def __init__(self, label: str, verb: str, total: int):
        self.label, self.verb, self.total, self.done = label, verb, total, 0
        self.t0 = self.last = time.monotonic()

    def __call__(self, n: int) -> None:
        self.done += n
        now = time.monotonic()
        if now - self.last >= PROGRESS_EVERY_S:
            self.last = now
            _echo(f"[{self.label}] {self.verb} {_mb(self.done)}/{_mb(self.total)} ({now - self.t0:.0f}s)")


def selection(project: Project, papers: Sequence[str], profile: str, only: Sequence[str],
              store: Store) -> list[list[StagePlan]]:
    """The plans ``run`` would make for this selection (keys and whether ``store`` holds each), per paper; with
    ``only``, just those stages (one paper)."""
    data = read_params_file(project.params_path)
    check_sections(data, known_slugs(), project.params_path)
    pipelines = resolve_papers(list(papers) or ["all"], data)
    if only and len(pipelines) != 1:
        raise UsageError("--only needs exactly one paper")
    out = []
    for p in pipelines:
        values = load_pipeline_params(project, p, profile, data)
        plans = plan_pipeline(p, values, store)
        out.append([plan for plan in plans if not only or plan.name in only])
    return out


def shared_store(project: Project, command: str, folder: bool = False) -> Store:
    """The configured shared root (a URI), probed, or with ``folder`` also a store folder other than the project's
    own; a one-line UsageError when none is set or the folder holds no store."""
    store = project.store()
    if store.remote:
        store.prepare()
        return store
    if not folder or store.base == local_store(project).base:
        also = ", or file:///path for a store folder brought back from another machine" if folder else ""
        raise UsageError(f"paperdag {command} needs the shared root: set PAPERDAG_ARTIFACT_ROOT=s3://bucket/prefix"
                         f"{also} (see README, \"Running it for a team\")")
    if not Path(store.base).is_dir():
        raise UsageError(f"artifact root {store.root!r} (PAPERDAG_ARTIFACT_ROOT) holds no store: expected {store.base} "
                         "(the folder a run with PAPERDAG_ARTIFACT_ROOT=file:///... filled)")
    return store


def local_store(project: Project) -> Store:
    """The project's own store (``artifacts/.store``), whatever the artifact root is set to."""
    return Store(project.artifacts, local_dir=project.artifacts)


def pull(project: Project, papers: Sequence[str], profile: str, only: Sequence[str]) -> list[PaperTransfer]:
    """Materialise the shared root's outputs for the current keys into ``artifacts/<paper>/<stage>`` (downloading
    what the local cache lacks; from a folder root, copying its entries into the local store) and publish each paper's
    metrics as ``run`` would; stages the root lacks are listed."""
    store, local = shared_store(project, "pull", folder=True), local_store(project)
    done = []
    for plans in selection(project, papers, profile, only, store):
        t = PaperTransfer(plans[0].paper if plans else "")
        for plan in plans:
            if not plan.cached:
                t.missing.append(plan.name)
                continue
            files = plan.manifest["files"]
            total = sum(m["bytes"] for m in files.values())
            with store.lock(plan.paper, plan.name, plan.key):
                if store.remote:
                    fresh = not (store.local_dir / DOWNLOADS / plan.paper / plan.name / plan.key / MANIFEST).is_file()
                    entry = store.local_path(plan.paper, plan.name, plan.key, _Progress(plan.label, "pulled", total))
                else:
                    entry, fresh = _import(store, local, plan)
                materialize(entry, project.view(plan.paper, plan.name), files)
            if plan.name == plan.pipeline.metrics_stage:
                publish_metrics(project, plan.pipeline, entry, profile, plan.key)
            (t.moved if fresh else t.present).append(plan.name)
            t.bytes += total if fresh else 0
        done.append(t)
    return done


def _import(folder: Store, local: Store, plan: StagePlan) -> tuple[Path, bool]:
    """The local store's entry of a plan the folder root holds, copied from there unless the local store already
    holds it (the caller holds the output's lock); returns (entry, whether it was copied)."""
    if local.lookup(plan.paper, plan.name, plan.key, outputs=plan.stage.outputs) is not None:
        return local.local_path(plan.paper, plan.name, plan.key), False
    source = folder.local_path(plan.paper, plan.name, plan.key)
    scratch = local.scratch(plan.paper, plan.name, plan.key)
    try:
        for rel in plan.manifest["files"]:
            (scratch / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source / rel, scratch / rel)
        local.commit(scratch, {k: v for k, v in plan.manifest.items() if k != "run"}, plan.manifest.get("run") or None)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return local.local_path(plan.paper, plan.name, plan.key), True


def push(project: Project, papers: Sequence[str], profile: str, only: Sequence[str]) -> list[PaperTransfer]:
    """Upload the local store's entries for the current keys that the shared root lacks (blobs, then the
    manifest); stages computed nowhere locally are listed."""
    from paperdag import remote

    shared, local = shared_store(project, "push"), local_store(project)
    done = []
    for plans in selection(project, papers, profile, only, shared):
        t = PaperTransfer(plans[0].paper if plans else "")
        for plan in plans:
            if plan.cached:
                t.present.append(plan.name)
                continue
            manifest = local.lookup(plan.paper, plan.name, plan.key, outputs=plan.stage.outputs)
            if manifest is None:
                t.missing.append(plan.name)
                continue
            files = manifest["files"]
            progress = _Progress(plan.label, "pushed", sum(m["bytes"] for m in files.values()))
            t.bytes += remote.upload_entry(shared.fs, shared.base, shared.entry_path(plan.paper, plan.name, plan.key),
                                           local.local_path(plan.paper, plan.name, plan.key), files, progress,
                                           root=shared.root)
            t.moved.append(plan.name)
        done.append(t)
    return done


@dataclass
class StageComparison:
    """One stage's local entry against the shared root's entry of the same key."""

    label: str
    state: str  # "both", "local only", "shared only", "neither"
    identical: bool | None = None  # every file byte-identical (same sha256)
    differing: list[str] = field(default_factory=list)  # files whose bytes differ
    metric: str = ""  # the summary metric that differs most
    rel_diff: float = 0.0  # its relative difference |a - b| / max(|a|, |b|)
    verdicts_identical: bool | None = None  # the metrics stage: every claim's verdict the same
    verdict_changes: list[str] = field(default_factory=list)
    environment: list[str] | None = None  # where the bytes differ: the fields of the environments that differ


def relative_difference(a: float, b: float) -> float:
    """|a - b| / max(|a|, |b|) (0 when both are 0 or equal; inf when exactly one is NaN)."""
    if a == b or (math.isnan(a) and math.isnan(b)):
        return 0.0
    if math.isnan(a) or math.isnan(b):
        return math.inf
    return abs(a - b) / max(abs(a), abs(b))


def _largest(a: dict[str, Any], b: dict[str, Any]) -> tuple[str, float]:
    """The numeric key of both mappings with the largest relative difference ("", 0 when none differs)."""
    best = ("", 0.0)
    for k in sorted(set(a) & set(b)):
        if isinstance(a[k], int | float) and isinstance(b[k], int | float) and not isinstance(a[k], bool):
            d = relative_difference(float(a[k]), float(b[k]))
            if d > best[1]:
                best = (k, d)
    return best


def _metrics_file(folder: Path) -> dict[str, Any]:
    try:
        return json.loads((folder / "metrics.json").read_text())
    except (OSError, ValueError):
        return {}


def compare(project: Project, papers: Sequence[str], profile: str, only: Sequence[str]) -> list[StageComparison]:
    """Every selected stage: which store holds it, whether the two entries are byte-identical (where they are not,
    which fields of the environments they were computed in differ: ``environment.differences``), the summary metric
    that moves most, and for the metrics stage whether the verdicts are identical (and the paper metric that moves
    most)."""
    shared, local = shared_store(project, "compare"), local_store(project)
    rows = []
    for plans in selection(project, papers, profile, only, shared):
        for plan in plans:
            mine = local.lookup(plan.paper, plan.name, plan.key, outputs=plan.stage.outputs)
            theirs = plan.manifest if plan.cached else None
            state = {(True, True): "both", (True, False): "local only", (False, True): "shared only",
                     (False, False): "neither"}[(mine is not None, theirs is not None)]
            row = StageComparison(plan.label, state)
            if mine is not None and theirs is not None:
                row.differing = sorted(r for r in set(mine["files"]) | set(theirs["files"])
                                       if mine["files"].get(r) != theirs["files"].get(r))
                row.identical = not row.differing
                row.metric, row.rel_diff = _largest(mine.get("summary", {}), theirs.get("summary", {}))
                if row.differing:
                    theirs_run = shared.run_facts(plan.paper, plan.name, plan.key)
                    row.environment = differences(mine["run"].get("environment", {}), theirs_run.get("environment", {}))
                if plan.name == plan.pipeline.metrics_stage:
                    _compare_claims(row, local.local_path(plan.paper, plan.name, plan.key),
                                    shared.local_path(plan.paper, plan.name, plan.key))
            rows.append(row)
    return rows


def _compare_claims(row: StageComparison, mine: Path, theirs: Path) -> None:
    a, b = _metrics_file(mine), _metrics_file(theirs)
    va = {c["id"]: c.get("verdict", c.get("holds")) for c in a.get("claims", [])}
    vb = {c["id"]: c.get("verdict", c.get("holds")) for c in b.get("claims", [])}
    row.verdict_changes = [f"{i}: {va.get(i)} -> {vb.get(i)}" for i in sorted(set(va) | set(vb)) if va.get(i) != vb.get(i)]
    row.verdicts_identical = not row.verdict_changes
    metric, diff = _largest(a.get("metrics", {}), b.get("metrics", {}))
    if diff > row.rel_diff:
        row.metric, row.rel_diff = metric, diff


def comparison_table(rows: list[StageComparison]) -> list[str]:
    """The comparison as text: one row per stage, then a line per paper."""
    head = f"{'stage':<40} {'held by':<12} {'bytes':<10} {'largest relative difference':<40} verdicts"
    lines = [head, "-" * len(head)]
    for r in rows:
        same = "-" if r.identical is None else ("identical" if r.identical else f"{len(r.differing)} differ")
        diff = f"{r.metric} {r.rel_diff:.3g}" if r.metric else ("0" if r.identical is not None else "-")
        verdicts = "-" if r.verdicts_identical is None else (
            "identical" if r.verdicts_identical else "changed: " + "; ".join(r.verdict_changes[:3]))
        lines.append(f"{r.label:<40} {r.state:<12} {same:<10} {diff:<40} {verdicts}")
        if r.environment is not None:
            lines.append(f"    environment: {'; '.join(r.environment) or 'the same in every recorded field'}")
    by_paper: dict[str, list[StageComparison]] = {}
    for r in rows:
        by_paper.setdefault(r.label.split(".")[0], []).append(r)
    for paper, rs in by_paper.items():
        both = [r for r in rs if r.state == "both"]
        worst = max(both, key=lambda r: r.rel_diff, default=None)
        verdict = next((r for r in both if r.verdicts_identical is not None), None)
        lines.append(f"  {paper}: {sum(bool(r.identical) for r in both)}/{len(both)} compared stages byte-identical"
                     + (f", largest difference {worst.metric} {worst.rel_diff:.3g}" if worst and worst.metric else "")
                     + ("" if verdict is None else
                        f", verdicts {'identical' if verdict.verdicts_identical else 'CHANGED'}")
                     + (f"; {len(rs) - len(both)} not in both stores" if len(rs) > len(both) else ""))
    return lines


def report_transfers(done: list[PaperTransfer], verb: str, echo: Callable[[str], None]) -> None:
    for t in done:
        echo(t.line(verb))
