"""The claims contract every paper's evaluate stage fulfils (the claim model and its rules:
``paperdag.common.verdicts``).

``metrics/<slug>.json`` = ``{"paper", "title", "profile", "key", "headline", "evidence_holding", "evidence_failing",
"evidence_inconclusive", "evidence_total", "checks_passing", "checks_total", "preconditions_holding",
"preconditions_total", "claims_holding", "claims_total", "regime_reached", "verdicts", "holds", "metrics": {...},
"claims": [{"id", "kind", "statement", "paper_value", "measured", "verdict", "holds", "reason", "requires",
"rule", ...}]}``. Each claim restates the paper for our scale; its verdict is computed by a shared rule from measured
numbers, and evidence whose preconditions do not all hold is inconclusive. A claim judged on an interval also has
``unit`` (what one value is), ``n`` and ``plan`` (its sample-size plan: ``planned_n``, ``pilot_n``, ``looks``, ...);
an inconclusive one its ``cause``; a precondition names its ``baseline`` with the ``ladder`` of trivial baselines
(strongest first) or the ``bound`` it is measured against. This module is imported by the
orchestrator, so it stays light: the rules (scipy) are imported only by the evaluate stage that writes the claims.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from paperdag.io import write_json

if TYPE_CHECKING:
    from paperdag.common.verdicts import Claim

METRICS_FILE = "metrics.json"
VERDICT_CODE = {"holds": 1, "fails": 0, "inconclusive": -1}  # claim.<id> in MLflow and the DVC summary


def write_metrics(out: Path, metrics: dict[str, Any], claims: Iterable[Claim]) -> None:
    """Write ``out/metrics.json`` with the claims resolved (preconditions gating evidence); the platform adds paper,
    title, profile and the verdict counts when publishing it."""
    from paperdag.common.verdicts import resolve

    write_json(Path(out) / METRICS_FILE, {"metrics": metrics, "claims": [c.row() for c in resolve(claims)]})


def counts(claims: Iterable[dict[str, Any]]) -> dict[str, int]:
    """The headline numbers of published claim rows: evidence holding / failing / inconclusive / total, checks
    passing / total, preconditions holding / total, and claims holding / total (every kind: the old headline)."""
    rows = list(claims)

    def n(kind: str | None, verdict: str | None) -> int:
        return sum(1 for c in rows if kind in (None, c.get("kind")) and verdict in (None, c.get("verdict")))

    return {"evidence_holding": n("evidence", "holds"), "evidence_failing": n("evidence", "fails"),
            "evidence_inconclusive": n("evidence", "inconclusive"), "evidence_total": n("evidence", None),
            "checks_passing": n("check", "holds"), "checks_total": n("check", None),
            "preconditions_holding": n("precondition", "holds"), "preconditions_total": n("precondition", None),
            "claims_holding": n(None, "holds"), "claims_total": len(rows)}


def headline(c: dict[str, Any]) -> str:
    """``evidence h holds / f fails / i inconclusive; checks c/C; preconditions p/P`` from ``counts``."""
    return (f"evidence {c['evidence_holding']} holds / {c['evidence_failing']} fails / "
            f"{c['evidence_inconclusive']} inconclusive; checks {c['checks_passing']}/{c['checks_total']}; "
            f"preconditions {c['preconditions_holding']}/{c['preconditions_total']}")
