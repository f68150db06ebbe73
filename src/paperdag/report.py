"""``paperdag report``: every paper's claims, metrics and plots in reports/index.html (static, offline: plots are
embedded) and reports/summary.md (plots copied to reports/plots/, so the folder stands alone)."""

from __future__ import annotations

import base64
import html
import json
import shutil
from pathlib import Path
from typing import Any

from paperdag.dag import registry
from paperdag.project import Project
from paperdag.io import write_text_atomic

CSS = """body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:1em 0;width:100%}td,th{border:1px solid #ccc;padding:4px 8px;text-align:left;
vertical-align:top}th{background:#f3f3f3}.yes{color:#176f2c;font-weight:bold}.no{color:#b00020;font-weight:bold}
img{max-width:48%;margin:4px;border:1px solid #ddd}code{background:#f6f6f6;padding:1px 3px}"""


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, (dict, list)):
        return json.dumps(value, default=str)[:300]
    return str(value)


def _paper_data(project: Project) -> list[tuple[Any, dict | None, list[Path]]]:
    rows = []
    for pipeline in registry().values():
        path = project.metrics_path(pipeline.slug)
        metrics = json.loads(path.read_text()) if path.is_file() else None
        plots = [project.view(pipeline.slug, s.name) / p for s in pipeline.order() for p in s.plots]
        rows.append((pipeline, metrics, [p for p in plots if p.is_file()]))
    return rows


def render_html(project: Project) -> str:
    """The report page: per paper, a claims table (holds / does not hold), metrics, and embedded plots."""
    parts = [f"<!doctype html><meta charset=utf-8><title>paperdag report</title><style>{CSS}</style>",
             "<h1>paperdag: claims reproduced at laptop scale</h1>"]
    for pipeline, metrics, plots in _paper_data(project):
        parts.append(f"<h2 id={pipeline.slug}>{html.escape(pipeline.title)} <code>{pipeline.slug}</code></h2>")
        if metrics is None:
            parts.append("<p>Not run yet: <code>paperdag run " + pipeline.slug + "</code></p>")
            continue
        claims = metrics.get("claims", [])
        held = sum(bool(c["holds"]) for c in claims)
        parts.append(f"<p>Profile <b>{html.escape(str(metrics.get('profile')))}</b>: {held}/{len(claims)} claims "
                     "hold at this scale.</p><table><tr><th>claim</th><th>statement</th><th>paper</th>"
                     "<th>measured</th><th>holds</th></tr>")
        for c in claims:
            verdict = '<span class="yes">yes</span>' if c["holds"] else '<span class="no">no</span>'
            parts.append(f"<tr><td>{html.escape(c['id'])}</td><td>{html.escape(c['statement'])}</td>"
                         f"<td>{html.escape(_fmt(c.get('paper_value')))}</td>"
                         f"<td>{html.escape(_fmt(c['measured']))}</td><td>{verdict}</td></tr>")
        parts.append("</table><details><summary>metrics</summary><table>")
        for k, v in sorted(metrics.get("metrics", {}).items()):
            parts.append(f"<tr><td>{html.escape(k)}</td><td>{html.escape(_fmt(v))}</td></tr>")
        parts.append("</table></details>")
        for plot in plots:
            data = base64.b64encode(plot.read_bytes()).decode()
            parts.append(f'<img alt="{html.escape(plot.name)}" src="data:image/png;base64,{data}">')
    return "\n".join(parts) + "\n"


def render_markdown(project: Project) -> str:
    """The same content as Markdown, with plots linked as ``plots/<paper>-<file>`` (copied by ``write_report``)."""
    lines = ["# paperdag: claims reproduced at laptop scale", ""]
    for pipeline, metrics, plots in _paper_data(project):
        lines += [f"## {pipeline.title} (`{pipeline.slug}`)", ""]
        if metrics is None:
            lines += [f"Not run yet: `paperdag run {pipeline.slug}`", ""]
            continue
        claims = metrics.get("claims", [])
        lines += [f"Profile **{metrics.get('profile')}**: {sum(bool(c['holds']) for c in claims)}/{len(claims)} "
                  "claims hold.", "", "| claim | statement | paper | measured | holds |", "|---|---|---|---|---|"]
        for c in claims:
            cells = [c["id"], c["statement"], _fmt(c.get("paper_value")), _fmt(c["measured"]),
                     "yes" if c["holds"] else "**no**"]
            lines.append("| " + " | ".join(x.replace("|", "\\|") for x in cells) + " |")
        lines.append("")
        lines += [f"![{p.name}](plots/{pipeline.slug}-{p.name})" for p in plots]
        lines.append("")
    return "\n".join(lines)


def write_report(project: Project) -> list[Path]:
    """Write reports/index.html and reports/summary.md atomically; returns their paths."""
    folder = project.root / "reports"
    (folder / "plots").mkdir(parents=True, exist_ok=True)
    for pipeline, _, plots in _paper_data(project):
        for plot in plots:
            shutil.copyfile(plot, folder / "plots" / f"{pipeline.slug}-{plot.name}")
    paths = [folder / "index.html", folder / "summary.md"]
    write_text_atomic(paths[0], render_html(project))
    write_text_atomic(paths[1], render_markdown(project))
    return paths
