"""``paperdag report`` (also refreshed by ``paperdag run``): every paper's verdicts, metrics and plots in
reports/index.html (static, offline: plots are embedded) and reports/summary.md (plots copied to reports/plots/, so
the folder stands alone).

The page opens with a summary table (paper; evidence holding / failing / inconclusive; why the inconclusive ones
are, grouped by cause: underpowered, range, no interval, at the boundary, precondition; checks passing;
preconditions holding; whether the regime was reached, i.e. every precondition holds; how many verdicts the
replicate run on fresh seeds reproduced (a replicate of other code or params, whose metrics key is not the one
``--replicate`` computes now, is not compared); the gpu profile's verdicts from ``metrics/profiles/gpu/<paper>.json``
(evidence, preconditions, regime, device; marked stale where its metrics key is not the one ``-p gpu`` computes
now), or that no gpu run is committed yet; profile; commit, provenance
(``clean`` or the inputs that differed from the commit) and date of the metrics stage's run) and a chart of the
three evidence verdicts per paper (reports/plots/verdicts.svg). Then per paper: a line naming the preconditions that
failed (with their numbers), a line with its gpu verdicts, and its claims grouped by kind, preconditions first, then
evidence, then checks, each with its statement, the paper's value, ours in short rounded form (a precondition's
ladder of trivial baselines beside it), what it was judged on (n units against the plan's n and basis) and the
verdict in three colours, with the reason where it does not hold and whether the replicate reproduced it; then its
metrics and its figures with captions.

Run facts and plots come from the artifact store; reports/runs.json remembers them per paper with the metrics' cache
key, so a report written on a machine that has not computed a paper (a fresh clone: metrics committed, store empty)
keeps that paper's commit, date and plots (reports/plots/) as long as its metrics still carry the same key. An
unreadable or pre-v2 metrics file is a ``warning:`` line on stderr, and its row says the same: the file and the
command that regenerates it.
"""

from __future__ import annotations

import base64
import html
import json
import shutil
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from paperdag.dag import Pipeline, registry
from paperdag.engine import load_pipeline_params, metrics_doc, read_run, stage_keys
from paperdag.errors import PaperdagError
from paperdag.io import to_jsonable, write_text_atomic
from paperdag.params import DEFAULT_PROFILE, GPU_PROFILE, REPLICATE_PROFILE
from paperdag.project import Project
from paperdag.provenance import describe
from paperdag.store import MANIFEST, Store

CSS = """body{font-family:system-ui,sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:1em 0;width:100%}td,th{border:1px solid #ccc;padding:4px 8px;text-align:left;
vertical-align:top}th{background:#f3f3f3}table.claims{table-layout:fixed}table.claims col.v{width:8em}
table.claims col.s{width:40%}table.claims col.p{width:14%}table.claims col.n{width:10em}.id{font-family:monospace;font-size:85%;color:#555;
overflow-wrap:anywhere}.holds{color:#176f2c;font-weight:bold}.fails{color:#b00020;font-weight:bold}
.inconclusive{color:#a35a00;font-weight:bold}.why{font-size:90%;color:#555;margin-top:.3em}
figure{margin:1em 0}figure img{max-width:100%;border:1px solid #ddd}figcaption{color:#555;font-size:90%}
code{background:#f6f6f6;padding:1px 3px}.regime{padding:.4em .6em;border-left:4px solid #a35a00;background:#fff8ee}
.regime.ok{border-color:#176f2c;background:#f1faf3}"""
COLOURS = {"holds": "#2e8b57", "fails": "#c0392b", "inconclusive": "#e6a23c"}
KIND_TITLES = {"precondition": "Preconditions (the regime in which the evidence can appear)",
               "evidence": "Evidence (the paper's findings at our scale)",
               "check": "Checks (true by construction or implementation invariants; not counted as reproductions)"}
MAX_CHARS = 160  # a measured value longer than this is cut at an item boundary


def fmt(value: Any) -> str:
    """A short readable form: floats to 4 significant digits, mappings as ``k v; ...``, lists as ``[a, b]``; long
    values are cut between items (never inside a number)."""
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, dict):
        items = [f"{k} {fmt(v)}" for k, v in value.items()]
        sep, left, right = "; ", "", ""
    elif isinstance(value, list | tuple):
        items, sep, left, right = [fmt(v) for v in value], ", ", "[", "]"
    else:
        return str(value)
    text, kept = "", 0
    for item in items:
        if len(text) + len(item) > MAX_CHARS and kept:
            return f"{left}{text}{sep}... ({len(items) - kept} more){right}"
        text, kept = f"{text}{sep}{item}" if kept else item, kept + 1
    return f"{left}{text}{right}"


NO_GPU_RUN = "no gpu run committed yet"
STALE_GPU_RUN = "stale: run on other code or params than this commit's"


@dataclass
class PaperResult:
    """What the report shows of one paper: its metrics file (or why there is none usable), run facts and plots."""

    pipeline: Pipeline
    metrics: dict[str, Any] | None
    problem: str
    run: dict[str, str]  # the metrics stage's run: "commit" (short), "provenance" (clean / dirty: ...), "date"
    plots: list[tuple[str, str, Path]]  # (caption, declared file name, file)
    replicate: dict[str, str] = field(default_factory=dict)  # claim id -> verdict of the replicate run on fresh seeds
    warning: str = ""  # an unreadable or pre-v2 metrics file and the command that regenerates it
    gpu: str = NO_GPU_RUN  # the gpu profile's verdicts, one line (``gpu_verdicts``)

    def count(self, key: str) -> int:
        """One of the published verdict counts (``evidence_holding``, ``checks_total``, ...), 0 if absent."""
        return int((self.metrics or {}).get(key, 0))

    @property
    def claims(self) -> list[dict[str, Any]]:
        return (self.metrics or {}).get("claims", [])

    def failed_preconditions(self) -> list[dict[str, Any]]:
        return [c for c in self.claims if c.get("kind") == "precondition" and c.get("verdict") != "holds"]

    def replicated(self, claim: dict[str, Any]) -> str:
        """``yes`` / ``no (replicate: <verdict>)`` for a claim the replicate run judged, else ``""``."""
        again = self.replicate.get(str(claim.get("id")))
        if again is None or claim.get("kind") == "check":
            return ""
        return "yes" if again == claim.get("verdict") else f"no (replicate: {again})"

    def replication(self) -> str:
        """``k/n`` evidence claims and preconditions whose verdict the replicate run reproduced, or ``-``."""
        marks = [self.replicated(c) for c in self.claims]
        judged = [m for m in marks if m]
        return f"{sum(m == 'yes' for m in judged)}/{len(judged)}" if judged else "-"


RUNS_FILE = "runs.json"  # in reports/: {slug: {"key", "commit", "provenance", "date"}} of the runs the report shows


def _folder(project: Project) -> Path:
    return project.root / "reports"


def _run_facts(entry: Path) -> dict[str, str]:
    """{"commit", "provenance", "date"} of a store entry's run.json ({} if it is not in this machine's store):
    provenance ``clean`` or ``dirty: <the inputs that differed from the commit>``."""
    run = read_run(entry)
    if not run:
        return {}
    prov, timing = run.get("provenance", {}), run.get("timing", {})
    return {"commit": (prov.get("commit") or "-")[:7], "provenance": describe(prov),
            "date": str(timing.get("started", "-"))[:16].replace("T", " ")}


def _commit_cell(run: dict[str, str]) -> str:
    """``<commit> (<provenance>)`` for the summary table."""
    return f"{run.get('commit', '-')} ({run['provenance']})" if run.get("provenance") else run.get("commit", "-")


def _pre_v2(metrics: dict[str, Any]) -> bool:
    """A metrics file from before verdict model v2: an evidence or precondition claim judged on an interval whose
    row carries no ``unit``, ``n`` and ``plan``."""
    return any(c.get("kind") in ("evidence", "precondition") and c.get("rule") != "exact"
               and not {"unit", "n", "plan"} <= c.keys() for c in metrics["claims"])


def _result(project: Project, pipeline: Pipeline, known: dict[str, dict[str, str]]) -> PaperResult:
    """One paper's result; ``known``: reports/runs.json, used where the store lacks the run of the metrics' key."""
    path = project.metrics_path(pipeline.slug)
    metrics, problem, warning, run = None, "", "", {}
    if path.is_file():
        try:
            metrics = json.loads(path.read_text())
            if not isinstance(metrics, dict) or not isinstance(metrics.get("claims"), list):
                raise ValueError("no claims list")
        except (OSError, ValueError) as e:
            metrics, problem = None, f"{path.name} is unreadable ({type(e).__name__}: {e}); re-run the paper"
            warning = (f"{_shown(project, path)} is unreadable ({type(e).__name__}); regenerate it: "
                       f"paperdag run {pipeline.slug}")
        if metrics is not None and _pre_v2(metrics):
            warning = (f"{_shown(project, path)} is pre-v2 (claims without unit, n and plan); regenerate it: "
                       f"paperdag run {pipeline.slug}")
    else:
        problem = f"not run yet: paperdag run {pipeline.slug}"
    key = (metrics or {}).get("key")
    store, folders, recompute = project.store(), {}, False
    if key:
        entry = store.local_path(pipeline.slug, pipeline.metrics_stage, key)
        recompute = entry.is_dir() and not _publishes(pipeline, entry, metrics)
        run = {} if recompute else _run_facts(entry)
        folders = _entry_folders(project, store, pipeline.slug, pipeline.metrics_stage, key)
    remembered = bool(key) and not run and known.get(pipeline.slug, {}).get("key") == key
    if remembered:
        run = {k: known[pipeline.slug][k] for k in ("commit", "provenance", "date") if k in known[pipeline.slug]}
    plots = []
    for s in pipeline.order():
        for name in s.plots:  # a stage the metrics do not depend on shows its view while it holds a default result
            copy = _folder(project) / "plots" / f"{pipeline.slug}-{name}"
            if s.name in folders:
                places = ([] if recompute else [folder / name for folder in folders[s.name]]) + \
                    ([copy] if remembered else [])
            else:
                places = [view / name for view in _default_view(project, store, pipeline.slug, s.name)] + [copy]
            file = next((place for place in places if place.is_file()), None)
            if file is not None:
                plots.append((f"{s.name}: {name}", name, file))
    return PaperResult(pipeline, metrics, problem, run, plots, _replicate_verdicts(project, pipeline), warning,
                       gpu_verdicts(project, pipeline))


def _publishes(pipeline: Pipeline, entry: Path, metrics: dict[str, Any]) -> bool:
    """Whether the store entry of the published metrics' key is the run behind them: the document it publishes
    (``engine.metrics_doc``) equals the file. A recompute of the same key on another machine differs in its numbers
    (README, "What reproduces where"); its facts and figures are not those of the published result."""
    try:
        doc = metrics_doc(pipeline, entry, str(metrics.get("profile", DEFAULT_PROFILE)), str(metrics["key"]))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return False
    return json.dumps(to_jsonable(doc), sort_keys=True) == json.dumps(metrics, sort_keys=True)


def _replicate_verdicts(project: Project, pipeline: Pipeline) -> dict[str, str]:
    """{claim id: verdict} of ``metrics/profiles/replicate/<slug>.json`` where it is the replicate of the current code
    and params: its metrics key is the one ``paperdag run <slug> --replicate`` computes now. {} where there is none
    readable, or it replicated other code or params (its verdicts are not compared with today's)."""
    try:
        doc = json.loads(project.metrics_path(pipeline.slug, REPLICATE_PROFILE).read_text())
        verdicts = {str(c["id"]): str(c["verdict"]) for c in doc["claims"]}
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    current = _metrics_key_now(project, pipeline, REPLICATE_PROFILE)
    return verdicts if current is not None and doc.get("key") == current else {}


def _metrics_key_now(project: Project, pipeline: Pipeline, profile: str) -> str | None:
    """The key ``paperdag run <slug> -p <profile>`` gives the metrics stage now (None where the params do not load):
    a published metrics file of that profile belongs to this code and params only if it carries this key."""
    try:
        values = load_pipeline_params(project, pipeline, profile)
    except (OSError, ValueError, KeyError, TypeError, PaperdagError):
        return None
    return stage_keys(pipeline, values)[pipeline.metrics_stage][0]


def gpu_verdicts(project: Project, pipeline: Pipeline) -> str:
    """The gpu profile's verdicts from ``metrics/profiles/gpu/<slug>.json``: ``evidence 3 / 0 / 4; preconditions
    7/7, regime reached; device NVIDIA H200``, followed by ``STALE_GPU_RUN`` where its metrics key is not the one
    ``paperdag run <slug> -p gpu`` computes now (code or params changed since), or ``NO_GPU_RUN`` where there is no
    such file."""
    slug = pipeline.slug
    path = project.metrics_path(slug, GPU_PROFILE)
    if not path.is_file():
        return NO_GPU_RUN
    try:
        doc = json.loads(path.read_text())
        n = {k: int(doc.get(k, 0)) for k in ("evidence_holding", "evidence_failing", "evidence_inconclusive",
                                             "preconditions_holding", "preconditions_total")}
    except (OSError, ValueError, TypeError, AttributeError) as e:
        return f"{_shown(project, path)} is unreadable ({type(e).__name__}): paperdag run {slug} -p {GPU_PROFILE}"
    held, total = n["preconditions_holding"], n["preconditions_total"]
    regime = "regime reached" if held == total else "regime not reached"
    current = _metrics_key_now(project, pipeline, GPU_PROFILE)
    stale = f" ({STALE_GPU_RUN}: paperdag run {slug} -p {GPU_PROFILE})" if doc.get("key") != current else ""
    return (f"evidence {n['evidence_holding']} / {n['evidence_failing']} / {n['evidence_inconclusive']}; "
            f"preconditions {held}/{total}, {regime}; {_device(doc)}{stale}")


def _device(doc: dict[str, Any]) -> str:
    """``device <name>`` from a metrics file's environment block (one name, or each stage's where they differ)."""
    environment = doc.get("environment")
    device = environment.get("device") if isinstance(environment, dict) else None
    if isinstance(device, dict):
        device = ", ".join(sorted({str(v) for v in device.values()}))
    return f"device {device}" if device else "device not recorded"


def _default_view(project: Project, store: Store, slug: str, stage: str) -> list[Path]:
    """``[artifacts/<slug>/<stage>]`` where that view holds a default-profile result, else ``[]``: a run of another
    profile fills a view that holds no default result (runs.finish), and its figures are not the default's (the
    report keeps its copy of the default's). An entry whose run.json this machine lacks counts as the default's."""
    view = project.view(slug, stage)
    key = _view_manifest(view).get("key")
    if not key:
        return []
    profile = read_run(store.local_path(slug, stage, key)).get("profile", DEFAULT_PROFILE)
    return [view] if profile == DEFAULT_PROFILE else []


def _view_manifest(view: Path) -> dict[str, Any]:
    """The manifest of the entry a view holds ({} without a readable one)."""
    try:
        manifest = json.loads((view / MANIFEST).read_text())
    except (OSError, ValueError):
        return {}
    return manifest if isinstance(manifest, dict) else {}


def _entry_folders(project: Project, store: Store, slug: str, stage: str, key: str) -> dict[str, list[Path]]:
    """Per stage behind ``stage``'s entry ``key`` (each manifest names its direct upstreams' keys,
    ``key_parts.upstream``), the folders holding that stage's entry of this run: its view while the view holds it (a
    run of another profile replaces the views, never metrics/), then the entry in a local store."""
    folders: dict[str, list[Path]] = {}
    todo = [(stage, key)]
    while todo:
        name, k = todo.pop()
        if name in folders:
            continue
        view = project.view(slug, name)
        manifest = _view_manifest(view)
        held = manifest.get("key") == k
        if not held:
            manifest = store.lookup(slug, name, k, verify=False) or {}
        folders[name] = ([view] if held else []) + ([] if store.remote else [Path(store.entry_path(slug, name, k))])
        todo += (manifest.get("key_parts") or {}).get("upstream", {}).items()
    return folders


def _known_runs(project: Project) -> dict[str, dict[str, str]]:
    try:
        known = json.loads((_folder(project) / RUNS_FILE).read_text())
    except (OSError, ValueError):
        return {}
    return known if isinstance(known, dict) else {}


def results(project: Project) -> list[PaperResult]:
    known = _known_runs(project)
    return [_result(project, p, known) for p in registry().values()]


def _summary_rows(rows: list[PaperResult]) -> list[list[str]]:
    out = []
    for r in rows:
        paper = f"{r.pipeline.slug} (warning: {r.warning})" if r.warning else r.pipeline.slug
        if r.metrics is None:
            out.append([paper, "-", "-", "-", "-", "-", "-", r.gpu, "-", _commit_cell(r.run), r.run.get("date", "-")])
            continue
        evidence = " / ".join(str(r.count(f"evidence_{k}")) for k in ("holding", "failing", "inconclusive"))
        failed = r.failed_preconditions()
        out.append([paper, evidence, causes(r.claims) or "-",
                    f"{r.count('checks_passing')}/{r.count('checks_total')}",
                    f"{r.count('preconditions_holding')}/{r.count('preconditions_total')}",
                    "yes" if not failed else _not_reached(r, failed), r.replication(), r.gpu,
                    str(r.metrics.get("profile", "-")), _commit_cell(r.run), r.run.get("date", "-")])
    return out


def _not_reached(r: PaperResult, failed: list[dict[str, Any]]) -> str:
    """``no: k/n hold (first failed, second failed, +m)`` for the summary table."""
    names = ", ".join(c["id"] for c in failed[:2]) + (f", +{len(failed) - 2}" if len(failed) > 2 else "")
    return f"no: {r.count('preconditions_holding')}/{r.count('preconditions_total')} hold ({names})"


SUMMARY_HEAD = ["paper", "evidence holds / fails / inconclusive", "inconclusive because", "checks passing",
                "preconditions holding", "regime reached", "replicated",
                "gpu profile: evidence h / f / i; preconditions; device", "profile", "commit", "date (UTC)"]
CHART_FILE = "verdicts.svg"


def verdict_chart(rows: list[PaperResult]) -> str:
    """An SVG bar per paper: its evidence claims split into holds (green), fails (red), inconclusive (amber)."""
    shown = [r for r in rows if r.metrics is not None]
    widest = max([r.count("evidence_total") for r in shown] + [1])
    unit, left, bar, gap, top = 440 / widest, 150, 16, 6, 28
    height = top + len(shown) * (bar + gap) + 10
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + 440 + 60}" height="{height}" '
             'font-family="sans-serif" font-size="12">']
    x = left
    for verdict, colour in COLOURS.items():
        parts.append(f'<rect x="{x}" y="6" width="12" height="12" fill="{colour}"/>'
                     f'<text x="{x + 16}" y="16">{verdict}</text>')
        x += 110
    for i, r in enumerate(shown):
        y = top + i * (bar + gap)
        parts.append(f'<text x="{left - 6}" y="{y + bar - 4}" text-anchor="end">{html.escape(r.pipeline.slug)}</text>')
        x = left
        for verdict, key in (("holds", "holding"), ("fails", "failing"), ("inconclusive", "inconclusive")):
            n = r.count(f"evidence_{key}")
            if n:
                parts.append(f'<rect x="{x:.1f}" y="{y}" width="{n * unit:.1f}" height="{bar}" fill="{COLOURS[verdict]}">'
                             f"<title>{html.escape(r.pipeline.slug)}: {n} {verdict}</title></rect>")
                x += n * unit
        parts.append(f'<text x="{x + 4:.1f}" y="{y + bar - 4}" fill="#555">{r.count("evidence_total")}</text>')
    return "\n".join(parts) + "\n</svg>\n"


def _by_kind(claims: list[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
    groups = [(kind, [c for c in claims if c.get("kind") == kind]) for kind in KIND_TITLES]
    other = [c for c in claims if c.get("kind") not in KIND_TITLES]
    return [g for g in groups if g[1]] + ([("unclassified", other)] if other else [])


def sample(c: dict[str, Any]) -> str:
    """What a claim was judged on: ``10 seeds (plan 10, budget; 2 looks)``, ``exact`` or ``-``."""
    if c.get("rule") == "exact":
        return "exact"
    if not c.get("unit"):
        return "-"
    plan = c.get("plan") or {}
    looks = f"; {plan['looks']} looks" if plan.get("looks", 1) > 1 else ""
    pilot = f"; pilot {plan['pilot_n']}" if plan.get("pilot_n") else ""
    planned = f" (plan {plan.get('planned_n')}, {plan.get('basis')}{pilot}{looks})" if plan else ""
    return f"{c.get('n')} {c['unit']}{'s' if c.get('n') != 1 else ''}{planned}"


def ladder(c: dict[str, Any]) -> str:
    """A precondition's trivial baselines, judged rung first: ``vs KN 4-gram 1.42; next KN 3-gram 1.84``."""
    rungs = c.get("ladder") or []
    if not rungs:
        return f"vs {c['bound']}" if c.get("bound") else ""
    first, rest = rungs[0], rungs[1:]
    return f"vs {first['baseline']} {fmt(first['value'])}" + "".join(
        f"; next {r['baseline']} {fmt(r['value'])}" for r in rest[:2])


def causes(claims: list[dict[str, Any]]) -> str:
    """Why the inconclusive evidence is inconclusive, grouped: ``2 underpowered, 1 precondition``, or ``""``."""
    tally = Counter(str(c.get("cause") or "unstated") for c in claims
                    if c.get("kind") == "evidence" and c.get("verdict") == "inconclusive")
    return ", ".join(f"{n} {cause}" for cause, n in tally.most_common())


def _regime_line(r: PaperResult) -> str:
    """Plain text: which preconditions failed (with their numbers), or that every one holds."""
    failed = r.failed_preconditions()
    if not failed:
        return f"Regime reached: all {r.count('preconditions_total')} preconditions hold."
    return "Regime not reached: " + "; ".join(f"{c['id']} {c.get('verdict')} ({fmt(c.get('measured'))})"
                                              for c in failed) + "."


def render_html(rows: list[PaperResult], chart: str) -> str:
    """The report page (see the module docstring) of ``results``, with ``chart`` (an SVG document) inline."""
    parts = [f"<!doctype html><meta charset=utf-8><title>paperdag report</title><style>{CSS}</style>",
             "<h1>paperdag: claims reproduced at laptop scale</h1>",
             "<p>Evidence is the paper's finding restated for our scale; it is judged only where its preconditions "
             "hold (every compared model beats the strongest trivial baseline, there is headroom, the mechanism can "
             "act), otherwise it is inconclusive. Checks hold by construction and are not counted as reproductions."
             "</p><table><tr>" + "".join(f"<th>{h}</th>" for h in SUMMARY_HEAD) + "</tr>"]
    for r, cells in zip(rows, _summary_rows(rows), strict=True):
        parts.append(f"<tr><td><a href='#{r.pipeline.slug}'>{html.escape(cells[0])}</a></td>"
                     + "".join(f"<td>{html.escape(c)}</td>" for c in cells[1:]) + "</tr>")
    parts.append(f"</table><figure>{chart}<figcaption>Evidence verdicts per paper "
                 "(default profile)</figcaption></figure>")
    for r in rows:
        p = r.pipeline
        parts.append(f"<h2 id={p.slug}>{html.escape(p.title)} <code>{p.slug}</code></h2>")
        if r.metrics is None:
            parts.append(f"<p>{html.escape(r.problem)}</p><p>GPU profile: {html.escape(r.gpu)}.</p>")
            continue
        ok = " ok" if not r.failed_preconditions() else ""
        parts.append(f"<p>Profile <b>{html.escape(str(r.metrics.get('profile')))}</b>: "
                     f"{html.escape(str(r.metrics.get('headline', '')))}.</p>"
                     f"<p class='regime{ok}'>{html.escape(_regime_line(r))}</p>"
                     f"<p>GPU profile: {html.escape(r.gpu)}.</p>")
        for kind, claims in _by_kind(r.claims):
            parts.append(f"<h3>{html.escape(KIND_TITLES.get(kind, kind))}</h3><table class=claims>"
                         "<col class=v><col class=s><col class=p><col><col class=n>"
                         "<tr><th>verdict</th><th>claim</th><th>paper</th><th>measured</th><th>judged on</th></tr>")
            for c in claims:
                verdict, reason = str(c.get("verdict")), str(c.get("reason") or "")
                why = f"<div class=why>{html.escape(reason)}</div>" if reason and verdict != "holds" else ""
                again = r.replicated(c)
                again = f"<div class=why>replicated: {html.escape(again)}</div>" if again else ""
                rungs = f"<div class=why>{html.escape(ladder(c))}</div>" if ladder(c) else ""
                parts.append(f"<tr><td><span class='{html.escape(verdict)}'>{html.escape(verdict)}</span>{again}</td>"
                             f"<td><div class=id>{html.escape(str(c.get('id')))}</div>"
                             f"{html.escape(str(c.get('statement')))}{why}</td>"
                             f"<td>{html.escape(fmt(c.get('paper_value')))}</td>"
                             f"<td>{html.escape(fmt(c.get('measured')))}{rungs}</td>"
                             f"<td>{html.escape(sample(c))}</td></tr>")
            parts.append("</table>")
        parts.append("<details><summary>metrics</summary><table>")
        for k, v in sorted(r.metrics.get("metrics", {}).items()):
            parts.append(f"<tr><td>{html.escape(k)}</td><td>{html.escape(fmt(v))}</td></tr>")
        parts.append("</table></details>")
        for caption, _, plot in r.plots:
            data = base64.b64encode(plot.read_bytes()).decode()
            parts.append(f'<figure><img alt="{html.escape(caption)}" src="data:image/png;base64,{data}">'
                         f"<figcaption>{html.escape(caption)}</figcaption></figure>")
    return "\n".join(parts) + "\n"


def _md_row(cells: list[str]) -> str:
    return "| " + " | ".join(" ".join(c.split()).replace("|", "\\|") for c in cells) + " |"


def render_markdown(rows: list[PaperResult]) -> str:
    """The same content as Markdown, with plots linked as ``plots/<paper>-<file>`` (copied by ``write_report``)."""
    lines = ["# paperdag: claims reproduced at laptop scale", "", _md_row(SUMMARY_HEAD),
             _md_row(["---"] * len(SUMMARY_HEAD)), *(_md_row(c) for c in _summary_rows(rows)), "",
             f"![Evidence verdicts per paper](plots/{CHART_FILE})", ""]
    for r in rows:
        lines += [f"## {r.pipeline.title} (`{r.pipeline.slug}`)", ""]
        if r.metrics is None:
            lines += [r.problem, "", f"GPU profile: {r.gpu}.", ""]
            continue
        lines += [f"Profile **{r.metrics.get('profile')}**: {r.metrics.get('headline', '')}.", "", _regime_line(r), "",
                  f"GPU profile: {r.gpu}.", ""]
        for kind, claims in _by_kind(r.claims):
            lines += [f"### {KIND_TITLES.get(kind, kind)}", "",
                      _md_row(["verdict", "claim", "paper", "measured", "judged on"]), _md_row(["---"] * 5)]
            for c in claims:
                verdict, reason = str(c.get("verdict")), str(c.get("reason") or "")
                shown = {"holds": "holds", "fails": "**fails**"}.get(verdict, f"_{verdict}_")
                why = f" — {reason}" if reason and verdict != "holds" else ""
                again = f" (replicated: {r.replicated(c)})" if r.replicated(c) else ""
                rungs = f" ({ladder(c)})" if ladder(c) else ""
                lines.append(_md_row([shown + again, f"`{c.get('id')}` {c.get('statement')}{why}",
                                      fmt(c.get("paper_value")), fmt(c.get("measured")) + rungs, sample(c)]))
            lines.append("")
        lines += [f"![{caption}](plots/{r.pipeline.slug}-{name})\n*{caption}*\n" for caption, name, _ in r.plots]
    return "\n".join(lines)


def _shown(project: Project, path: Path) -> str:
    return str(path.relative_to(project.root)) if path.is_relative_to(project.root) else str(path)


def write_report(project: Project) -> list[Path]:
    """Write reports/index.html, reports/summary.md and the verdict chart atomically; returns their paths. Each
    unreadable or pre-v2 metrics file is a ``warning:`` line on stderr naming it and the command that regenerates
    it (its row in the report says the same)."""
    folder = _folder(project)
    (folder / "plots").mkdir(parents=True, exist_ok=True)
    rows = results(project)
    for r in rows:
        if r.warning:
            print(f"warning: {r.warning}", file=sys.stderr, flush=True)
    for r in rows:
        for _, name, plot in r.plots:
            copy = folder / "plots" / f"{r.pipeline.slug}-{name}"
            if plot != copy:
                shutil.copyfile(plot, copy)
    chart = verdict_chart(rows)
    paths = [folder / "index.html", folder / "summary.md", folder / "plots" / CHART_FILE]
    write_text_atomic(paths[0], render_html(rows, chart))
    write_text_atomic(paths[1], render_markdown(rows))
    write_text_atomic(paths[2], chart)
    runs = {r.pipeline.slug: {"key": r.metrics["key"], **r.run} for r in rows
            if r.run and r.metrics and r.metrics.get("key")}
    write_text_atomic(folder / RUNS_FILE, json.dumps(runs, indent=1, sort_keys=True) + "\n")
    return paths + [folder / RUNS_FILE]
