"""The one declaration of a paper's DAG.

Each paper declares ``PIPELINE = Pipeline(...)`` in ``paperdag/papers/<slug>/pipeline.py``. The Prefect flow, the
DVC stages, the CLI and the report are all derived from it. Importing a declaration must stay cheap (no torch):
stage functions are named as ``"module:function"`` strings inside the paper package and imported only when a stage
really runs.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
from pathlib import Path
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Literal

from pydantic import BaseModel

from paperdag.errors import UsageError

StageKind = Literal["prepare", "train", "verify", "export", "evaluate"]
DECLARATIONS = ("pipeline", "params")  # a paper's declaration modules: they enter keys as values, never as code


@dataclass(frozen=True)
class Resources:
    """What a stage asks of the executor: Ray ``num_cpus``, ``num_gpus``, ``memory`` and custom resources.

    A stage asking for GPUs runs on a GPU where the cluster has one and on the CPU otherwise.
    """

    cpus: float = 1.0
    gpus: float = 0.0
    memory_gb: float = 0.0
    custom: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Stage:
    """One node of a paper's DAG.

    fn: ``"module:function"`` relative to the paper package, called as ``fn(ctx, **args)``; it returns a dict of
        scalar summary metrics (or None).
    params: the top-level keys of the paper's params model that the stage reads (``seed`` is always included; a
        key may name a sub-model, handed over typed); only these enter the stage's cache key and its DVC ``params``.
    outputs: files (or folders) the stage must write into its output folder (checked after it runs); downstream
        stages read them with ``ctx.input(stage, name)``.
    plots: PNG files among the outputs, shown by DVC, MLflow and the report.
    data_plots: JSON/CSV tables among the outputs that DVC renders and diffs across revisions (``dvc plots show``,
        ``dvc plots diff``), each with its DVC plot properties, e.g. ``{"val_loss.json": {"x": "step", "y":
        ["adamw", "muon"]}}``.
    args: keyword arguments for ``fn`` (JSON values), part of the cache key: a fan-out over variants is one
        function declared several times, e.g. ``Stage("train_a", ..., args={"variant": "a"})``.
    """

    name: str
    kind: StageKind
    fn: str
    upstream: tuple[str, ...] = ()
    params: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()
    plots: tuple[str, ...] = ()
    resources: Resources = field(default_factory=Resources)
    args: dict[str, Any] = field(default_factory=dict)
    data_plots: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def module(self) -> str:
        """The stage function's module, relative to the paper package."""
        return self.fn.partition(":")[0]


@dataclass(frozen=True)
class Pipeline:
    """A paper: its slug, title, params model and stages (in any order; upstream names must exist).

    The stage named by ``metrics_stage`` writes ``metrics.json`` (``{"metrics": {...}, "claims": [...]}``) into its
    output folder; the platform publishes it as ``metrics/<slug>.json``.
    reverify: optional ``"module:function"`` taking a certificate folder and returning ``(ok, message)``; it backs
    ``paperdag verify <slug> [PATH]``, so a reviewer re-checks a certificate with one command.
    headline: names of metrics (keys of ``metrics.json``'s ``metrics``) that ``dvc metrics show`` lists beside the
    verdicts (a few: the table stays readable).
    """

    slug: str
    title: str
    params_model: type[BaseModel]
    stages: tuple[Stage, ...]
    metrics_stage: str = "evaluate"
    reverify: str | None = None
    headline: tuple[str, ...] = ()
    package: str = ""  # the science package; defaults to paperdag.papers.<slug>

    def __post_init__(self) -> None:
        if not self.package:
            object.__setattr__(self, "package", f"paperdag.papers.{self.slug}")
        names = [s.name for s in self.stages]
        if len(set(names)) != len(names):
            raise ValueError(f"{self.slug}: duplicate stage names in {names}")
        for s in self.stages:
            where = f"{self.slug}.{s.name}"
            for up in s.upstream:
                if up not in names:
                    raise ValueError(f"{where}: unknown upstream stage {up!r}")
            unknown = set(s.params) - set(self.params_model.model_fields)
            if unknown:
                raise ValueError(f"{where}: params {sorted(unknown)} not in {self.params_model.__name__}")
            if ":" not in s.fn or s.module in DECLARATIONS:
                raise ValueError(f"{where}: fn {s.fn!r} must be 'module:function' outside {DECLARATIONS}")
            if not {*s.plots, *s.data_plots} <= set(s.outputs):
                undeclared = sorted({*s.plots, *s.data_plots} - set(s.outputs))
                raise ValueError(f"{where}: plots {undeclared} are not declared outputs")
            if len(set(s.outputs)) != len(s.outputs) or any(o.startswith(("/", ".")) for o in s.outputs):
                raise ValueError(f"{where}: outputs must be distinct relative names, got {s.outputs}")
        if self.metrics_stage not in names:
            raise ValueError(f"{self.slug}: metrics stage {self.metrics_stage!r} is not a stage")
        if "metrics.json" not in self.stage(self.metrics_stage).outputs:
            raise ValueError(f"{self.slug}.{self.metrics_stage}: the metrics stage must declare 'metrics.json'")
        self.order()  # raises on cycles

    def stage(self, name: str) -> Stage:
        for s in self.stages:
            if s.name == name:
                return s
        raise UsageError(f"paper {self.slug!r} has no stage {name!r} (stages: {', '.join(self.stage_names)})")

    @property
    def stage_names(self) -> list[str]:
        return [s.name for s in self.order()]

    def order(self) -> list[Stage]:
        """Stages in a topological order (Kahn's algorithm, ties broken by declaration order)."""
        done: list[Stage] = []
        pending = list(self.stages)
        while pending:
            ready = [s for s in pending if all(u in {d.name for d in done} for u in s.upstream)]
            if not ready:
                raise ValueError(f"{self.slug}: cycle among stages {[s.name for s in pending]}")
            done.append(ready[0])
            pending.remove(ready[0])
        return done


_REGISTERED: dict[str, Pipeline] = {}  # pipelines declared outside paperdag.papers (register(), tests)


@cache
def _paper_modules() -> dict[str, str]:
    """slug -> declaration module of every ``paperdag/papers/<slug>/pipeline.py``, found without importing it."""
    import paperdag.papers as papers

    root = Path(papers.__path__[0])
    return {info.name: f"paperdag.papers.{info.name}.pipeline"
            for info in sorted(pkgutil.iter_modules(papers.__path__), key=lambda i: i.name)
            if info.ispkg and not info.name.startswith("_") and (root / info.name / "pipeline.py").is_file()}


@cache
def _load(module: str) -> Pipeline:
    folder = module.split(".")[-2]
    try:
        pipeline: Pipeline = importlib.import_module(module).PIPELINE
    except SyntaxError as e:
        raise UsageError(f"paper {folder!r}: its declaration does not parse ({Path(e.filename or '?').name} line "
                         f"{e.lineno}: {e.msg})") from None
    if module.startswith("paperdag.papers.") and pipeline.slug != folder:
        raise ValueError(f"paperdag/papers/{folder}: PIPELINE.slug is {pipeline.slug!r}")
    return pipeline


@cache
def _extra_pipelines() -> dict[str, Pipeline]:
    """The ``PIPELINE`` of each module named in ``PAPERDAG_EXTRA_PIPELINES`` (comma-separated), by slug."""
    found = {}
    for name in filter(None, os.environ.get("PAPERDAG_EXTRA_PIPELINES", "").split(",")):
        pipeline = _load(name.strip())
        found[pipeline.slug] = pipeline
    return found


def paper_slugs() -> list[str]:
    """Slugs of the papers in ``paperdag.papers`` (no declaration imported)."""
    return list(_paper_modules())


def known_slugs() -> list[str]:
    """Every paper slug the registry knows (papers, extra and registered pipelines), no declaration imported
    beyond the extras'."""
    return list(dict.fromkeys([*_extra_pipelines(), *_REGISTERED, *_paper_modules()]))



def registry() -> dict[str, Pipeline]:
    """All papers by slug: every ``paperdag.papers.<slug>.pipeline`` module's ``PIPELINE``, those of the modules
    named in ``PAPERDAG_EXTRA_PIPELINES``, and any ``register()``-ed one (imports every declaration)."""
    return {slug: get_pipeline(slug) for slug in known_slugs()}


def configured(params_file: dict) -> list[Pipeline]:
    """The papers that have a section in the project's params.yaml (what ``all`` means)."""
    return [get_pipeline(slug) for slug in known_slugs() if isinstance(params_file.get(slug), dict)]


def register(pipeline: Pipeline) -> None:
    """Add a pipeline declared outside paperdag.papers (e.g. by a test) to the registry."""
    _REGISTERED[pipeline.slug] = pipeline


def get_pipeline(slug: str) -> Pipeline:
    """The declared pipeline for ``slug``, importing only its declaration (another paper's broken declaration does
    not stop this one); a one-line UsageError naming the known papers otherwise."""
    known = {**_extra_pipelines(), **_REGISTERED}
    if slug in known:
        return known[slug]
    modules = _paper_modules()
    if slug not in modules:
        raise UsageError(f"unknown paper {slug!r} (known: {', '.join(sorted(known_slugs())) or 'none'})")
    return _load(modules[slug])
