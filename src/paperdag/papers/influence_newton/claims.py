"""The paper's claims restated for our scale: a pure function from the measurements of evaluate to claims.

- preconditions: IF and NS are competent, each closer to the exact refit theta_T than the trivial "no update"
  estimate theta_hat (error ||theta_T - theta_hat||, the shift) in every certified cell;
- evidence: the scaling exponents (``trend``: the 95% CI of a fitted exponent inside the paper's value +-
  ``slope_tol``), NS beating IF in every certified random cell, IF's predicted-on-actual slope for coherent groups
  below 1 (``superiority`` with reference 1) and NS's slopes inside 1 +- ``track_tol`` (``trend``);
- checks: every cell passes the certificate of the paper's local conditions, every exact refit reached the Newton
  solver's gradient target (implementation invariants: reported, not counted as a reproduction).

"A beats B in a cell" is ``superiority`` above 0 of the log error ratio log(err_B / err_A), paired over the cell's
subsets: errors are positive and spread over orders of magnitude between subsets (the shift of a removal is
heavy-tailed), and the paper's comparison is a ratio. A claim over many cells or fits holds when every one holds,
fails when one fails, and is inconclusive otherwise; its reason names the deciding one (the first failing, else the
first inconclusive, else the first; cells are taken tightest first, by the lower bound of their log ratio).
"""

from __future__ import annotations

import numpy as np

from paperdag.common.stats import Interval, paired_diff_ci
from paperdag.common.verdicts import (
    Claim,
    Judgement,
    all_of,
    check,
    evidence,
    precondition,
    superiority,
    trend,
)

from .analysis import PAPER_EXPONENTS
from .params import ClaimParams
from .stats import Coef

IF_COMPETENT, NS_COMPETENT = "if_beats_no_update", "ns_beats_no_update"


def _sig(x: float, digits: int = 4) -> float:
    """x rounded to ``digits`` significant digits (errors span 1e-8 .. 1e-1)."""
    return float(f"{x:.{digits}g}")


def _coef(c: Coef) -> dict[str, float | int | list[float]]:
    return {"estimate": round(c.estimate, 4), "ci95": [round(c.lo, 4), round(c.hi, 4)], "n": c.n}


def _cell_label(cells: dict[str, list], i: int) -> str:
    return f"n={cells['n'][i]} d={cells['d'][i]} k={cells['k'][i]} {cells['kind'][i]}"


def _every_cell(cells: dict[str, list], worse: str, better: str, kinds: tuple[str, ...],
                what: str) -> tuple[Judgement, dict[str, object]]:
    """``superiority`` above 0 of log(worse / better), paired over the subsets of a cell, in every cell of ``kinds``,
    combined by ``all_of`` with the cells ordered by their lower bound (the tightest first)."""
    rows = [(i, paired_diff_ci(np.log(cells[worse][i]), np.log(cells[better][i]))) for i in range(len(cells["n"]))
            if cells["kind"][i] in kinds]
    rows.sort(key=lambda r: r[1].lo)
    judged = [(_cell_label(cells, i), superiority(x, what=what)) for i, x in rows]
    decision = all_of(dict(judged))
    i, x = next((i, x) for (i, x), (_, j) in zip(rows, judged, strict=True) if j.verdict == decision.verdict)
    measured = {"cells": len(rows), "cells_holding": sum(j.verdict == "holds" for _, j in judged),
                "deciding_cell": _cell_label(cells, i), f"mean_{worse}": _sig(float(np.mean(cells[worse][i]))),
                f"mean_{better}": _sig(float(np.mean(cells[better][i]))), "log_ratio": _interval(x),
                "geometric_mean_ratio": _sig(float(np.exp(x.mean)))}
    return decision, measured


def _interval(x: Interval) -> dict[str, float | list[float]]:
    return {"mean": _sig(x.mean), "ci": [_sig(x.lo), _sig(x.hi)], "n": x.n}


def _competence(cells: dict[str, list], method: str, name: str) -> Claim:
    judged, measured = _every_cell(cells, "shift", f"err_{method}", ("random", "coherent"),
                                   f"log(||theta_T - theta_hat|| / ||theta_T - theta_{method.upper()}||)")
    return precondition(
        IF_COMPETENT if method == "if" else NS_COMPETENT,
        f"{name} is closer to the exact refit theta_T than the trivial no-update estimate theta_hat in every "
        "certified cell (random and coherent): the 95% CI of log(shift / its error), paired over the cell's "
        "subsets, lies above 0",
        "no update: theta_hat itself, error ||theta_T - theta_hat|| (the shift)", measured, judged)


def claims(fit: dict[str, dict[str, Coef]], cells: dict[str, list], slopes: dict[tuple[str, str], Coef],
           certificate: tuple[int, int], refit: tuple[float, float], group: tuple[int, int],
           p: ClaimParams) -> list[Claim]:
    """The claims from the scaling ``fit``s of the per-cell means, the per-subset errors of every certified cell
    (``cells``, analysis.cell_subsets), the group-effect ``slopes`` by (kind, method) at ``group`` = (n, d), the
    ``certificate`` (cells, cells failed), the ``refit`` (largest gradient norm of an exact refit, solver target)
    and the tolerances ``p``."""
    random_cells = sum(kind == "random" for kind in cells["kind"])
    scope = (f"joint log-log fit over the means of {random_cells} certified random cells; holds if the 95% CI lies "
             f"inside the paper's exponent +- {p.slope_tol:g} (allowance for its polylog factors)")

    def exponent(claim_id: str, key: tuple[str, str], what: str, requires: list[str]) -> Claim:
        c, value = fit[key[0]][key[1]], PAPER_EXPONENTS[key]
        return evidence(claim_id, f"{what} ({scope})", value, _coef(c),
                        trend(c, predicted=value, tol=p.slope_tol, what=f"the fitted exponent of {key[1]}"),
                        requires=requires)

    both = [IF_COMPETENT, NS_COMPETENT]
    beats, beats_measured = _every_cell(cells, "err_if", "err_ns", ("random",), "log(err_IF / err_NS)")
    n, d = group
    tracks = all_of({kind: trend(slopes[kind, "ns"], predicted=1.0, tol=p.track_tol, what=f"NS's slope ({kind} groups)")
                     for kind in ("random", "coherent")})
    cells_total, cells_failed = certificate
    grad_norm, newton_tol = refit
    return [
        _competence(cells, "if", "The influence function theta_IF"),
        _competence(cells, "ns", "The Newton step theta_NS"),
        exponent("ns_error_exponent_k", ("err_ns", "k"), "NS error ||theta_T - theta_NS|| grows like k^1",
                 [NS_COMPETENT]),
        exponent("ns_error_exponent_d", ("err_ns", "d"), "NS error ||theta_T - theta_NS|| grows like d^1",
                 [NS_COMPETENT]),
        exponent("ns_error_exponent_n", ("err_ns", "n"), "NS error ||theta_T - theta_NS|| decays like n^-2",
                 [NS_COMPETENT]),
        exponent("ns_if_gap_exponent_kd", ("gap", "kd"), "||theta_NS - theta_IF|| grows like ((k + d) sqrt(k d))^1",
                 both),
        exponent("ns_if_gap_exponent_n", ("gap", "n"), "||theta_NS - theta_IF|| decays like n^-2", both),
        exponent("if_ns_ratio_exponent", ("ratio", "balance"),
                 "IF/NS error ratio grows like ((k + d) / sqrt(k d))^1: largest for k << d or k >> d", both),
        evidence("ns_beats_if_every_cell", "NS is more accurate than IF in every certified random cell: the 95% CI "
                 "of log(err_IF / err_NS), paired over the cell's subsets, lies above 0",
                 "ratio ~ (k + d) / sqrt(k d) >= 2, up to constants", beats_measured, beats, requires=both),
        evidence("group_if_underestimates_coherent", "IF underestimates the actual test-loss change of coherent "
                 f"(same-cluster) groups: the 95% CI of its predicted-on-actual slope lies below 1 (n={n}, d={d})",
                 "< 1", _coef(slopes["coherent", "if"]),
                 superiority(slopes["coherent", "if"], direction="below", reference=1.0,
                             what="IF's slope (coherent groups)"), requires=[IF_COMPETENT]),
        evidence("group_ns_tracks_actual", "NS tracks the actual test-loss change of random and coherent groups: "
                 f"each predicted-on-actual slope's 95% CI lies inside [{1 - p.track_tol:g}, {1 + p.track_tol:g}] "
                 f"(n={n}, d={d})", 1.0, {kind: _coef(slopes[kind, "ns"]) for kind in ("random", "coherent")},
                 tracks, requires=[NS_COMPETENT]),
        check("certificate_every_cell", "every (n, d, k, kind) cell passes the certificate of the paper's local "
              "conditions (theta_hat a minimiser; leave-T-out Hessian floor at theta_hat and theta_NS)",
              "local strong convexity and smoothness around the Newton step (the paper's assumption)",
              {"cells": cells_total, "cells_failed": cells_failed}, cells_failed == 0,
              f"{cells_failed} of {cells_total} cells fail the certificate (left out of every fit)"),
        check("refits_converged", f"every exact leave-T-out refit reached the Newton target ||grad L_-T|| <= "
              f"{newton_tol:g}", "theta_T = argmin L_-T (exact refit)",
              {"max_grad_norm": _sig(grad_norm), "newton_tol": newton_tol}, grad_norm <= newton_tol,
              f"largest refit gradient norm {grad_norm:.3g} > {newton_tol:g}"),
    ]
