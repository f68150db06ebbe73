"""The paper's claims restated for our scale: a pure function from measured numbers to ``Claim``s."""

from __future__ import annotations

from paperdag.claims import Claim

from .analysis import Connection, paired_difference
from .params import ClaimParams


def _r(x: float) -> float:
    return round(float(x), 4)


def claims(c: dict[str, Connection], unigram: float, mhc_failed_layers: int, mhc_max_dev: float,
           overhead_pct: float, p: ClaimParams) -> list[Claim]:
    """Learning sanity, manifold check, mixing gain (HC vs mHC), stability, final loss and step-time overhead."""
    res, hc, mhc = c["residual"], c["hc"], c["mhc"]
    worst = {k: float(v.final_val_loss.max()) for k, v in c.items()}
    vs_hc, vs_res = paired_difference(mhc, hc), paired_difference(mhc, res)
    return [
        Claim("all_models_learn", "every run's final val loss is below the unigram byte model's (trivial baseline)",
              paper_value="(sanity check, not a paper claim)",
              measured={"worst_final_val_loss": {k: _r(v) for k, v in worst.items()}, "unigram": _r(unigram)},
              holds=max(worst.values()) < unigram),
        Claim("mhc_on_manifold", f"every trained mHC H_res (each layer, each validation token, each seed) has row "
              f"and column sums within {p.manifold_tol:g} of 1 and no negative entry",
              paper_value="H_res doubly stochastic by construction (Sinkhorn-Knopp, t_max = 20)",
              measured={"failed_layers": mhc_failed_layers, "max_deviation": mhc_max_dev},
              holds=mhc_failed_layers == 0),
        Claim("hc_gain_explodes", f"HC's composite mixing gain (max abs row/column sum of prod H_res, worst token) "
              f"peaks at >= {p.hc_gain_min:g} in every seed",
              paper_value="peaks near 3000 (27B model)",
              measured={"peak_gain_per_seed": [_r(g) for g in hc.peak_gain]},
              holds=bool((hc.peak_gain >= p.hc_gain_min).all())),
        Claim("mhc_gain_bounded", f"mHC's composite mixing gain stays <= {p.mhc_gain_max:g} in every seed",
              paper_value="at most about 1.6 (27B model)",
              measured={"peak_gain_per_seed": [_r(g) for g in mhc.peak_gain]},
              holds=bool((mhc.peak_gain <= p.mhc_gain_max).all())),
        Claim("mhc_more_stable_than_hc", "mHC has fewer gradient-norm + loss spikes than HC (all seeds together)",
              paper_value="HC: loss surge and gradient-norm instability near 12k steps; mHC stable (27B)",
              measured={"spikes_mhc": mhc.spikes, "spikes_hc": hc.spikes,
                        "max_grad_norm_mhc": _r(mhc.max_grad_norm.max()),
                        "max_grad_norm_hc": _r(hc.max_grad_norm.max())},
              holds=mhc.spikes < hc.spikes,
              reason="" if mhc.spikes < hc.spikes else "HC shows no more spikes than mHC at this scale and budget"),
        Claim("mhc_as_stable_as_residual", "mHC has no more gradient-norm + loss spikes than the residual baseline",
              paper_value="mHC's gradient norm as stable as the baseline's (27B)",
              measured={"spikes_mhc": mhc.spikes, "spikes_residual": res.spikes},
              holds=mhc.spikes <= res.spikes),
        Claim("mhc_matches_hc_loss", f"mHC's mean final val loss is at most {p.loss_match_tol:g} nats/byte above HC's",
              paper_value="mHC below HC on the 27B loss curve (HC unstable)",
              measured={"mhc_minus_hc": _r(vs_hc.mean), "ci95": [_r(vs_hc.lo), _r(vs_hc.hi)]},
              holds=vs_hc.mean <= p.loss_match_tol),
        Claim("mhc_matches_residual_loss", f"mHC's mean final val loss is at most {p.loss_match_tol:g} nats/byte "
              f"above the residual baseline's", paper_value="-0.021 (mHC minus baseline final loss, 27B)",
              measured={"mhc_minus_residual": _r(vs_res.mean), "ci95": [_r(vs_res.lo), _r(vs_res.hi)]},
              holds=vs_res.mean <= p.loss_match_tol),
        Claim("step_time_overhead", f"mHC's training step takes at most {p.max_overhead_pct:g}% longer than the "
              f"residual's (eager PyTorch, no fused kernels)", paper_value="+6.7% at n = 4 (fused kernels, 27B)",
              measured={"overhead_pct": round(overhead_pct, 1)}, holds=overhead_pct <= p.max_overhead_pct,
              reason="" if overhead_pct <= p.max_overhead_pct else
              "eager per-op kernels on a width-32 stream: the n-fold stream and 20 Sinkhorn iterations per sub-layer "
              "are not amortised as in the paper's fused kernels at width 4k"),
    ]
