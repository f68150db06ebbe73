"""Stage ``train_seq``: fit the sequence head (seqhead.py) with several seeds on native training peptides and
measure native sequence recovery and perplexity on held-out complexes against the majority-class and composition
baselines (seq_eval.json); the first seed's head assigns the designs' sequences (seqhead.safetensors)."""

from __future__ import annotations

import numpy as np

from paperdag.io import read_table, save_tensors, write_json
from paperdag.stage import StageContext

from .params import Params
from .prepare import EXAMPLES_FILE
from .seqhead import baselines, fit_head, log_probs, recovery_perplexity, rows_to_batch, split_validation

SEQHEAD_FILE = "seqhead.safetensors"
SEQ_EVAL_FILE = "seq_eval.json"


def cluster_bootstrap(values: np.ndarray, clusters: np.ndarray, rng: np.random.Generator, n_boot: int
                      ) -> tuple[float, float]:
    """95% percentile interval of the mean of ``values`` when whole clusters (source files) are resampled."""
    ids, inv = np.unique(clusters, return_inverse=True)
    sums, counts = np.bincount(inv, values, len(ids)), np.bincount(inv, minlength=len(ids))
    draws = rng.integers(len(ids), size=(n_boot, len(ids)))
    means = sums[draws].sum(1) / counts[draws].sum(1)
    return float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975))


def train_seq(ctx: StageContext[Params]) -> dict[str, float]:
    """seqhead.safetensors and seq_eval.json; returns the held-out recovery / perplexity and their baselines."""
    p = ctx.params.seqhead
    rows = read_table(ctx.input("prepare", EXAMPLES_FILE)).to_pylist()
    fit_rows, val_rows = split_validation([r for r in rows if r["split"] == "train"], p.val_every)
    test_rows = [r for r in rows
                 if r["split"] == "heldout" or (r["split"] == "target" and r["kind"] == "peptide_complex")]
    fit, val, test = rows_to_batch(fit_rows), rows_to_batch(val_rows), rows_to_batch(test_rows)
    mask = test["y"] >= 0
    y = test["y"][mask]
    cluster = np.repeat([r["source_file"] for r in test_rows], mask.sum(1))
    complex_ = np.repeat([r["kind"] == "peptide_complex" for r in test_rows], mask.sum(1))
    correct, nll, per_seed = np.zeros(len(y)), np.zeros(len(y)), []
    for k in range(p.seeds):
        net, best_step = fit_head(fit, val, p, int(ctx.rng.integers(2**31)), ctx.device,
                                  lambda name, v, step, k=k: ctx.log_metric(name, v, step, run=f"seed{k}"),
                                  lambda steps, k=k: ctx.progress(steps, desc=f"seq head seed {k}"))
        lp = log_probs(net, test["x"], mask)[mask]
        correct += (lp.argmax(-1) == y) / p.seeds
        nll += -lp[np.arange(len(y)), y] / p.seeds
        per_seed.append(recovery_perplexity(log_probs(net, test["x"], mask), test["y"]) | {"best_step": best_step})
        if k == 0:
            save_tensors(ctx.output(SEQHEAD_FILE), net.state_dict())
    base = baselines(fit["y"], test["y"])
    counts = np.bincount(fit["y"][fit["y"] >= 0], minlength=20) + 1.0
    base_correct = (y == counts.argmax()).astype(float)
    base_nll = -np.log(counts / counts.sum())[y]
    gain_ci = cluster_bootstrap(correct - base_correct, cluster, ctx.rng, p.n_bootstrap)
    nll_ci = cluster_bootstrap(base_nll - nll, cluster, ctx.rng, p.n_bootstrap)
    out = {"seq_recovery": float(np.mean([s["recovery"] for s in per_seed])),
           "seq_perplexity": float(np.mean([s["perplexity"] for s in per_seed])),
           "seq_recovery_seed_sd": float(np.std([s["recovery"] for s in per_seed])),
           "seq_majority_recovery": base["majority_recovery"],
           "seq_composition_perplexity": base["composition_perplexity"],
           "seq_composition_expected_recovery": base["composition_expected_recovery"],
           "seq_recovery_gain_ci_low": gain_ci[0], "seq_recovery_gain_ci_high": gain_ci[1],
           "seq_nll_gain_ci_low": nll_ci[0], "seq_nll_gain_ci_high": nll_ci[1],
           "seq_recovery_real_complexes": float(correct[complex_].mean()),
           "seq_n_heldout_residues": int(len(y)), "seq_n_heldout_files": int(len(set(cluster))),
           "seq_n_train_residues": int((fit["y"] >= 0).sum())}
    write_json(ctx.output(SEQ_EVAL_FILE), out | {"per_seed": per_seed, "majority_class": base["majority_class"],
                                                 "validation_files": sorted({r["source_file"] for r in val_rows})})
    return out
