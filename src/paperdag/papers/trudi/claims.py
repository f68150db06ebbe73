"""The paper's claims restated for our scale: a pure function from per-seed numbers (analysis.py) to claims of three
kinds. Every interval is a 95% t interval over seeds, paired where methods share seeds (paperdag.common.stats).

- precondition (the regime): every compared configuration learned its task (its gain over the trivial zero- or
  random-action policy lies above ``learn_frac`` of the best configuration's gain on that simulator, reported with
  its fraction of that best gain; DPPO's per-step clipping and the final-step baselines at the base learning rate, so
  that failing at the large one is the learning rate's doing); the stress test stresses (without the whole-chain
  trust region the chain moves ``kl_factor`` x farther per update than TruDi's); the on-par comparison is made at
  matched step sizes (TruDi's epsilon is Gaussian PPO's measured per-update KL, train.py; its mean per-update chain
  KL must land within ``kl_factor`` of Gaussian PPO's) on plateaued curves (the late rise below the on-par margin);
  the detour rewards keeping both modes (its congestion term: a split scripted batch beats a one-sided one).
- evidence: TruDi's return above DPPO's (per-step clipping) and final-step's at the large learning rate, its coverage
  of both detour modes, its detour return above Gaussian PPO's, and its return on par with Gaussian PPO's on the
  unimodal tasks.
- check: the trust region sets the step size (per-update KL rises with epsilon on every seed) and the simulator's
  kernel count does not grow with the batch: both true by construction.
"""

from __future__ import annotations

import math

import numpy as np

from paperdag.common.stats import mean_ci, paired_diff_ci
from paperdag.common.verdicts import (Claim, check, equivalence, evidence, noninferiority, precondition,
                                      superiority)

from .params import ClaimParams


def competent(config: str) -> str:
    """The id of the precondition that ``config`` (env/method/setting) learned its task."""
    return "competent_" + config.replace("/", "_")


def learned(config: str, c: dict, p: ClaimParams) -> Claim:
    """The configuration's gain over the trivial policy lies above ``learn_frac`` of its simulator's best gain."""
    iv, bar = mean_ci(c["gain"]), p.learn_frac * max(c["best_gain"], 0.0)
    return precondition(competent(config), f"{config}: the stochastic return's gain over the trivial (zero- or "
                        f"random-action) policy lies above {p.learn_frac:g} of the best configuration's gain on "
                        f"{c['env']} ({c['best_gain']:.4g})", f"best of zero- and random-action policies on {c['env']}",
                        {"gain": iv.rounded(), "bar": round(bar, 4),
                         "fraction_of_best": round(iv.mean / c["best_gain"], 3) if c["best_gain"] > 0 else None},
                        superiority(iv, margin=bar, sesoi=bar, what="the gain over the trivial policy"))


def regime(s: dict, p: ClaimParams) -> list[Claim]:
    """The preconditions (module docstring)."""
    st, log_factor = s["stress"], math.log(p.kl_factor)
    out = [learned(config, c, p) for config, c in s["competence"].items()]
    for m in ("clip", "final"):
        ratio = paired_diff_ci(np.log(st[f"max_kl_{m}"]), np.log(st["max_kl_trudi"]))
        out.append(precondition(f"stress_destabilises_{m}", f"at the large learning rate ({st['lr']:g}, {st['env']}) "
                                f"the {m} baseline's max per-update chain KL exceeds TruDi's by more than "
                                f"{p.kl_factor:g}x (paired interval of the log ratio)", "TruDi's max per-update KL",
                                {f"max_kl_{m}": mean_ci(st[f"max_kl_{m}"]).rounded(),
                                 "max_kl_trudi": mean_ci(st["max_kl_trudi"]).rounded(), "log_ratio": ratio.rounded()},
                                superiority(ratio, margin=log_factor, sesoi=log_factor,
                                            what=f"log(max KL {m} / max KL trudi)")))
    routes = s["routes"]
    out.append(precondition("detour_rewards_both_modes", "the detour's reward makes covering both modes part of the "
                            "optimum: a scripted batch that splits half and half between the routes earns more than "
                            "the same batch all on one route (congestion; exact, deterministic rollouts)",
                            "the one-sided scripted batch", {k: round(v, 4) for k, v in routes.items()},
                            routes["split"] > routes["one_sided"],
                            f"split batch {routes['split']:.4g} vs one-sided {routes['one_sided']:.4g}: an optimal "
                            "policy must send episodes both ways"))
    for env, v in s["par"].items():
        ratio = paired_diff_ci(np.log(v["mean_kl_trudi"]), np.log(v["mean_kl_gauss"]))
        out.append(precondition(f"step_size_matched_{env}", f"{env}: TruDi's mean per-update chain KL is within "
                                f"{p.kl_factor:g}x of Gaussian PPO's per-update KL (paired interval of the log ratio)",
                                "Gaussian PPO's mean per-update KL",
                                {"mean_kl_trudi": mean_ci(v["mean_kl_trudi"]).rounded(),
                                 "mean_kl_gauss": mean_ci(v["mean_kl_gauss"]).rounded(), "log_ratio": ratio.rounded()},
                                equivalence(ratio, margin=log_factor, what="log(KL trudi / KL gauss)")))
        rise, margin = mean_ci(np.maximum(v["rise_trudi"], v["rise_gauss"])), p.par_tol * max(v["gauss_gain"], 0.0)
        out.append(precondition(f"plateau_{env}", f"{env}: both curves have plateaued: the larger of TruDi's and "
                                f"Gaussian PPO's training-return rise over the last {p.plateau_window:g} of iterations "
                                f"lies below the on-par margin ({margin:.4g})", "the on-par margin",
                                {"rise_trudi": mean_ci(v["rise_trudi"]).rounded(),
                                 "rise_gauss": mean_ci(v["rise_gauss"]).rounded(), "larger_rise": rise.rounded(),
                                 "margin": round(margin, 4)},
                                noninferiority(rise, margin=margin, what="the late rise")))
    return out


def findings(s: dict, p: ClaimParams) -> list[Claim]:
    """The evidence and the checks (module docstring)."""
    st, det, sweep = s["stress"], s["detour"], s["sweep"]
    stress_trudi = competent(f"{st['env']}/trudi/stress")
    out = []
    for m, cid, statement, paper in (
            ("clip", "stable_where_clip_unstable", "DPPO's (per-step ratio clipping only)",
             "TruDi trains stably where clip-only diffusion PPO does not (paper: humanoid gains, 73 tasks)"),
            ("final", "whole_chain_beats_final_step_constraint", "the final-step-only trust region's",
             "the trust region must cover the entire diffusion trajectory (the paper's design argument)")):
        d = paired_diff_ci(st["return_trudi"], st[f"return_{m}"])
        out.append(evidence(cid, f"at the large learning rate ({st['lr']:g}, {st['env']}) TruDi's final return is "
                            f"higher than {statement} (paired interval of the difference above 0)", paper,
                            {f"return_trudi_minus_{m}": d.rounded(), f"return_drop_{m}": mean_ci(st[f"drop_{m}"])
                             .rounded(), "return_drop_trudi": mean_ci(st["drop_trudi"]).rounded(),
                             f"mean_kl_{m}": mean_ci(st[f"mean_kl_{m}"]).rounded(),
                             "mean_kl_trudi": mean_ci(st["mean_kl_trudi"]).rounded()},
                            superiority(d, what=f"TruDi - {m} return"),
                            requires=[stress_trudi, competent(f"{st['env']}/{m}/base"), f"stress_destabilises_{m}"]))
    cover = mean_ci(det["coverage_trudi"])
    out.append(evidence("multimodal_captures_both_modes", f"detour from the symmetric start: TruDi sends more than "
                        f"{p.min_coverage:g} of its episodes around the minority side",
                        "diffusion policies capture multimodal action distributions (qualitative)",
                        {"coverage_trudi": cover.rounded(), "coverage_gauss": mean_ci(det["coverage_gauss"]).rounded(),
                         "coverage_trudi_det": mean_ci(det["coverage_det_trudi"]).rounded()},
                        superiority(cover, margin=p.min_coverage, sesoi=p.min_coverage, what="TruDi's coverage"),
                        requires=[competent("detour/trudi/main"), "detour_rewards_both_modes"]))
    d = paired_diff_ci(det["return_trudi"], det["return_gauss"])
    out.append(evidence("multimodal_beats_gaussian", "detour: TruDi's stochastic return exceeds Gaussian PPO's "
                        "(paired interval of the difference above 0)", "clear gains on the harder tasks",
                        {"return_trudi_minus_gauss": d.rounded()}, superiority(d, what="TruDi - Gaussian return"),
                        requires=[competent("detour/trudi/main"), competent("detour/gauss/main")]))
    for env, v in s["par"].items():
        d, margin = paired_diff_ci(v["return_trudi"], v["return_gauss"]), p.par_tol * max(v["gauss_gain"], 0.0)
        out.append(evidence(f"unimodal_on_par_{env}", f"{env}: TruDi's return is not below Gaussian PPO's by more than "
                            f"{p.par_tol:g} of Gaussian PPO's gain over the trivial policy (paired interval)",
                            "outperforms or on par with strong baselines on standard tasks",
                            {"trudi_minus_gauss": d.rounded(), "gauss_gain": round(v["gauss_gain"], 3),
                             "margin": round(margin, 3)},
                            noninferiority(d, margin=margin, direction="above", what="TruDi - Gaussian return"),
                            requires=[competent(f"{env}/trudi/main"), competent(f"{env}/gauss/main"),
                                      f"step_size_matched_{env}", f"plateau_{env}"]))
    out += [
        check("epsilon_sensitivity", f"{sweep['env']}: TruDi's per-update KL rises with epsilon on every seed (the "
              "projection sets the step size: true by construction); the returns are reported for the sensitivity",
              "epsilon ablation (no number in the abstract)",
              {"epsilons": sweep["epsilons"], "mean_kl": sweep["mean_kl"], "return": sweep["return"]},
              sweep["kl_increasing"]),
        check("batched_simulator_throughput", "one step call advances every environment with the same number of "
              "tensor kernels at every batch size (kernels per env step fall as 1/n)", "massively parallel "
              "simulation, thousands of environments per step", s["throughput"], s["throughput_constant"]),
    ]
    return out


def claims(s: dict, p: ClaimParams) -> list[Claim]:
    """Preconditions, evidence and checks from the per-seed summaries ``s`` of analysis.summarise."""
    return regime(s, p) + findings(s, p)
