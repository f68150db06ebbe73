"""Evaluate: validation-loss curves, steps to AdamW's final loss, row-norm uniformity, time and memory; claims.

Per seed s, the target is AdamW's (best lr) final validation loss on seed s; each optimizer's steps to reach it
come from ``steps_to_target``. A claim holds only if it holds on every seed; means and spreads are reported.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from paperdag.claims import Claim, write_metrics
from paperdag.common.corpus import fixed_batches, load_split_tokens
from paperdag.io import read_json, read_table, write_json
from paperdag.papers.normuon.analysis import finite_or_none, seed_stats, step_reduction, steps_to_target
from paperdag.papers.normuon.benchmark import time_optimizer
from paperdag.papers.normuon.stages import CORPUS_FILE, model_config, run_config
from paperdag.stage import StageContext

OPTS = ("adamw", "muon", "normuon")
COLORS = {"adamw": "tab:blue", "muon": "tab:orange", "normuon": "tab:green"}


def load_curves(folder: Path) -> dict[int, dict[str, list]]:
    """Selected runs of a train stage's ``curves.parquet``: seed -> {"step", "val_loss", "row_cv"}."""
    rows = read_table(Path(folder) / "curves.parquet").to_pydict()
    out: dict[int, dict[str, list]] = {}
    for i, sel in enumerate(rows["selected"]):
        if sel:
            run = out.setdefault(rows["seed"][i], {"step": [], "val_loss": [], "row_cv": []})
            for key in run:
                run[key].append(rows[key][i])
    return out


def plot_curves(curves: dict[str, dict[int, dict[str, list]]], targets: list[float], path: Path) -> None:
    """Validation loss (mean over seeds, min-max band, AdamW target) and update row-norm CV against step."""
    fig = Figure(figsize=(11, 4))
    ax_loss, ax_cv = fig.subplots(1, 2)
    for name, runs in curves.items():
        steps = np.asarray(next(iter(runs.values()))["step"])
        for ax, key in ((ax_loss, "val_loss"), (ax_cv, "row_cv")):
            vals = np.asarray([r[key] for r in runs.values()], dtype=float)
            keep = np.isfinite(vals).all(axis=0)
            ax.plot(steps[keep], vals.mean(0)[keep], color=COLORS[name], label=f"{name} ({len(runs)} seeds)")
            ax.fill_between(steps[keep], vals.min(0)[keep], vals.max(0)[keep], color=COLORS[name], alpha=0.2)
    ax_loss.axhline(float(np.mean(targets)), color="gray", ls="--", lw=1, label="AdamW final (target)")
    ax_loss.set(xlabel="step", ylabel="validation loss (nats/byte)", title="Validation loss")
    ax_cv.set(xlabel="step", ylabel="CV of per-row update norms", title="Neuron-wise update imbalance")
    for ax in (ax_loss, ax_cv):
        ax.legend()
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def _benchmark(ctx: StageContext, adamw_lr: float) -> dict[str, dict[str, float]]:
    p = ctx.params
    val = load_split_tokens(Path(ctx.inputs["prepare"]) / CORPUS_FILE, "val")
    batch = fixed_batches(val, 1, p.batch_size, p.context, seed=p.seed)[0]
    cfgs = {
        "adamw": run_config(p, "adamw", adamw_lr, adamw_lr, p.adamw_weight_decay, p.seed),
        "muon": run_config(p, "muon", p.muon_lr, p.muon_aux_lr, p.muon_weight_decay, p.seed),
        "normuon": run_config(p, "normuon", p.muon_lr, p.muon_aux_lr, p.muon_weight_decay, p.seed, p.normuon_beta2),
    }
    return {name: time_optimizer(model_config(p), cfg, batch, ctx.device, p.bench_steps) for name, cfg in cfgs.items()}


def build_claims(
    metrics: dict[str, object],
    reduction: dict[str, list[float]],
    gain_pp: list[float],
    row_cv: dict[str, list[float]],
    final: dict[str, list[float]],
) -> list[Claim]:
    """The paper's claims restated for our scale; each holds only if its comparison holds on every seed."""
    return [
        Claim("fewer_steps_than_adamw",
              "NorMuon reaches AdamW's final validation loss in fewer steps than AdamW (on every seed)",
              "21.74% fewer steps (1.1B model)",
              {"reduction_pct": metrics["normuon_step_reduction_vs_adamw_pct"],
               "per_seed_pct": finite_or_none([100 * r for r in reduction["normuon"]])},
              all(r > 0 for r in reduction["normuon"])),
        Claim("larger_gain_than_muon",
              "NorMuon's step reduction vs AdamW is at least Muon's: it needs no more steps than Muon (every seed)",
              "+11.31 percentage points over Muon (1.1B model)",
              {"gain_pp": metrics["normuon_minus_muon_gain_pp"], "per_seed_pp": finite_or_none(gain_pp),
               "muon_reduction_pct": metrics["muon_step_reduction_vs_adamw_pct"]},
              all(g >= 0 for g in gain_pp)),
        Claim("more_uniform_neuron_updates",
              "NorMuon's per-neuron (row) update norms are more uniform than Muon's: lower coefficient of variation, "
              "averaged over hidden matrices and training (every seed)",
              "Muon's updates have highly non-uniform neuron norms; NorMuon balances them",
              {"muon_cv": metrics["muon_update_row_cv"], "normuon_cv": metrics["normuon_update_row_cv"]},
              all(a < b for a, b in zip(row_cv["normuon"], row_cv["muon"]))),
        Claim("lowest_final_loss",
              "NorMuon ends below both AdamW's and Muon's validation loss at the same token budget (every seed)",
              "NorMuon consistently outperforms both AdamW and Muon",
              {n: metrics[f"{n}_final_val_loss"] for n in OPTS},
              all(c < min(a, m) for c, a, m in zip(final["normuon"], final["adamw"], final["muon"]))),
    ]  # fmt: skip


def evaluate(ctx: StageContext) -> dict[str, float]:
    """Compute the comparison metrics, write the claims, the curves plot and the timing benchmark."""
    curves = {name: load_curves(ctx.inputs[f"train_{name}"]) for name in OPTS}
    runs = {name: read_json(Path(ctx.inputs[f"train_{name}"]) / "runs.json") for name in OPTS}
    seeds = sorted(curves["adamw"])
    if any(sorted(curves[n]) != seeds for n in OPTS):
        raise ValueError(f"optimizers were trained on different seeds: { {n: sorted(curves[n]) for n in OPTS} }")
    final = {n: [curves[n][s]["val_loss"][-1] for s in seeds] for n in OPTS}
    targets = final["adamw"]
    to_target = {n: [steps_to_target(curves[n][s]["step"], curves[n][s]["val_loss"], t) for s, t in zip(seeds, targets)]
                 for n in OPTS}  # fmt: skip
    reduction = {
        n: [step_reduction(a, b) for a, b in zip(to_target[n], to_target["adamw"])] for n in ("muon", "normuon")
    }
    gain_pp = [100 * (a - b) for a, b in zip(reduction["normuon"], reduction["muon"])]
    row_cv = {n: [float(np.nanmean(curves[n][s]["row_cv"])) for s in seeds] for n in OPTS}
    adamw_lr = next(r["lr"] for r in runs["adamw"] if r["selected"])
    state = {n: next(r["hidden_state_bytes"] for r in runs[n] if r["selected"]) for n in OPTS}
    timing = _benchmark(ctx, adamw_lr)
    write_json(ctx.out / "timing.json", timing)
    plot_curves(curves, targets, ctx.out / "curves.png")

    metrics: dict[str, object] = {"seeds": seeds, "adamw_best_lr": adamw_lr, "adamw_lr_sweep": {
        f"{r['lr']:g}": r["final_val_loss"] for r in runs["adamw"] if r["seed"] == seeds[0]}}  # fmt: skip
    for n in OPTS:
        metrics[f"{n}_final_val_loss"] = seed_stats(final[n])
        metrics[f"{n}_steps_to_adamw_final"] = finite_or_none(to_target[n])
        metrics[f"{n}_update_row_cv"] = seed_stats(row_cv[n])
        metrics[f"{n}_hidden_state_bytes"] = state[n]
        metrics[f"{n}_optimizer_step_ms"] = timing[n]["optimizer_step_ms"]
        metrics[f"{n}_train_step_ms"] = timing[n]["train_step_ms"]
    for n in ("muon", "normuon"):
        metrics[f"{n}_step_reduction_vs_adamw_pct"] = seed_stats([100 * r for r in reduction[n]])
    metrics["normuon_minus_muon_gain_pp"] = seed_stats(gain_pp)
    metrics["normuon_state_over_muon"] = state["normuon"] / state["muon"]
    metrics["normuon_state_over_adamw"] = state["normuon"] / state["adamw"]

    write_metrics(ctx.out, metrics, build_claims(metrics, reduction, gain_pp, row_cv, final))
    summary = {
        "normuon_reduction_pct": metrics["normuon_step_reduction_vs_adamw_pct"]["mean"],
        "muon_reduction_pct": metrics["muon_step_reduction_vs_adamw_pct"]["mean"],
        "normuon_row_cv": metrics["normuon_update_row_cv"]["mean"],
        "muon_row_cv": metrics["muon_update_row_cv"]["mean"],
    }
    return {k: v for k, v in summary.items() if v is not None}
