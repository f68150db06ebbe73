"""The paper's claims restated for our scale: a pure function from the fits of evaluate to ``Claim``s.

An exponent claim holds when the 95% CI of the fitted exponent meets the paper's exponent +- ``slope_tol`` (the
paper's rates hold up to polylog factors); a tracking claim when the CI of a predicted-on-actual slope meets
1 +- ``track_tol``.
"""

from __future__ import annotations

import numpy as np

from paperdag.claims import Claim

from .analysis import PAPER_EXPONENTS
from .params import ClaimParams
from .stats import Coef


def _measured(c: Coef) -> dict[str, float | list[float]]:
    return {"estimate": round(c.estimate, 4), "ci95": [round(c.lo, 4), round(c.hi, 4)]}


def claims(fit: dict[str, dict[str, Coef]], ratio: np.ndarray, slopes: dict[tuple[str, str], Coef], n_subsets: int,
           group: tuple[int, int], p: ClaimParams) -> list[Claim]:
    """The claims from the scaling fits of the per-cell means (``fit``), the per-cell err_IF / err_NS ``ratio``,
    the group-effect ``slopes`` by (kind, method) at ``group`` = (n, d), and the tolerances ``p``."""
    scope = (f"joint log-log fit over {len(ratio)} certified random cells of the mean over {n_subsets} subsets; "
             f"holds if the 95% CI meets the paper's exponent +- {p.slope_tol:g} (allowance for its polylog factors)")

    def exponent(claim_id: str, key: tuple[str, str], what: str) -> Claim:
        c, value = fit[key[0]][key[1]], PAPER_EXPONENTS[key]
        return Claim(claim_id, f"{what} ({scope})", value, _measured(c), c.within(value, p.slope_tol))

    n, d = group
    return [
        exponent("ns_error_exponent_k", ("err_ns", "k"), "NS error ||theta_T - theta_NS|| grows like k^1"),
        exponent("ns_error_exponent_d", ("err_ns", "d"), "NS error ||theta_T - theta_NS|| grows like d^1"),
        exponent("ns_error_exponent_n", ("err_ns", "n"), "NS error ||theta_T - theta_NS|| decays like n^-2"),
        exponent("ns_if_gap_exponent_kd", ("gap", "kd"), "||theta_NS - theta_IF|| grows like ((k + d) sqrt(k d))^1"),
        exponent("ns_if_gap_exponent_n", ("gap", "n"), "||theta_NS - theta_IF|| decays like n^-2"),
        exponent("if_ns_ratio_exponent", ("ratio", "balance"),
                 "IF/NS error ratio grows like ((k + d) / sqrt(k d))^1: largest for k << d or k >> d"),
        Claim("ns_beats_if_every_cell", "NS is more accurate than IF: mean err_IF / mean err_NS > 1 in every "
              "certified random cell", "ratio ~ (k + d) / sqrt(k d) >= 2, up to constants",
              {"min_ratio": round(float(ratio.min()), 3), "cells": len(ratio)}, bool(ratio.min() > 1)),
        Claim("group_if_underestimates_coherent", "IF underestimates the actual test-loss change of coherent "
              f"(same-cluster) groups: 95% CI of the predicted-on-actual slope below 1 (n={n}, d={d})",
              "< 1", _measured(slopes["coherent", "if"]), slopes["coherent", "if"].hi < 1.0),
        Claim("group_ns_tracks_actual", "NS tracks the actual test-loss change of random and coherent groups: "
              f"each predicted-on-actual slope's 95% CI meets [{1 - p.track_tol:g}, {1 + p.track_tol:g}]", 1.0,
              {kind: _measured(slopes[kind, "ns"]) for kind in ("random", "coherent")},
              all(slopes[kind, "ns"].within(1.0, p.track_tol) for kind in ("random", "coherent"))),
    ]
