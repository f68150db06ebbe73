"""Stage ``evaluate``: extraction attacks (exposure by exact enumeration, greedy, sampled), held-out utility along
the sparsity sweep beside the trivial rungs (ladder.py: Kneser-Ney n-grams and the count bigram of each model's
training bytes), p0 on held-out public records and on held-out private records in the public templates (its own
domain, beside the count models of its corpus), the token-level checks, the certificate medians of the verify stage,
the claims (claims.py) and the figures (plots.py)."""

from __future__ import annotations

import numpy as np

from paperdag.claims import write_metrics
from paperdag.io import read_table, save_figure, write_table
from paperdag.stage import StageContext

from .analysis import ATTACKED, attack_canary, sweep_utility, token_checks
from .certify import CERTIFICATE_FILE
from .claims import claims
from .ladder import bigram_nll, per_seed_rungs, shared_rungs
from .lm import mean_nll
from .params import Params
from .plots import plot_bounds, plot_exposure, plot_sparsity, plot_utility
from .prepare import CANARY_FILE, PRIVATE_FILE, PUBLIC_FILE
from .records import public_tokens, read_canaries, shard_tokens
from .summary import (
    extraction_intervals,
    ppl_intervals,
    prompt_certificates,
    seed_table,
    smallest_preserving,
)
from .train import SHARDS, eval_windows
from .verify import seed_models

HEADROOM_ORDER = 4  # the smoothed count 4-gram beside the count bigram (and the order chosen on validation) on
# utility_headroom's ladder
WINDOW_STREAM = 1000  # seed s's held-out windows come from generator seed * 1000 + s: another root draws other ones


def canary_group(model: str, where: str) -> str:
    """single / dup; for a shard model q_i: own (its shard only), other (the other shard only) or dup."""
    if where == "both" or model not in ("q1", "q2"):
        return "dup" if where == "both" else "single"
    return "own" if model == f"q{where}" else "other"


def evaluate(ctx: StageContext[Params]) -> dict[str, float]:
    """extraction.parquet, metrics.json with the claims and the figures."""
    p, private = ctx.params, ctx.input("prepare", PRIVATE_FILE)
    rows: dict[str, list] = {k: [] for k in ("seed", "canary", "model", "group", "exposure", "p_extract", "greedy")}
    nll: dict[str, list[float]] = {}
    sweep: dict[str, list[list[float]]] = {"nll": [], "kept": []}
    checks: dict[str, list[float]] = {}
    shards: dict[str, list[np.ndarray]] = {m: [] for m in SHARDS}
    held_windows: list[np.ndarray] = []
    known_windows: list[np.ndarray] = []  # held-out private records in the public templates: p0's own domain
    p0_known: list[float] = []
    public_val = eval_windows(public_tokens(ctx.input("prepare", PUBLIC_FILE), "val", records_only=True),
                              p.model.context, p.seed)
    for s in ctx.progress(range(p.n_seeds), desc="seeds"):
        models = seed_models(ctx, s)
        for c in read_canaries(ctx.input("prepare", CANARY_FILE), s):
            for m, res in attack_canary(models, c, p.keep_mass).items():
                for key, v in ({"seed": s, "canary": c.name, "model": m, "group": canary_group(m, c.where)}
                               | res).items():
                    rows[key].append(v)
        held = eval_windows(shard_tokens(private, s, ("heldout",)), p.model.context, p.seed * WINDOW_STREAM + s)
        held_windows.append(held.numpy())
        known = eval_windows(shard_tokens(private, s, ("heldout_known",)), p.model.context,
                             p.seed * WINDOW_STREAM + s)
        known_windows.append(known.numpy())
        p0_known.append(mean_nll(models.nets["p0"], known))
        seed_nll, seed_sweep = sweep_utility(models, held, p.keep_mass, p.sparsity_grid)
        for m, v in seed_nll.items():
            nll.setdefault(m, []).append(v)
        sweep["nll"].append([seed_sweep[km][0] for km in p.sparsity_grid])
        sweep["kept"].append([seed_sweep[km][1] for km in p.sparsity_grid])
        for m, splits in SHARDS.items():
            shards[m].append(shard_tokens(private, s, splits))
        for k, v in token_checks(models, held, p.keep_mass).items():
            checks.setdefault(k, []).append(v)
    nll_public = mean_nll(models.nets["p0"], public_val)  # p0 is one model for every seed
    orders, valid = tuple(p.ngram_orders), public_val.numpy()  # the orders are chosen on held-out public records
    count = {m: per_seed_rungs(shards[m], valid, held_windows, orders) for m in SHARDS}
    public_train = public_tokens(ctx.input("prepare", PUBLIC_FILE), "train")
    count["public"] = shared_rungs(public_train, valid, known_windows, orders)  # p0's rungs, in p0's domain
    write_table(ctx.output("extraction.parquet"), rows)
    prompts = prompt_certificates(read_table(ctx.input("verify", CERTIFICATE_FILE)).to_pydict())
    table = seed_table(prompts, p.keep_mass)
    nats = {m: np.array(v) for m, v in nll.items()}
    rungs = {"fine_tuning": {m: count[m].chosen_nll() for m in SHARDS},
             "public": count["public"].rungs("the public corpus"),
             "headroom": {"KN n-gram of q_full's training bytes (order chosen on validation)":
                          count["q_full"].chosen_nll(),
                          f"KN {HEADROOM_ORDER}-gram of q_full's training bytes": count["q_full"].kn[HEADROOM_ORDER],
                          "count bigram of q_full's training bytes": count["q_full"].bigram}}
    grid, sw_nll, sw_kept = p.sparsity_grid, np.array(sweep["nll"]), np.array(sweep["kept"])
    gap = nats["p0"] - nats["q_full"]  # the NLL fine-tuning gains over p0: the utility margins are shares of it
    sparse = [smallest_preserving(dict(zip(grid, sw_nll[s], strict=True)), dict(zip(grid, sw_kept[s], strict=True)),
                                  p.claims.min_effect_share * gap[s]) for s in range(p.n_seeds)]
    seeds = {c: table[c].to_numpy() for c in ("excess_fraction", "excess_cp_delta", "minimax", "base_ratio")}
    seeds |= {"sparse_keep_mass": np.array([km for km, _, _ in sparse]),
              "sparse_fraction": np.array([f for _, f, _ in sparse]),
              "sparse_censored": np.array([c for _, _, c in sparse]),
              "sparse_k": np.array([table.loc[s, f"k_scp@{km:g}"] for s, (km, _, _) in enumerate(sparse)]),
              "sparse_k_base": np.array([table.loc[s, f"kb_scp@{km:g}"] for s, (km, _, _) in enumerate(sparse)]),
              "p0_ppl_ratio": np.exp(nll_public - nats["q_full"]), "p0_known_nll": np.array(p0_known)}
    intervals = extraction_intervals(rows) | ppl_intervals(nats)
    metrics = {k: iv.mean for k, iv in intervals.items()} | {k: float(v) for k, v in table.mean().items()}
    metrics |= {"cp_minimax_gap": max(checks["cp_minimax_gap"]), "closed_form_err": max(checks["closed_form_err"]),
                "min_above_minimax": min(checks["min_above_minimax"]),
                "scp_over_minimax": float(np.mean(checks["scp_over_minimax"])),
                "log2_canary_space": p.records.code_digits * np.log2(10), "p0_public_nll": nll_public,
                "bigram_public_nll": bigram_nll(public_train, valid)}
    for m, c in count.items():
        metrics |= {f"kn{k}_nll_{m}": float(v.mean()) for k, v in c.kn.items()}
        metrics |= {f"bigram_nll_{m}": float(c.bigram.mean()), f"kn_order_{m}": float(np.median(c.chosen))}
    metrics |= {f"kept_fraction@{km:g}": float(f) for km, f in zip(grid, sw_kept.mean(0), strict=True)}
    metrics |= {f"ppl_scp@{km:g}": float(v) for km, v in zip(grid, np.exp(sw_nll).mean(0), strict=True)}
    write_metrics(ctx.out, metrics, claims(metrics, intervals, nats, seeds, rungs, p.claims, p.plans))
    save_figure(plot_bounds(prompts, p.keep_mass), ctx.output("bounds.png"))
    save_figure(plot_exposure(intervals, ATTACKED, metrics["log2_canary_space"]), ctx.output("exposure.png"))
    save_figure(plot_utility(intervals), ctx.output("utility.png"))
    save_figure(plot_sparsity(grid, table, sw_kept, sw_nll, gap, p.claims), ctx.output("sparsity.png"))
    return {k: metrics[k] for k in ("excess_fraction", "exposure_scp_delta_r_single", "ppl_gap_scp_vs_q_full")}
