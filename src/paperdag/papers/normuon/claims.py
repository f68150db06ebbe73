"""The paper's claims restated for our scale: a pure function from the per-seed comparison to claims of two kinds.

- preconditions: every optimizer's model beats the strongest trivial baseline on the validation windows it is scored
  on (competence: reaching AdamW's final loss means something only if AdamW beats a count model). The ladder
  (``ladder.py``): Kneser-Ney n-grams of orders 2-5 fitted on the training bytes, the order chosen on held-out
  windows, and the Witten-Bell bigram; the model is judged against the strongest rung, the next one beside it;
- evidence, each judged by a shared interval rule over seeds (paired by seed, runs k of every optimizer share seed
  + k): NorMuon saves steps against AdamW, saves more than Muon, has more uniform per-neuron updates than Muon, and
  ends below AdamW and below Muon; every margin is a described param.

Every interval is over training seeds, judged under the ``seeds`` plan declared in params.yaml.
"""

from __future__ import annotations

import math
import numpy as np

from paperdag.common.plans import SamplePlan
from paperdag.common.stats import Interval, mean_ci, paired_diff_ci
from paperdag.common.verdicts import Claim, evidence, precondition, superiority

from .analysis import Comparison, finite_or_none
from .ladder import Baselines
from .params import ClaimParams, Plans

LABELS = {"adamw": "AdamW", "muon": "Muon", "normuon": "NorMuon"}
UNIT = "seed"


def _r(x: float) -> float:
    return round(float(x), 4)


def _ci(values: list[float]) -> Interval:
    """``mean_ci`` of per-seed values; an all-NaN interval when one is not finite (a target never reached), which
    the rules judge inconclusive with that reason."""
    if all(math.isfinite(v) for v in values):
        return mean_ci(values, unit=UNIT)
    return Interval(math.nan, math.nan, math.nan, len(values), unit=UNIT)


def _rounded(x: Interval) -> dict | None:
    """``x.rounded()``, or None for the interval of a non-finite seed."""
    return x.rounded() if math.isfinite(x.lo) else None


def competent_id(name: str) -> str:
    return f"{name}_beats_ngram"


def claims(c: Comparison, base: Baselines, p: ClaimParams, plans: Plans) -> list[Claim]:
    """Competence of every optimizer's model; steps saved against AdamW, the gain over Muon, neuron-update uniformity
    and the final loss against AdamW and Muon, each with its margin from ``p`` and its plan from ``plans``."""
    plan = plans.seeds
    return [*(_competence(n, c.final[n], base, plan) for n in c.final), *_steps(c, p, plan), _uniformity(c, p, plan),
            *(_lower_loss(c, other, p, plan) for other in ("adamw", "muon"))]


def _competence(name: str, final: list[float], base: Baselines, plan: SamplePlan) -> Claim:
    loss, ladder = mean_ci(final, unit=UNIT), base.ladder()
    bar = ladder.strongest
    orders = f"{min(base.ngram)}-{max(base.ngram)}"
    return precondition(
        competent_id(name), f"{LABELS[name]}'s final val loss (95% CI over seeds) lies below the strongest trivial "
        f"baseline's on the same validation windows: Kneser-Ney count n-grams of orders {orders} fitted on the "
        "training bytes (order chosen on held-out validation windows, history cut to the window) and the Witten-Bell "
        "bigram", bar.name,
        {"final_val_loss": loss.rounded(), "per_seed": [_r(v) for v in final], "baseline": bar.name,
         "baseline_val_loss": _r(bar.point()), "kn_val_loss": {str(k): _r(v) for k, v in base.ngram.items()},
         "kn_chosen_order": base.chosen, "kn_heldout_loss": {str(k): _r(v) for k, v in base.heldout.items()},
         "bigram": _r(base.bigram), "bigram_add_one": _r(base.bigram_add_one)},
        superiority(loss, direction="below", reference=bar.point(), what=f"{LABELS[name]}'s final val loss",
                    plan=plan), ladder=ladder)


def _requires(*names: str) -> list[str]:
    return [competent_id(n) for n in names]


def _steps(c: Comparison, p: ClaimParams, plan: SamplePlan) -> list[Claim]:
    reduction_pct = [100 * r for r in c.reduction["normuon"]]
    muon_pct = [100 * r for r in c.reduction["muon"]]
    gain_pp = [a - b for a, b in zip(reduction_pct, muon_pct, strict=True)]  # paired by seed
    saved, gain = _ci(reduction_pct), _ci(gain_pp)
    return [
        evidence("fewer_steps_than_adamw", f"NorMuon reaches AdamW's final validation loss in more than "
                 f"{p.min_step_reduction_pct:g}% fewer steps than AdamW (95% CI over seeds)",
                 "21.74% fewer steps (1.1B model)",
                 {"reduction_pct": _rounded(saved), "per_seed_pct": finite_or_none(reduction_pct)},
                 superiority(saved, margin=p.min_step_reduction_pct, what="NorMuon's step reduction (%)", plan=plan),
                 requires=_requires("adamw", "normuon")),
        evidence("larger_gain_than_muon", f"NorMuon's step reduction against AdamW exceeds Muon's by more than "
                 f"{p.min_gain_over_muon_pp:g} percentage points (paired by seed)",
                 "+11.31 percentage points over Muon (1.1B model)",
                 {"gain_pp": _rounded(gain), "per_seed_pp": finite_or_none(gain_pp),
                  "muon_reduction_pct": _rounded(_ci(muon_pct))},
                 superiority(gain, margin=p.min_gain_over_muon_pp, what="NorMuon minus Muon step reduction (pp)",
                             plan=plan),
                 requires=_requires("adamw", "muon", "normuon")),
    ]


def _uniformity(c: Comparison, p: ClaimParams, plan: SamplePlan) -> Claim:
    scaled_muon = p.max_row_cv_ratio * np.asarray(c.row_cv["muon"])
    d = paired_diff_ci(c.row_cv["normuon"], scaled_muon, unit=UNIT)
    return evidence(
        "more_uniform_neuron_updates", f"NorMuon's per-neuron (row) update norms are more uniform than Muon's: its "
        f"coefficient of variation, averaged over hidden matrices and training, is below {p.max_row_cv_ratio:g} x "
        "Muon's (paired by seed)", "Muon's updates have highly non-uniform neuron norms; NorMuon balances them",
        {"muon_cv": mean_ci(c.row_cv["muon"], unit=UNIT).rounded(),
         "normuon_cv": mean_ci(c.row_cv["normuon"], unit=UNIT).rounded(), "normuon_minus_scaled_muon": d.rounded()},
        superiority(d, direction="below", what=f"NorMuon's CV minus {p.max_row_cv_ratio:g} x Muon's", plan=plan),
        requires=_requires("muon", "normuon"))


def _lower_loss(c: Comparison, other: str, p: ClaimParams, plan: SamplePlan) -> Claim:
    d = paired_diff_ci(c.final["normuon"], c.final[other], unit=UNIT)
    return evidence(
        f"lower_final_loss_than_{other}", f"NorMuon ends more than {p.min_final_loss_margin:g} nats/byte below "
        f"{LABELS[other]}'s validation loss at the same token budget (paired by seed)",
        "NorMuon consistently outperforms both AdamW and Muon",
        {f"normuon_minus_{other}": d.rounded(), "normuon": mean_ci(c.final["normuon"], unit=UNIT).rounded(),
         other: mean_ci(c.final[other], unit=UNIT).rounded()},
        superiority(d, direction="below", margin=p.min_final_loss_margin, what=f"NorMuon minus {other} final loss",
                    plan=plan),
        requires=_requires(other, "normuon"))
