"""The paper's claims restated for our scale: a pure function from per-seed measurements to claims.

Per dataset (shapes, digits):
- preconditions, one per encoder (SimCLR, NCL, BayesNCL): it learned its task, beating both trivial baselines of an
  encoder: its own untrained initialisation by more than ``learn_margin_pp`` probe points (paired by seed; it fails
  when the interval lies below that margin) and a linear probe on the raw pixels (the same probe without an
  encoder; deterministic, so a reference value); and reaching ``supervised_fraction`` of the probe accuracy of a
  supervised encoder on the same backbone (the upper bound; paired by seed);
- evidence: (1) semantic consistency (the paper's: over all activated test samples of a dimension, interpret.py)
  orders BayesNCL > NCL > SimCLR, with the top-m consistency reported beside it as a secondary reading; (2)
  BayesNCL has the smallest share of background-predicting active dimensions; (3) BayesNCL's probe accuracy is
  within +- ``probe_tol_pp`` points of every baseline's (equivalence), reported with the seeds a 95% interval of
  half-width below that margin would need at the observed spread (the power argument, ``seeds_needed``). Every
  comparison is a paired per-seed difference (the methods share the seed of their initialisation and batches) judged
  by a shared interval rule; a claim of several comparisons holds when all hold, fails when one fails, and is
  inconclusive otherwise.
"""

from __future__ import annotations

import numpy as np

from paperdag.common.stats import Interval, mean_ci, paired_diff_ci
from paperdag.common.verdicts import (
    Claim,
    all_of,
    equivalence,
    evidence,
    precondition,
    seeds_needed,
    superiority,
)

from .params import ClaimParams

PAPER = "bayesncl"
BASELINES = ("simclr", "ncl")
Runs = dict[tuple[str, str, str], np.ndarray]  # (dataset, method, metric) -> one value per seed, in seed order


def _ci(x: Interval) -> dict[str, float | int | list[float]]:
    return {"mean": round(x.mean, 4), "ci": [round(x.lo, 4), round(x.hi, 4)], "n": x.n}


def _learned(runs: Runs, pixels: float, d: str, m: str, untrained: str, supervised: str, p: ClaimParams) -> Claim:
    acc, sup = runs[d, m, "probe_acc"], runs[d, supervised, "probe_acc"]
    gain = paired_diff_ci(acc, runs[d, untrained, "probe_acc"])
    over_fraction = paired_diff_ci(acc, p.supervised_fraction * sup)
    acc_ci = mean_ci(acc)
    return precondition(
        f"{m}_learned_{d}", f"{d}: the {m} encoder learned its task: its linear-probe accuracy beats its untrained "
        f"initialisation by > {p.learn_margin_pp:g} points (paired by seed), a linear probe on the raw pixels, and "
        f"{p.supervised_fraction:g} x the probe accuracy of the supervised encoder on the same backbone (paired by "
        "seed)",
        "the untrained encoder of the same seed, the same linear probe on raw pixels, and the supervised upper bound "
        "(same backbone, data, augmentations and steps, cross-entropy)",
        {"probe_acc": _ci(acc_ci), "untrained_probe_acc": _ci(mean_ci(runs[d, untrained, "probe_acc"])),
         "gain_over_untrained": _ci(gain), "raw_pixel_probe_acc": round(pixels, 4),
         "supervised_probe_acc": _ci(mean_ci(sup)), "share_of_supervised": round(float(acc.mean() / sup.mean()), 4),
         f"probe_acc - {p.supervised_fraction:g} x supervised": _ci(over_fraction)},
        all_of({"untrained": superiority(gain, margin=p.learn_margin_pp / 100, sesoi=p.learn_margin_pp / 100,
                                          what=f"{m} - untrained probe acc"),
                 "pixels": superiority(acc_ci, reference=pixels, what=f"{m} probe acc"),
                 "supervised": superiority(over_fraction, what=f"{m} - {p.supervised_fraction:g} x supervised probe "
                                                               "acc")}))


def _per_method(runs: Runs, d: str, metric: str, methods: list[str]) -> dict[str, dict]:
    return {m: _ci(mean_ci(runs[d, m, metric])) for m in methods}


def claims(runs: Runs, pixels: dict[str, float], methods: list[str], datasets: list[str], untrained: str,
           supervised: str, p: ClaimParams) -> list[Claim]:
    """``runs[(dataset, method, metric)]``: per-seed values (the methods, ``untrained`` and ``supervised`` share
    seeds) of consistency, consistency_top_m, background_share and probe_acc (only probe_acc for ``supervised``);
    ``pixels[dataset]``: the raw-pixel probe's accuracy; ``methods`` include "simclr", "ncl" and "bayesncl"."""
    out = []
    for d in datasets:
        learned = [_learned(runs, pixels[d], d, m, untrained, supervised, p) for m in methods]
        out += learned
        requires = [c.id for c in learned]

        def diff(metric: str, a: str, b: str, d: str = d) -> Interval:
            return paired_diff_ci(runs[d, a, metric], runs[d, b, metric])

        order = {"bayesncl > ncl": diff("consistency", PAPER, "ncl"), "ncl > simclr": diff("consistency", "ncl",
                                                                                            "simclr")}
        out.append(evidence(
            f"consistency_order_{d}", f"{d}: semantic consistency (share of a dimension's most frequent class among "
            "all its activated test samples, row-normalised features, the paper's released metric; mean over "
            "dimensions) "
            "orders BayesNCL > NCL > SimCLR (paired per-seed differences, 95% CIs above 0)",
            "+142.1% semantic consistency over the state of the art (ImageNet-100, ResNet-18)",
            _per_method(runs, d, "consistency", methods) | {k: _ci(v) for k, v in order.items()}
            | {"secondary_top_m_consistency": _per_method(runs, d, "consistency_top_m", methods)},
            all_of({k: superiority(v, what=f"consistency {k.replace(' > ', ' - ')}") for k, v in order.items()}),
            requires=requires))
        lower = {b: diff("background_share", PAPER, b) for b in BASELINES}
        out.append(evidence(
            f"background_share_lowest_{d}", f"{d}: BayesNCL has the smallest share of active dimensions whose top "
            "images are purer in background than in class (chance-corrected; paired differences to each baseline, "
            "95% CIs below 0)", "qualitative: the gate filters high-frequency common (background) features",
            _per_method(runs, d, "background_share", methods) | {f"bayesncl - {b}": _ci(v) for b, v in lower.items()},
            all_of({b: superiority(v, direction="below", what=f"background share bayesncl - {b}")
                     for b, v in lower.items()}), requires=requires))
        gaps = {b: diff("probe_acc", PAPER, b) for b in BASELINES}
        margin = p.probe_tol_pp / 100
        out.append(evidence(
            f"probe_parity_{d}", f"{d}: BayesNCL's linear-probe accuracy (frozen encoder) is within "
            f"+-{p.probe_tol_pp:g} points of every baseline's (paired equivalence: the 95% CI of each per-seed "
            "difference inside the margin)",
            "'without compromising downstream task performance' (ImageNet-100 linear probe)",
            _per_method(runs, d, "probe_acc", methods) | {f"bayesncl - {b}": _ci(v) for b, v in gaps.items()}
            | {f"seeds_for_halfwidth_below_margin (bayesncl - {b})": seeds_needed(v, margin)
               for b, v in gaps.items()},
            all_of({b: equivalence(v, margin=margin, what=f"probe acc bayesncl - {b}") for b, v in gaps.items()}),
            requires=requires))
    return out
