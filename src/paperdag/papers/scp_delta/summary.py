"""From per-sequence and per-canary tables to the reported numbers: medians of the certificates, and means over
seeds with Student-t intervals (paperdag.common.stats) of exposures, extraction rates and perplexities."""

from __future__ import annotations

import numpy as np

from paperdag.common.stats import Interval, mean_ci, paired_diff_ci

from .models import METHODS

PROTECTED_KINDS = ("single", "stdlib", "records")  # sequences that have a safe model (dup canaries have none)


def bound_medians(cert: dict[str, list]) -> dict[str, float]:
    """Median summed Delta_max and KL certificate per method over PROTECTED_KINDS, and over duplicated canaries."""
    out = {}
    for m in METHODS:
        for div in ("dmax", "kl", "dmax_base", "kl_base"):
            for label, kinds in (("", PROTECTED_KINDS), ("_dup", ("dup",))):
                vals = [v for v, k, mm in zip(cert[div], cert["kind"], cert["method"], strict=True)
                        if mm == m and k in kinds]
                out[f"{div}_median_{m}{label}"] = float(np.median(vals)) if vals else float("nan")
    return out


def seed_bound_ratios(cert: dict[str, list], div: str) -> np.ndarray:
    """Per seed (ascending): median ``div`` certificate of CP-Delta over SCP-Delta_r's, over PROTECTED_KINDS."""
    def median(seed: int, method: str) -> float:
        return float(np.median([v for v, k, m, s in zip(cert[div], cert["kind"], cert["method"], cert["seed"],
                                                         strict=True) if m == method and k in PROTECTED_KINDS
                                and s == seed]))
    return np.array([median(s, "cp_delta") / median(s, "scp_delta_r") for s in sorted(set(cert["seed"]))])


def per_seed_means(rows: dict[str, list], value: str, model: str, group: str) -> list[float]:
    """For each seed, the mean of ``value`` over the canaries of ``group`` (single / dup / own) attacked on model."""
    seeds = sorted(set(rows["seed"]))
    return [float(np.mean([v for v, s, m, g in zip(rows[value], rows["seed"], rows["model"], rows["group"],
                                                   strict=True) if s == seed and m == model and g == group]))
            for seed in seeds]


def extraction_intervals(rows: dict[str, list]) -> dict[str, Interval]:
    """``{value}_{model}_{group}`` -> mean over seeds with CI, for every attacked model and canary group present."""
    keys = sorted({(m, g) for m, g in zip(rows["model"], rows["group"], strict=True)})
    return {f"{v}_{m}_{g}": mean_ci(per_seed_means(rows, v, m, g))
            for v in ("exposure", "p_extract", "greedy") for m, g in keys}


def ppl_intervals(nll: dict[str, list[float]]) -> dict[str, Interval]:
    """Held-out perplexity exp(NLL) per model over seeds, and the paired relative gaps of SCP-Delta_r."""
    ppl = {m: np.exp(v) for m, v in nll.items()}
    out = {f"ppl_{m}": mean_ci(v) for m, v in ppl.items()}
    out["ppl_gap_scp_vs_q_full"] = mean_ci(ppl["scp_delta_r"] / ppl["q_full"] - 1.0)
    out["ppl_diff_scp_minus_cp_delta"] = paired_diff_ci(ppl["scp_delta_r"], ppl["cp_delta"])
    return out
