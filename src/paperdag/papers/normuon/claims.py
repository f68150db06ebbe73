"""The paper's claims restated for our scale: a pure function from the per-seed comparison to ``Claim``s.

Each claim holds only if its comparison holds on every seed; means and spreads over seeds are reported.
"""

from __future__ import annotations

from paperdag.claims import Claim

from .analysis import Comparison, finite_or_none, seed_stats
from .params import ClaimParams


def claims(c: Comparison, p: ClaimParams) -> list[Claim]:
    """Fewer steps than AdamW, a larger step reduction than Muon's, more uniform neuron updates than Muon's, and
    the lowest final validation loss, each with its threshold from ``p``."""
    reduction_pct = [100 * r for r in c.reduction["normuon"]]
    muon_pct = [100 * r for r in c.reduction["muon"]]
    gain_pp = c.gain_pp
    final = c.final
    return [
        Claim("fewer_steps_than_adamw",
              "NorMuon reaches AdamW's final validation loss in fewer steps than AdamW (on every seed)",
              "21.74% fewer steps (1.1B model)",
              {"reduction_pct": seed_stats(reduction_pct), "per_seed_pct": finite_or_none(reduction_pct)},
              all(r > p.min_step_reduction_pct for r in reduction_pct)),
        Claim("larger_gain_than_muon",
              "NorMuon's step reduction vs AdamW is at least Muon's: it needs no more steps than Muon (every seed)",
              "+11.31 percentage points over Muon (1.1B model)",
              {"gain_pp": seed_stats(gain_pp), "per_seed_pp": finite_or_none(gain_pp),
               "muon_reduction_pct": seed_stats(muon_pct)},
              all(g >= p.min_gain_over_muon_pp for g in gain_pp)),
        Claim("more_uniform_neuron_updates",
              "NorMuon's per-neuron (row) update norms are more uniform than Muon's: lower coefficient of variation, "
              "averaged over hidden matrices and training (every seed)",
              "Muon's updates have highly non-uniform neuron norms; NorMuon balances them",
              {"muon_cv": seed_stats(c.row_cv["muon"]), "normuon_cv": seed_stats(c.row_cv["normuon"])},
              all(a < p.max_row_cv_ratio * b for a, b in zip(c.row_cv["normuon"], c.row_cv["muon"], strict=True))),
        Claim("lowest_final_loss",
              "NorMuon ends below both AdamW's and Muon's validation loss at the same token budget (every seed)",
              "NorMuon consistently outperforms both AdamW and Muon",
              {n: seed_stats(final[n]) for n in ("adamw", "muon", "normuon")},
              all(n < min(a, m) - p.min_final_loss_margin
                  for n, a, m in zip(final["normuon"], final["adamw"], final["muon"], strict=True))),
    ]  # fmt: skip
