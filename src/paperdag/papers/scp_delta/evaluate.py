"""Stage ``evaluate``: extraction attacks (exposure by exact enumeration, greedy, sampled), held-out utility beside
the count byte bigram of each model's training bytes (paperdag.common.ngram, the trivial baseline), the minimax
headroom of the tightness claim, shift sparsity and the certificate medians, the claims (claims.py) and the figures
(plots.py)."""

from __future__ import annotations

import numpy as np

from paperdag.claims import write_metrics
from paperdag.common.ngram import bigram_cross_entropies
from paperdag.io import read_table, save_figure, write_table
from paperdag.stage import StageContext

from .analysis import ATTACKED, attack_canary, minimax_headroom, shift_sparsity, utility_nll
from .claims import claims
from .params import Params
from .plots import plot_bounds, plot_exposure, plot_utility
from .prepare import CANARY_FILE, PRIVATE_FILE
from .records import read_canaries, shard_tokens
from .summary import bound_medians, extraction_intervals, ppl_intervals, seed_bound_ratios
from .train import SHARDS, eval_windows
from .verify import CERTIFICATE_FILE, seed_models


def canary_group(model: str, where: str) -> str:
    """single / dup; for a shard model q_i: own (its shard only), other (the other shard only) or dup."""
    if where == "both" or model not in ("q1", "q2"):
        return "dup" if where == "both" else "single"
    return "own" if model == f"q{where}" else "other"


def evaluate(ctx: StageContext[Params]) -> dict[str, float]:
    """extraction.parquet, metrics.json with the claims, bounds.png, exposure.png and utility.png."""
    p = ctx.params
    rows: dict[str, list] = {k: [] for k in ("seed", "canary", "model", "group", "exposure", "p_extract", "greedy")}
    nll: dict[str, list[float]] = {}
    sparsity: dict[str, list[float]] = {}
    bigram: dict[str, list[float]] = {}
    headroom: list[float] = []
    for s in ctx.progress(range(p.n_seeds), desc="seeds"):
        models = seed_models(ctx, s)
        for c in read_canaries(ctx.input("prepare", CANARY_FILE), s):
            for m, res in attack_canary(models, c, p.keep_mass).items():
                row = {"seed": s, "canary": c.name, "model": m, "group": canary_group(m, c.where)} | res
                for key, v in row.items():
                    rows[key].append(v)
        held = eval_windows(shard_tokens(ctx.input("prepare", PRIVATE_FILE), s, ("heldout",)), p.model.context, s)
        for m, v in utility_nll(models, held, p.keep_mass).items():
            nll.setdefault(m, []).append(v)
        for k, v in shift_sparsity(models, held, p.keep_mass, p.kl_mass).items():
            sparsity.setdefault(k, []).append(v)
        pairs = (held[:, :-1].numpy(), held[:, 1:].numpy())
        for m, splits in SHARDS.items():
            fit = bigram_cross_entropies(shard_tokens(ctx.input("prepare", PRIVATE_FILE), s, splits), *pairs)
            bigram.setdefault(m, []).append(min(fit.values()))
        headroom.append(minimax_headroom(models, held, p.keep_mass))
    write_table(ctx.output("extraction.parquet"), rows)
    cert = read_table(ctx.input("verify", CERTIFICATE_FILE)).to_pydict()
    bounds = bound_medians(cert)
    intervals = extraction_intervals(rows) | ppl_intervals({m: np.array(v) for m, v in nll.items()})
    log2_space = p.records.code_digits * np.log2(10)
    metrics = bounds | {k: iv.mean for k, iv in intervals.items()} | {k: float(np.mean(v)) for k, v in sparsity.items()}
    metrics |= {"bound_ratio_cp_over_scp": bounds["dmax_median_cp_delta"] / bounds["dmax_median_scp_delta_r"],
                "base_bound_ratio_cp_over_scp": bounds["dmax_base_median_cp_delta"]
                / bounds["dmax_base_median_scp_delta_r"],
                "log2_canary_space": log2_space, "p0_nll_heldout": float(np.mean(nll["p0"])),
                "minimax_headroom": float(np.mean(headroom))}
    metrics |= {f"bigram_nll_{m}_shards": float(np.mean(v)) for m, v in bigram.items()}
    ratios = {div: seed_bound_ratios(cert, div) for div in ("dmax", "dmax_base")}
    nats = {m: np.array(v) for m, v in nll.items()} | {f"bigram_{m}": np.array(v) for m, v in bigram.items()}
    write_metrics(ctx.out, metrics, claims(metrics, intervals, nats, ratios, np.array(headroom), p.claims))
    save_figure(plot_bounds(cert), ctx.output("bounds.png"))
    save_figure(plot_exposure(intervals, ATTACKED, log2_space), ctx.output("exposure.png"))
    save_figure(plot_utility(intervals), ctx.output("utility.png"))
    return {k: metrics[k] for k in ("bound_ratio_cp_over_scp", "exposure_q_full_single", "ppl_gap_scp_vs_q_full")}
