"""One execution of one or more papers: validate params, plan once, run what is stale, record everything.

``Execution`` is opened once (params validated, every stage planned and its cache checked) and handed to one
scheduling loop, ``drive``: ready stages are submitted to an executor, finished ones are recorded, failed ones are
retried and then reported with their descendants skipped. Executors only decide *where* ``execute_stage`` runs:
``LocalExecutor`` in this process (``paperdag stage``, ``--local``, tests), the Prefect task on Ray in ``flows/``.
Materialising outputs into ``artifacts/``, MLflow logging and publishing ``metrics/<slug>.json`` happen here, in
the driver.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Sequence
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from paperdag.dag import Pipeline, configured, get_pipeline, known_slugs
from paperdag.engine import (StagePlan, execute_stage, load_pipeline_params, plan_pipeline, publish_metrics,
                             stage_inputs, stage_keys)
from paperdag.errors import PaperdagError, StageFailed, UsageError
from paperdag.extras import require_extra
from paperdag.params import DEFAULT_PROFILE, check_sections, read_params_file
from paperdag.project import Project
from paperdag.provenance import git_state, provenance
from paperdag.store import IDENTICAL_COPY, MANIFEST, NO_VIEW, OTHER_ENTRY, Store, materialize
from paperdag.timings import Estimate, clock


def _echo(line: str) -> None:
    """A progress line on stderr."""
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def tracking_enabled() -> bool:
    return os.environ.get("PAPERDAG_TRACKING", "on").lower() not in {"off", "0", "false", "no"}


def resolve_papers(names: list[str], params_file: dict) -> list[Pipeline]:
    """Pipelines for paper names; ``all`` means every paper configured in params.yaml."""
    if not names:
        raise UsageError("name at least one paper, or `all`")
    if "all" in names:
        return configured(params_file)
    return [get_pipeline(n) for n in dict.fromkeys(names)]


def _default_keys(project: Project, pipelines: list[Pipeline], data: dict[str, Any]) -> dict[str, dict[str, str]]:
    """Per paper, the default profile's key of each stage ({} for a paper whose default params do not load)."""
    keys = {}
    for p in pipelines:
        try:
            values = load_pipeline_params(project, p, DEFAULT_PROFILE, data)
        except (PaperdagError, ValueError):
            keys[p.slug] = {}
            continue
        keys[p.slug] = {name: key for name, (key, _, _) in stage_keys(p, values).items()}
    return keys


@dataclass
class Execution:
    """The plans of one execution, plus what has happened to each stage so far."""

    project: Project
    pipelines: list[Pipeline]
    profile: str
    trigger: str
    plans: list[StagePlan]
    store: Store
    params: dict[str, Any]  # params.yaml as read: each paper's section is among its inputs (provenance)
    tracker: Any = None
    done: dict[str, bool] = field(default_factory=dict)  # label -> was a cache hit
    failed: dict[str, str] = field(default_factory=dict)  # label -> error
    skipped: set[str] = field(default_factory=set)  # labels not run because an upstream failed or was skipped
    verdicts: dict[str, dict[str, Any]] = field(default_factory=dict)  # paper -> its published metrics file
    ended: set[str] = field(default_factory=set)  # papers whose MLflow parent run is closed
    estimate: Estimate = field(default_factory=lambda: Estimate([], {}, None))  # the pending stages' expected times
    papers_provenance: dict[str, dict[str, Any]] | None = None  # paper -> provenance of its inputs, once asked
    default_keys: dict[str, dict[str, str]] = field(default_factory=dict)  # another profile's run: paper -> stage ->
    # the default profile's key (whose view, DVC's out, it must not replace)
    started: dict[str, float] = field(default_factory=dict)  # label -> when it started (monotonic)
    t0: float = field(default_factory=time.monotonic)

    def progress(self, plan: StagePlan, status: str, settled: bool = True) -> None:
        """One line per event: ``  paper.stage  status  [k/N] HH:MM:SS +elapsed ~left`` (k counts settled stages;
        ``left``: the expected time to the end, from the store's past runs)."""
        total = sum(p.run for p in self.plans)
        k = len({*self.done, *self.failed, *self.skipped})
        count = f"[{k}/{total}]" if settled else " " * (2 * len(str(total)) + 3)
        elapsed = time.monotonic() - self.t0
        _echo(f"  {plan.label:<36} {status:<22} {count} {time.strftime('%H:%M:%S')} +{clock(elapsed)}"
              f"{self.left(plan.paper)}")

    def start(self, plan: StagePlan) -> None:
        """A stage is handed to the executor (its provenance, which its run.json records, is known by then)."""
        self.provenance()
        self.started[plan.label] = time.monotonic()
        self.progress(plan, "started", settled=False)

    def left(self, paper: str) -> str:
        """`` ~m:ss left`` to the end of the execution (and `` (<paper> ~m:ss)`` with several papers), simulated
        from the expected times of the stages not settled yet; ``+`` where some have no history; "" without any."""
        settled = {*self.done, *self.failed, *self.skipped}
        est = self.estimate
        if not est.plans or est.unknown == len(est.plans):
            return ""
        now = time.monotonic()
        finishes = est.finishes(settled, {l: now - t for l, t in self.started.items() if l not in settled})
        if not finishes:
            return ""
        more = "+" if any(est.seconds[l] is None for l in finishes) else ""
        mine = [t for l, t in finishes.items() if l.startswith(f"{paper}.")]
        own = f" ({paper} ~{clock(max(mine))}{more})" if len(self.pipelines) > 1 and mine else ""
        return f" ~{clock(max(finishes.values()))}{more} left{own}"

    @classmethod
    def open(cls, names: list[str], profile: str = DEFAULT_PROFILE, trigger: str = "cli", force: bool = False,
             only: Sequence[str] = (), project: Project | None = None, track: bool | None = None) -> Execution:
        """Validate every paper's params (nothing is written on error), then plan all their stages.

        A paper with stages to run must have its optional extra installed (one-line error naming it otherwise).
        """
        project = project or Project.find()
        data = read_params_file(project.params_path)
        check_sections(data, known_slugs(), project.params_path)
        pipelines = resolve_papers(names, data)
        only = tuple(only)
        if only and len(pipelines) != 1:
            raise UsageError("--only needs exactly one paper")
        values = {p.slug: load_pipeline_params(project, p, profile, data) for p in pipelines}
        store = project.store()
        if store.remote:
            store.probe()  # a missing bucket, refused credentials or a silent endpoint: one line, before planning
        plans = []
        for p in pipelines:
            for plan in plan_pipeline(p, values[p.slug], store, force=force, only=only):
                plan.profile = profile
                plans.append(plan)
        for p in pipelines:
            if any(plan.paper == p.slug and plan.run and not plan.cached for plan in plans):
                require_extra(p.slug)
        execution = cls(project, pipelines, profile, trigger, plans, store, data,
                        estimate=Estimate.of(store, plans, cpus=None),
                        default_keys={} if profile == DEFAULT_PROFILE else _default_keys(project, pipelines, data))
        if tracking_enabled() if track is None else track:
            execution.start_tracking()
        return execution

    def start_tracking(self) -> None:
        """Track this execution in MLflow (opened lazily: nothing is imported until something is logged)."""
        from paperdag.tracking import Tracker

        self.tracker = Tracker(self.project.root, self.profile, self.trigger, self.provenance,
                               {p.slug: p.title for p in self.pipelines})

    def provenance(self) -> dict[str, dict[str, Any]]:
        """Paper -> provenance of all its stages' inputs (MLflow's parent runs), computed on first use with one look
        at the repository, which also sets each plan's own (``plan.provenance``, its run.json's): a run that computes
        nothing and tracks nothing never asks git."""
        if self.papers_provenance is None:
            inputs = {p.slug: stage_inputs(p) for p in self.pipelines}
            git = git_state(self.project.root, {f for files in inputs.values() for fs in files.values() for f in fs})
            for plan in self.plans:
                section = self.params.get(plan.paper)
                plan.provenance = provenance(git, inputs[plan.paper][plan.name], plan.paper, section)
            self.papers_provenance = {slug: provenance(git, {f for fs in files.values() for f in fs}, slug,
                                                       self.params.get(slug)) for slug, files in inputs.items()}
        return self.papers_provenance

    def pending(self) -> list[StagePlan]:
        """Stages that must run (requested and not cached)."""
        return [p for p in self.plans if p.run and not p.cached]

    def inputs(self, plan: StagePlan) -> dict[str, str]:
        """Upstream stage name -> local folder of its output (downloaded first for a remote store)."""
        return {u: str(self.store.local_path(plan.paper, u, key)) for u, key in plan.upstream.items()}

    def _default_in_view(self, plan: StagePlan) -> bool:
        """Whether ``artifacts/<paper>/<stage>`` holds the default profile's current result for ``plan``'s stage."""
        key = self.default_keys.get(plan.paper, {}).get(plan.name)
        try:
            held = json.loads((self.project.view(plan.paper, plan.name) / MANIFEST).read_text()).get("key")
        except (OSError, ValueError, AttributeError):
            return False
        return key is not None and held == key

    def blocked_by(self, plan: StagePlan) -> str | None:
        """The failed or skipped upstream stage that keeps ``plan`` from running, if any."""
        for u in plan.upstream:
            label = f"{plan.paper}.{u}"
            if label in self.failed or label in self.skipped:
                return label
        return None

    def finish(self, plan: StagePlan, manifest: dict[str, Any], hit: bool) -> None:
        """Materialise a finished stage into artifacts/, log it, publish metrics if it is the metrics stage."""
        entry = self.store.local_path(plan.paper, plan.name, plan.key)
        view = self.project.view(plan.paper, plan.name, self.profile)
        views = [view]
        if self.profile != DEFAULT_PROFILE and not self._default_in_view(plan):
            views.append(self.project.view(plan.paper, plan.name))  # no default result there: the latest run shows
        with self.store.lock(plan.paper, plan.name, plan.key):
            repaired = [note for v in views for note in materialize(entry, v, manifest["files"])]
        repaired = [n for n in repaired if n not in (NO_VIEW, OTHER_ENTRY) and not n.endswith(IDENTICAL_COPY)]
        if repaired:
            more = f" (+{len(repaired) - 3} more)" if len(repaired) > 3 else ""
            _echo(f"  {plan.label:<36} view healed: {view.relative_to(self.project.root)} "
                  f"({'; '.join(repaired[:3])}{more})")
        self.done[plan.label] = hit
        seconds = manifest.get("run", {}).get("timing", {}).get("seconds", 0.0)
        self.progress(plan, "cached" if hit else f"done in {seconds:.1f}s")
        claims = None
        if plan.name == plan.pipeline.metrics_stage:
            claims = publish_metrics(self.project, plan.pipeline, entry, self.profile, plan.key)
            self.verdicts[plan.paper] = claims
        if self.tracker is not None:
            if hit:
                self.tracker.cached(plan)
            else:
                inputs = {u: Path(p) for u, p in self.inputs(plan).items()}
                self.tracker.stage(plan, manifest, entry, inputs, claims=claims)
        self._maybe_end(plan.paper)

    def retry(self, plan: StagePlan, attempt: int, error: BaseException) -> None:
        """Record a failed attempt that will be retried (a line, and a failed stage run in MLflow)."""
        message = f"{type(error).__name__}: {error}"
        self.progress(plan, f"retry {attempt + 1} after {message.splitlines()[0] if message else ''}", settled=False)
        if self.tracker is not None:
            self.tracker.stage(plan, None, None, {}, error=message, attempt=attempt)

    def fail(self, plan: StagePlan, error: BaseException | str, attempt: int = 0) -> None:
        """Record a stage that failed for good: its first error line (and the log file holding the full traceback)
        goes into the run's one-line summary, the whole message to MLflow."""
        message = error if isinstance(error, str) else f"{type(error).__name__}: {error}"
        first = message.strip().splitlines()[0] if message.strip() else type(error).__name__
        log = None if isinstance(error, str) else self.stage_log(plan, error, attempt)
        self.failed[plan.label] = f"{first} (traceback: {log})" if log else first
        self.progress(plan, f"FAILED: {first}")
        if self.tracker is not None:
            self.tracker.stage(plan, None, None, {}, error=message, attempt=attempt)
        self._maybe_end(plan.paper)

    def stage_log(self, plan: StagePlan, error: BaseException, attempt: int = 0) -> str | None:
        """Write the stage's full traceback to ``artifacts/.logs/<paper>/<stage>.log``; returns its path as the user
        will type it (relative to the working folder when inside it), or None if it cannot be written."""
        from datetime import datetime, timezone

        from paperdag.errors import traceback_text

        path = self.project.artifacts / ".logs" / plan.paper / f"{plan.name}.log"
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            when = datetime.now(timezone.utc).isoformat(timespec="seconds")
            path.write_text(f"{plan.label} failed (attempt {attempt + 1}, key {plan.key[:12]}, {when})\n\n"
                            f"{traceback_text(error)}")
        except OSError:
            return None
        try:
            return str(path.relative_to(Path.cwd()))
        except ValueError:
            return str(path)

    def skip(self, plan: StagePlan) -> None:
        """A stage not run because an upstream stage failed or was skipped."""
        self.skipped.add(plan.label)
        self.progress(plan, f"skipped ({self.blocked_by(plan)} did not finish)")
        self._maybe_end(plan.paper)

    def _outcome(self, paper: str) -> tuple[list[str], list[str]]:
        """(labels of the paper's requested stages not yet settled, labels that failed or were skipped)."""
        mine = [p.label for p in self.plans if p.run and p.paper == paper]
        settled = {*self.done, *self.failed, *self.skipped}
        return [l for l in mine if l not in settled], [l for l in mine if l in self.failed or l in self.skipped]

    def _maybe_end(self, paper: str, status: str | None = None) -> None:
        """Close the paper's MLflow parent run once each of its requested stages is settled (or with ``status``)."""
        open_, bad = self._outcome(paper)
        if self.tracker is None or paper in self.ended or (open_ and status is None):
            return
        self.ended.add(paper)
        hits = [hit for label, hit in self.done.items() if label.startswith(f"{paper}.")]
        self.tracker.end_paper(paper, status or ("FAILED" if bad else "FINISHED"),
                               {"stages_run": hits.count(False), "cache_hits": hits.count(True)},
                               self.verdicts.get(paper))

    def abort(self) -> None:
        """After an interrupt: mark the unfinished papers' MLflow parent runs KILLED (finished stages stay cached)."""
        for p in self.pipelines:
            self._maybe_end(p.slug, status="KILLED")

    def close(self) -> None:
        """End the MLflow parent runs and raise ``StageFailed`` naming every failed or skipped stage."""
        skipped = [p.label for p in self.plans if p.run and p.label not in self.done and p.label not in self.failed]
        for p in self.pipelines:
            self._maybe_end(p.slug, status="FAILED" if self._outcome(p.slug)[0] else None)
        if self.failed:
            first, error = next(iter(self.failed.items()))
            more = f"; {len(self.failed) - 1} more failed" if len(self.failed) > 1 else ""
            skip = f"; skipped downstream: {', '.join(skipped)}" if skipped else ""
            raise StageFailed(f"stage {first} failed: {error}{more}{skip}")


class Executor(Protocol):
    """Where stages run: ``submit`` starts one stage and returns a future of ``(manifest, cache_hit)``. An executor
    may also have ``fits(plan, running) -> bool``: whether the stage can start now beside the running ones (the loop
    then holds it back, keeping the declaration order, until it fits or nothing runs)."""

    def submit(self, execution: Execution, plan: StagePlan) -> Future[tuple[dict, bool]]: ...


class LocalExecutor:
    """Runs each stage in this process when it is submitted (the future is already settled), on ``cuda`` whenever
    this machine has a GPU (``device.visible``)."""

    def submit(self, execution: Execution, plan: StagePlan) -> Future[tuple[dict, bool]]:
        from paperdag.device import visible

        future: Future[tuple[dict, bool]] = Future()
        try:
            future.set_result(execute_stage(execution.store, plan, execution.inputs(plan), visible()))
        except Exception as e:  # noqa: BLE001 - the stage's error, handled by drive()
            future.set_exception(e)
        return future


def drive(execution: Execution, executor: Executor | None = None, retries: int = 1) -> Execution:
    """The one scheduling loop: submit every ready stage, record each as it finishes, retry a failed stage up to
    ``retries`` times, then record its failure and skip its descendants; finally close the execution.

    A stage is ready when each upstream stage of this execution has finished (or was not asked to run: then its
    output is already in the store). Cached stages are recorded without being submitted. Ready stages are submitted
    in declaration order (plans are topological, ties by declaration), each once the executor says it fits beside
    the running ones (``fits``, where the executor has it) or when nothing runs.
    """
    executor = executor or LocalExecutor()
    fits = getattr(executor, "fits", None)
    execution.store.prepare()  # one line if artifacts/ is not writable; stale scratch of killed runs is removed
    waiting = [p for p in execution.plans if p.run]
    running: dict[Future, tuple[StagePlan, int]] = {}
    requested = {p.label for p in waiting}

    def submit(plan: StagePlan, attempt: int) -> None:
        if attempt == 0:
            execution.start(plan)
        future = executor.submit(execution, plan)
        running[future] = (plan, attempt)
        if future.done():  # a local executor ran it already: record it before starting the next
            settle(future)

    def settle(future: Future) -> None:
        plan, attempt = running.pop(future)
        try:
            manifest, hit = future.result()
        except Exception as e:  # noqa: BLE001 - any stage error is retried, then reported with its stage
            if attempt < retries:
                execution.retry(plan, attempt, e)
                submit(plan, attempt + 1)
            else:
                execution.fail(plan, e, attempt)
        else:
            execution.finish(plan, manifest, hit)

    try:
        while waiting or running:
            for plan in list(waiting):
                ups = [f"{plan.paper}.{u}" for u in plan.upstream]
                if execution.blocked_by(plan):
                    waiting.remove(plan)
                    execution.skip(plan)
                elif all(u in execution.done or u not in requested for u in ups):
                    if plan.cached:
                        waiting.remove(plan)
                        execution.finish(plan, plan.manifest, hit=True)
                    elif not running or fits is None or fits(plan, [p for p, _ in running.values()]):
                        waiting.remove(plan)
                        submit(plan, 0)
            if not running:  # plans are in topological order, so one pass starts everything that can start
                if waiting:
                    raise RuntimeError(f"no stage can start among {[p.label for p in waiting]}")
                break
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in finished:
                settle(future)
    except BaseException:
        cancel = getattr(executor, "cancel", None)
        if running and cancel is not None:  # interrupted: stop the stages in flight (finished ones stay cached)
            try:
                cancel()
            except Exception:  # noqa: BLE001 - best effort while unwinding; the driver's exit stops the rest
                pass
        execution.abort()
        raise
    execution.close()
    return execution
