"""The claims contract every paper's evaluate stage fulfils.

``metrics/<slug>.json`` = ``{"paper", "title", "profile", "key", "claims_holding", "claims_total", "holds",
"metrics": {...}, "claims": [{"id", "statement", "paper_value", "measured", "holds", "reason"}]}``. A claim
restates the paper for our scale and ``holds`` is computed by code from measured numbers; a claim that does not
hold is reported as not holding, with a one-line ``reason`` where the numbers alone do not say why.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from paperdag.io import write_json

METRICS_FILE = "metrics.json"


@dataclass(frozen=True)
class Claim:
    """One checked claim: ``holds`` must be the result of a comparison on ``measured`` numbers."""

    id: str
    statement: str
    paper_value: Any
    measured: Any
    holds: bool
    reason: str = ""


def write_metrics(out: Path, metrics: dict[str, Any], claims: list[Claim]) -> None:
    """Write ``out/metrics.json``; the platform adds paper, title and profile when publishing it."""
    rows = [asdict(c) | {"holds": bool(c.holds)} for c in claims]
    write_json(Path(out) / METRICS_FILE, {"metrics": metrics, "claims": rows})
