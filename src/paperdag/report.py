"""``paperdag report`` (also refreshed by ``paperdag run``): every paper's claims, metrics and plots in
reports/index.html (static, offline: plots are embedded) and reports/summary.md (plots copied to reports/plots/, so
the folder stands alone).

The page opens with a summary table (paper, claims holding, profile, commit, date of the metrics stage's run), then
per paper its claims (statement, the paper's value, ours in short rounded form, the verdict and, for a claim that
does not hold, its reason), its metrics, and its figures with captions.

Run facts and plots come from the artifact store; reports/runs.json remembers them per paper with the metrics' cache
key, so a report written on a machine that has not computed a paper (a fresh clone: metrics committed, store empty)
keeps that paper's commit, date and plots (reports/plots/) as long as its metrics still carry the same key.
"""

from __future__ import annotations

import base64
import html
import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from paperdag.dag import Pipeline, registry
from paperdag.io import write_text_atomic
from paperdag.project import Project

CSS = """body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:1em 0;width:100%}td,th{border:1px solid #ccc;padding:4px 8px;text-align:left;
vertical-align:top}th{background:#f3f3f3}.yes{color:#176f2c;font-weight:bold}.no{color:#b00020;font-weight:bold}
figure{margin:1em 0}figure img{max-width:100%;border:1px solid #ddd}figcaption{color:#555;font-size:90%}
code{background:#f6f6f6;padding:1px 3px}.why{color:#b00020;font-size:90%}"""
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


@dataclass
class PaperResult:
    """What the report shows of one paper: its metrics file (or why there is none usable), run facts and plots."""

    pipeline: Pipeline
    metrics: dict[str, Any] | None
    problem: str
    run: dict[str, str]  # the metrics stage's run: "commit" (short, +dirty) and "date" (UTC, minutes)
    plots: list[tuple[str, str, Path]]  # (caption, declared file name, file)

    @property
    def holding(self) -> str:
        claims = (self.metrics or {}).get("claims", [])
        return f"{sum(bool(c.get('holds')) for c in claims)}/{len(claims)}" if self.metrics else "-"


RUNS_FILE = "runs.json"  # in reports/: {slug: {"key", "commit", "date"}} of the runs the report shows


def _folder(project: Project) -> Path:
    return project.root / "reports"


def _run_facts(run_file: Path) -> dict[str, str]:
    """{"commit", "date"} of a stage run's run.json ({} if it is not in this machine's store)."""
    try:
        run = json.loads(run_file.read_text())
    except (OSError, ValueError):
        return {}
    prov, timing = run.get("provenance", {}), run.get("timing", {})
    commit = (prov.get("commit") or "")[:7] + ("+dirty" if prov.get("dirty") else "")
    return {"commit": commit or "-", "date": str(timing.get("started", "-"))[:16].replace("T", " ")}


def _result(project: Project, pipeline: Pipeline, known: dict[str, dict[str, str]]) -> PaperResult:
    """One paper's result; ``known``: reports/runs.json, used where the store lacks the run of the metrics' key."""
    path = project.metrics_path(pipeline.slug)
    metrics, problem, run = None, "", {}
    if path.is_file():
        try:
            metrics = json.loads(path.read_text())
            if not isinstance(metrics, dict) or not isinstance(metrics.get("claims"), list):
                raise ValueError("no claims list")
        except (OSError, ValueError) as e:
            metrics, problem = None, f"{path.name} is unreadable ({type(e).__name__}: {e}); re-run the paper"
    else:
        problem = f"not run yet: paperdag run {pipeline.slug}"
    key = (metrics or {}).get("key")
    if key:
        run = _run_facts(project.store().local_path(pipeline.slug, pipeline.metrics_stage, key) / "run.json")
    remembered = bool(key) and not run and known.get(pipeline.slug, {}).get("key") == key
    if remembered:
        run = {k: known[pipeline.slug][k] for k in ("commit", "date")}
    plots = []
    for s in pipeline.order():
        for name in s.plots:
            file = project.view(pipeline.slug, s.name) / name
            if remembered and not file.is_file():
                file = _folder(project) / "plots" / f"{pipeline.slug}-{name}"
            plots.append((f"{s.name}: {name}", name, file))
    return PaperResult(pipeline, metrics, problem, run, [p for p in plots if p[2].is_file()])


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
    return [[r.pipeline.slug, r.holding, str((r.metrics or {}).get("profile", "-")), r.run.get("commit", "-"),
             r.run.get("date", "-")] for r in rows]


SUMMARY_HEAD = ["paper", "claims holding", "profile", "commit", "date (UTC)"]
CLAIM_HEAD = ["claim", "statement", "paper", "measured", "holds"]


def render_html(rows: list[PaperResult]) -> str:
    """The report page (see the module docstring) of ``results``."""
    parts = [f"<!doctype html><meta charset=utf-8><title>paperdag report</title><style>{CSS}</style>",
             "<h1>paperdag: claims reproduced at laptop scale</h1><table><tr>"
             + "".join(f"<th>{h}</th>" for h in SUMMARY_HEAD) + "</tr>"]
    for r, cells in zip(rows, _summary_rows(rows), strict=True):
        parts.append(f"<tr><td><a href='#{r.pipeline.slug}'>{html.escape(cells[0])}</a></td>"
                     + "".join(f"<td>{html.escape(c)}</td>" for c in cells[1:]) + "</tr>")
    parts.append("</table>")
    for r in rows:
        p = r.pipeline
        parts.append(f"<h2 id={p.slug}>{html.escape(p.title)} <code>{p.slug}</code></h2>")
        if r.metrics is None:
            parts.append(f"<p>{html.escape(r.problem)}</p>")
            continue
        parts.append(f"<p>Profile <b>{html.escape(str(r.metrics.get('profile')))}</b>: {r.holding} claims hold "
                     "at this scale.</p><table><tr>" + "".join(f"<th>{h}</th>" for h in CLAIM_HEAD) + "</tr>")
        for c in r.metrics["claims"]:
            holds, reason = bool(c.get("holds")), c.get("reason") or ""
            verdict = '<span class="yes">yes</span>' if holds else '<span class="no">no</span>'
            why = f"<div class=why>{html.escape(reason)}</div>" if reason and not holds else ""
            parts.append(f"<tr><td>{html.escape(str(c.get('id')))}</td><td>{html.escape(str(c.get('statement')))}</td>"
                         f"<td>{html.escape(fmt(c.get('paper_value')))}</td>"
                         f"<td>{html.escape(fmt(c.get('measured')))}</td><td>{verdict}{why}</td></tr>")
        parts.append("</table><details><summary>metrics</summary><table>")
        for k, v in sorted(r.metrics.get("metrics", {}).items()):
            parts.append(f"<tr><td>{html.escape(k)}</td><td>{html.escape(fmt(v))}</td></tr>")
        parts.append("</table></details>")
        for caption, _, plot in r.plots:
            data = base64.b64encode(plot.read_bytes()).decode()
            parts.append(f'<figure><img alt="{html.escape(caption)}" src="data:image/png;base64,{data}">'
                         f"<figcaption>{html.escape(caption)}</figcaption></figure>")
    return "\n".join(parts) + "\n"


def _md_row(cells: list[str]) -> str:
    return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"


def render_markdown(rows: list[PaperResult]) -> str:
    """The same content as Markdown, with plots linked as ``plots/<paper>-<file>`` (copied by ``write_report``)."""
    lines = ["# paperdag: claims reproduced at laptop scale", "", _md_row(SUMMARY_HEAD),
             _md_row(["---"] * len(SUMMARY_HEAD)), *(_md_row(c) for c in _summary_rows(rows)), ""]
    for r in rows:
        lines += [f"## {r.pipeline.title} (`{r.pipeline.slug}`)", ""]
        if r.metrics is None:
            lines += [r.problem, ""]
            continue
        lines += [f"Profile **{r.metrics.get('profile')}**: {r.holding} claims hold.", "", _md_row(CLAIM_HEAD),
                  _md_row(["---"] * len(CLAIM_HEAD))]
        for c in r.metrics["claims"]:
            reason = c.get("reason") or ""
            verdict = "yes" if c.get("holds") else "**no**" + (f" ({reason})" if reason else "")
            lines.append(_md_row([str(c.get("id")), str(c.get("statement")), fmt(c.get("paper_value")),
                                  fmt(c.get("measured")), verdict]))
        lines.append("")
        lines += [f"![{caption}](plots/{r.pipeline.slug}-{name})\n*{caption}*\n" for caption, name, _ in r.plots]
    return "\n".join(lines)


def write_report(project: Project) -> list[Path]:
    """Write reports/index.html and reports/summary.md atomically; returns their paths."""
    folder = _folder(project)
    (folder / "plots").mkdir(parents=True, exist_ok=True)
    rows = results(project)
    for r in rows:
        for _, name, plot in r.plots:
            copy = folder / "plots" / f"{r.pipeline.slug}-{name}"
            if plot != copy:
                shutil.copyfile(plot, copy)
    paths = [folder / "index.html", folder / "summary.md"]
    write_text_atomic(paths[0], render_html(rows))
    write_text_atomic(paths[1], render_markdown(rows))
    runs = {r.pipeline.slug: {"key": r.metrics["key"], **r.run} for r in rows
            if r.run and r.metrics and r.metrics.get("key")}
    write_text_atomic(folder / RUNS_FILE, json.dumps(runs, indent=1, sort_keys=True) + "\n")
    return paths + [folder / RUNS_FILE]
