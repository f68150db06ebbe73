"""The paper's claims restated for our scale: a pure function from seed-aggregated measurements to ``Claim``s.

Per dataset (shapes, digits): (1) semantic consistency orders BayesNCL > NCL > SimCLR (seed means); (2) BayesNCL
has the smallest share of background-predicting active dimensions; (3) BayesNCL's linear-probe accuracy is within
``probe_tol_pp`` points of the best baseline's; (4) sanity: every pretrained encoder's probe accuracy beats the
untrained encoder of the same seed by ``learn_margin_pp`` points.
"""

from __future__ import annotations

from paperdag.claims import Claim
from paperdag.common.stats import Interval

from .params import ClaimParams

PAPER = "BayesNCL"


def claims(summary: dict[tuple[str, str, str], Interval], probe_by_run: dict[tuple[str, str, int], float],
           methods: list[str], datasets: list[str], untrained: str, p: ClaimParams) -> list[Claim]:
    """``summary[(dataset, method, metric)]`` are seed intervals, ``probe_by_run[(dataset, method, seed)]`` single
    runs' probe accuracies; ``methods`` include "simclr", "ncl" and "bayesncl"."""
    out = []
    baselines = [m for m in methods if m != "bayesncl"]
    for d in datasets:
        def of(metric: str) -> dict[str, Interval]:
            return {m: summary[d, m, metric] for m in methods}

        sc, bg, acc = of("consistency"), of("background_share"), of("probe_acc")
        best = max(sc[m].mean for m in baselines)
        out.append(Claim(
            f"consistency_order_{d}", f"{d}: semantic consistency of the top-activating test images per active "
            "dimension orders BayesNCL > NCL > SimCLR (seed means)",
            paper_value="+142.1% semantic consistency over the state of the art (ImageNet-100, ResNet-18)",
            measured={m: v.rounded() for m, v in sc.items()} | {"gain_vs_best_baseline_pct":
                                                           round(100 * (sc["bayesncl"].mean / best - 1), 2)},
            holds=sc["bayesncl"].mean > sc["ncl"].mean > sc["simclr"].mean))
        out.append(Claim(
            f"background_share_lowest_{d}", f"{d}: BayesNCL has the smallest share of active dimensions whose "
            "top images are purer in background than in class (chance-corrected)",
            paper_value="qualitative: the gate filters high-frequency common (background) features",
            measured={m: v.rounded() for m, v in bg.items()},
            holds=bg["bayesncl"].mean < min(bg[m].mean for m in baselines)))
        best_acc = max(acc[m].mean for m in baselines)
        out.append(Claim(
            f"probe_parity_{d}", f"{d}: BayesNCL's linear-probe accuracy (frozen encoder) is within "
            f"{p.probe_tol_pp:g} points of the best baseline's",
            paper_value="'without compromising downstream task performance' (ImageNet-100 linear probe)",
            measured={m: v.rounded() for m, v in acc.items()}
            | {"gap_pp": round(100 * (acc["bayesncl"].mean - best_acc), 2)},
            holds=acc["bayesncl"].mean >= best_acc - p.probe_tol_pp / 100))
        gains = {f"{m}/seed{s}": round(100 * (a - probe_by_run[d, untrained, s]), 2)
                 for (dd, m, s), a in probe_by_run.items() if dd == d and m != untrained}
        out.append(Claim(
            f"encoders_learned_{d}", f"{d}: every pretrained encoder's probe accuracy beats the untrained encoder "
            f"of its seed by >= {p.learn_margin_pp:g} points (sanity: the models learned their task)",
            paper_value="precondition of every comparison",
            measured={"gain_pp": gains, "untrained": summary[d, untrained, "probe_acc"].rounded()},
            holds=min(gains.values()) >= p.learn_margin_pp))
    return out
