"""From the certificate and extraction tables to the reported numbers: per seed, medians over single-shard canary
prompts of the sequence-level certificates (certify.py), and means over seeds with Student-t intervals
(paperdag.common.stats, unit ``seed``) of exposures, extraction rates and perplexities.

Per prompt x and certified model: k_x, the NAF k at x, is the larger of the two shard rows (items of either shard
may be asked for); k_x^base the p0 row; K*_x the minimax bound. Per seed, over the single-shard canaries:
    excess fraction  = median_x (k_x(SCP) - K*_x) / median_x (k_x(CP-Delta) - K*_x),
    base ratio       = median_x k_x^base(CP-Delta) / median_x k_x^base(SCP),
and for every keep_mass of the sweep the median k_x of SCP-Delta_r at that keep_mass, against the shards and p0.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from paperdag.common.stats import Interval, mean_ci, paired_diff_ci

SHARDS = ("q1", "q2")


def prompt_certificates(cert: dict[str, list]) -> pd.DataFrame:
    """One row per (seed, canary, method, keep_mass): where, k (max over the shard rows), k_base (the p0 row),
    minimax; the fixed methods carry keep_mass -1."""
    df = pd.DataFrame(cert).fillna({"keep_mass": -1.0})
    keys = ["seed", "canary", "where", "method", "keep_mass"]
    shard = df[df["safe"].isin(SHARDS)].groupby(keys).agg(k=("k", "max"), minimax=("minimax", "first"))
    base = df[df["safe"] == "p0"].set_index(keys)["k"].rename("k_base")
    return shard.join(base).reset_index()


def seed_table(prompts: pd.DataFrame, keep_mass: float) -> pd.DataFrame:
    """Per seed (index) over single-shard canaries: median k, k_base and excess k - K* of each model (columns
    ``k_<m>``, ``k_base_<m>``, ``excess_<m>``; SCP-Delta_r at ``keep_mass``), the excess fraction, the base ratio,
    and ``k_scp@<km>`` along the sweep."""
    single = prompts[prompts["where"] != "both"].copy()
    single["excess"] = single["k"] - single["minimax"]
    main = single[(single["method"] != "scp_delta_r") | (single["keep_mass"] == keep_mass)]
    med = main.groupby(["seed", "method"])[["k", "k_base", "excess"]].median().unstack("method")
    out = pd.DataFrame({f"{v}_{m}": med[(v, m)] for v, m in med.columns})
    out["excess_fraction"] = out["excess_scp_delta_r"] / out["excess_cp_delta"]
    out["base_ratio"] = out["k_base_cp_delta"] / out["k_base_scp_delta_r"]
    out["minimax"] = single.groupby("seed")["minimax"].median()
    along = single[single["method"] == "scp_delta_r"].groupby(["seed", "keep_mass"])
    sweep, base = along["k"].median().unstack(), along["k_base"].median().unstack()
    out = out.join(sweep.rename(columns=lambda km: f"k_scp@{km:g}"))
    return out.join(base.rename(columns=lambda km: f"kb_scp@{km:g}"))


def smallest_preserving(nll: dict[float, float], kept: dict[float, float],
                        margin_nats: float) -> tuple[float, float, bool]:
    """(keep_mass, kept fraction, censored) of the sparsest grid point whose held-out NLL is at most ``margin_nats``
    above the full shift's (keep_mass 1), on utility alone; the full shift preserves itself, so one exists.
    ``censored``: the grid's sparsest point already preserves, so the answer lies at or below it."""
    ok = [km for km in sorted(nll) if nll[km] <= nll[1.0] + margin_nats]
    return ok[0], kept[ok[0]], ok[0] == min(nll)


def per_seed_means(rows: dict[str, list], value: str, model: str, group: str) -> list[float]:
    """For each seed, the mean of ``value`` over the canaries of ``group`` (single / dup / own) attacked on model."""
    df = pd.DataFrame(rows)
    sel = df[(df["model"] == model) & (df["group"] == group)]
    return sel.groupby("seed")[value].mean().sort_index().tolist()


def extraction_intervals(rows: dict[str, list]) -> dict[str, Interval]:
    """``{value}_{model}_{group}`` -> mean over seeds with CI, for every attacked model and canary group present."""
    keys = sorted({(m, g) for m, g in zip(rows["model"], rows["group"], strict=True)})
    return {f"{v}_{m}_{g}": mean_ci(per_seed_means(rows, v, m, g), unit="seed")
            for v in ("exposure", "p_extract", "greedy") for m, g in keys}


def ppl_intervals(nll: dict[str, list[float]]) -> dict[str, Interval]:
    """Held-out perplexity exp(NLL) per model over seeds, and the paired relative gaps of SCP-Delta_r."""
    ppl = {m: np.exp(v) for m, v in nll.items()}
    out = {f"ppl_{m}": mean_ci(v, unit="seed") for m, v in ppl.items()}
    out["ppl_gap_scp_vs_q_full"] = mean_ci(ppl["scp_delta_r"] / ppl["q_full"] - 1.0, unit="seed")
    out["ppl_diff_scp_minus_cp_delta"] = paired_diff_ci(ppl["scp_delta_r"], ppl["cp_delta"], unit="seed")
    return out
