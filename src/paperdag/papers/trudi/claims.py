"""The paper's claims restated for our scale: a pure function from per-seed numbers (analysis.py) to claims of three
kinds. Every interval is a t interval over training seeds (unit ``seed``; paired where methods share seeds,
paperdag.common.stats), judged under its sample-size plan (params.yaml ``plans``).

- precondition (the regime): every compared configuration learned its task: its stochastic return beats the
  strongest rung of the RL baseline ladder on its simulator (the zero-action and the uniform random-action policy,
  the simulator's scripted controller, scripted.py, and a static linear controller tuned by random search within the
  methods' episode budget, controller.py; paired with the controllers by seed, which share the methods' evaluation
  draws); DPPO's per-step clipping and the
  final-step baselines at the base learning rate, so that failing at the large one is the learning rate's doing; the
  stress test stresses (without the whole-chain trust region the chain moves ``kl_factor`` x farther per update than
  TruDi's); the on-par comparison is made at matched step sizes (TruDi's epsilon is Gaussian PPO's measured
  per-update KL, train.py; its mean per-update chain KL must land within ``kl_factor`` of Gaussian PPO's) on
  plateaued curves (one rule on every simulator: the slope of each compared seed-mean curve over its last
  max(plateau_min_iterations, plateau_window) iterations, its interval inside +-(the per-iteration noise sd); the
  declared sweep's budgets up to the run's judged on prefixes, the first where both curves pass recorded); the
  detour rewards keeping both modes (its congestion term: a split scripted batch beats a one-sided one).
- evidence: TruDi's return above DPPO's (as published) and final-step's at the large learning rate (beside DPPO's,
  unjudged, the ``clip`` ablation: DPPO's per-step structure with PPO's clip 0.2, summed unclamped log-probs, no KL
  stop), its coverage
  of both detour modes, its detour return above Gaussian PPO's, and its return on par with Gaussian PPO's on the
  unimodal tasks (per seed (TruDi - Gaussian) + ``par_tol`` (Gaussian - trivial) > 0: the relative margin judged
  with the Gaussian gain's own spread, never on its mean).
- check: the trust region sets the step size (per-update KL rises with epsilon on every seed) and the simulator's
  kernel count does not grow with the batch: both true by construction.
"""

from __future__ import annotations

import math

import numpy as np

from paperdag.common.plans import SamplePlan
from paperdag.common.stats import mean_ci, paired_diff_ci
from paperdag.common.verdicts import (Claim, Judgement, Ladder, all_of, check, equivalence, evidence, exact,
                                      noninferiority, precondition, superiority, trend)

from .params import ClaimParams, Plans

Rungs = dict[str, dict[str, float | np.ndarray]]  # env -> rung name -> a value, or one value per seed


def competent(config: str) -> str:
    """The id of the precondition that ``config`` (env/method/setting) learned its task."""
    return "competent_" + config.replace("/", "_")


def learned(config: str, c: dict, rungs: dict[str, float | np.ndarray], plan: SamplePlan) -> Claim:
    """The configuration's stochastic return beats the strongest rung of its simulator's ladder (``rungs``: a value,
    or one per seed in seed order), paired by seed."""
    ret, n = c["returns"], len(c["returns"])
    if c["seeds"] != list(range(n)):
        raise ValueError(f"{config} ran seeds {c['seeds']}, not 0..{n - 1}: the ladder pairs seed i with seed i")
    per_seed = {name: np.broadcast_to(np.asarray(v, dtype=float), (n,)) if np.ndim(v) == 0 else np.asarray(v)[:n]
                for name, v in rungs.items()}
    ladder = Ladder.of("higher", {name: float(v) if np.ndim(v) == 0 else mean_ci(per_seed[name], unit="seed")
                                  for name, v in rungs.items()})
    top = ladder.strongest.name
    gap = paired_diff_ci(ret, per_seed[top], unit="seed")
    return precondition(competent(config), f"{config}: the stochastic return exceeds the strongest trivial baseline "
                        f"on {c['env']} (of the zero-action policy, the uniform random-action policy, the scripted "
                        "controller and a linear controller tuned by random search with the methods' episode budget; "
                        f"paired interval over {n} seeds)", top, {"return": mean_ci(ret, unit="seed").rounded(), "gain": gap.rounded()},
                        superiority(gap, what=f"the return - {top}'s", plan=plan), ladder=ladder)


def regime(s: dict, rungs: Rungs, p: ClaimParams, plans: Plans) -> list[Claim]:
    """The preconditions (module docstring)."""
    st, log_factor = s["stress"], math.log(p.kl_factor)
    stressed = {f"{st['env']}/trudi/stress"}
    out = [learned(config, c, rungs["stress"] if config in stressed else rungs[c["env"]],
                   plans.stress_seeds if config in stressed else plans.seeds)
           for config, c in s["competence"].items()]
    for m in ("dppo", "final"):
        ratio = paired_diff_ci(np.log(st[f"max_kl_{m}"]), np.log(st["max_kl_trudi"]), unit="seed")
        out.append(precondition(f"stress_destabilises_{m}", f"at the large learning rate ({st['lr']:g}, {st['env']}) "
                                f"the {m} baseline's max per-update chain KL exceeds TruDi's by more than "
                                f"{p.kl_factor:g}x (paired interval of the log ratio)", "TruDi's max per-update KL",
                                {f"max_kl_{m}": mean_ci(st[f"max_kl_{m}"], unit="seed").rounded(),
                                 "max_kl_trudi": mean_ci(st["max_kl_trudi"], unit="seed").rounded(),
                                 "log_ratio": ratio.rounded()},
                                superiority(ratio, margin=log_factor, what=f"log(max KL {m} / max KL trudi)",
                                            plan=plans.seeds)))
    routes = s["routes"]
    out.append(precondition("detour_rewards_both_modes", "the detour's reward makes covering both modes part of the "
                            "optimum: a scripted batch that splits half and half between the routes earns more than "
                            "the same batch all on one route (congestion; exact, deterministic rollouts)",
                            "the one-sided scripted batch", {k: round(v, 4) for k, v in routes.items()},
                            exact(routes["split"] > routes["one_sided"],
                                  f"split batch {routes['split']:.4g} vs one-sided {routes['one_sided']:.4g}: an "
                                  "optimal policy must send episodes both ways", basis="fixed set")))
    for env, v in s["par"].items():
        ratio = paired_diff_ci(np.log(v["mean_kl_trudi"]), np.log(v["mean_kl_gauss"]), unit="seed")
        out.append(precondition(f"step_size_matched_{env}", f"{env}: TruDi's mean per-update chain KL is within "
                                f"{p.kl_factor:g}x of Gaussian PPO's per-update KL (paired interval of the log ratio)",
                                "the mean per-update KL of PPO with a normal policy (a step-size reference)",
                                {"mean_kl_trudi": mean_ci(v["mean_kl_trudi"], unit="seed").rounded(),
                                 "mean_kl_gauss": mean_ci(v["mean_kl_gauss"], unit="seed").rounded(),
                                 "log_ratio": ratio.rounded()},
                                equivalence(ratio, margin=log_factor, what="log(KL trudi / KL gauss)",
                                            plan=plans.seeds)))
    out += [plateau_claim(env, v, p, plans.plateau) for env, v in s["plateau"].items()]
    return out


def flat(x: dict, method: str, plan: SamplePlan) -> Judgement:
    """The plateau rule on one curve's numbers (analysis.plateau): the slope's interval inside +-(noise sd)."""
    return trend(x["slope"], predicted=0.0, tol=max(x["noise_sd"], 1e-12), plan=plan,
                 what=f"{method}'s slope over the last {x['window']} iterations")


def _curve_row(x: dict) -> dict:
    """One curve's plateau numbers for the metrics file (no interval: None)."""
    usable = math.isfinite(x["noise_sd"])
    return {"window": x["window"], "slope": x["slope"].rounded() if usable else None,
            "noise_sd": round(x["noise_sd"], 4) if usable else None}


def plateau_claim(env: str, curves: dict, p: ClaimParams, plan: SamplePlan) -> Claim:
    """Both compared curves (TruDi's, Gaussian PPO's) pass the plateau rule at the run's budget (``all_of``); the
    declared sweep's budgets up to it are judged on the curves' prefixes, the first where both pass is the budget
    the rule chose."""
    names = {"trudi": "TruDi", "gauss": "Gaussian PPO"}
    budget = max(curves["trudi"])
    judged = {b: all_of({names[m]: flat(curves[m][b], names[m], plan) for m in names}) for b in curves["trudi"]}
    chosen = next((b for b in sorted(judged) if b in p.plateau_sweep[env] and judged[b].verdict == "holds"), None)
    later = [b for b in p.plateau_sweep[env] if b > budget]
    measured = {"budget": budget, "chosen_budget": chosen, "declared_sweep": p.plateau_sweep[env],
                "budgets_not_run": later, "by_budget": {str(b): j.verdict for b, j in judged.items()},
                **{names[m]: _curve_row(curves[m][budget]) for m in names}}
    return precondition(f"plateau_{env}", f"{env}: TruDi's and Gaussian PPO's seed-mean training-return curves have "
                        f"plateaued at the run's {budget} iterations: over each curve's last max("
                        f"{p.plateau_min_iterations}, {p.plateau_window:.0%}) iterations, the fitted slope's interval "
                        "lies inside +-(the per-iteration noise sd, the residual sd of that fit)",
                        "a zero slope +- the per-iteration noise sd", measured, judged[budget])


ABLATION_CLIP = ("DPPO's per-step structure with PPO's clip 0.2, summed unclamped step log-probs, no denoising "
                 "discount, no KL stop (the stability baseline of the earlier runs); reported beside "
                 "stable_where_clip_unstable, which judges DPPO as published; judged by no claim")


def ablation(st: dict) -> dict:
    """The ``clip`` ablation's numbers at the large learning rate beside the stability claim (paired with TruDi's and
    DPPO's seeds) and its return at the base rate: reported, not judged."""
    return {"what": ABLATION_CLIP,
            "return_trudi_minus_clip": paired_diff_ci(st["return_trudi"], st["return_clip"], unit="seed").rounded(),
            "return_dppo_minus_clip": paired_diff_ci(st["return_dppo"], st["return_clip"], unit="seed").rounded(),
            "max_kl_clip": mean_ci(st["max_kl_clip"], unit="seed").rounded(),
            "log_max_kl_clip_over_trudi": paired_diff_ci(np.log(st["max_kl_clip"]), np.log(st["max_kl_trudi"]),
                                                         unit="seed").rounded(),
            "mean_kl_clip": mean_ci(st["mean_kl_clip"], unit="seed").rounded(),
            "return_drop_clip": mean_ci(st["drop_clip"], unit="seed").rounded(),
            "base_return_clip": mean_ci(st["base_return_clip"], unit="seed").rounded()}


def findings(s: dict, p: ClaimParams, plans: Plans) -> list[Claim]:
    """The evidence and the checks (module docstring)."""
    st, det, sweep = s["stress"], s["detour"], s["sweep"]
    stress_trudi = competent(f"{st['env']}/trudi/stress")
    out = []
    for m, cid, statement, paper in (
            ("dppo", "stable_where_clip_unstable", "DPPO's (as published: per-step ratio clipping 0.01, clamped "
             "step log-probabilities, denoising discount, KL stop at 1; no trust region)",
             "TruDi trains stably where clip-only diffusion PPO does not (paper: humanoid gains, 73 tasks)"),
            ("final", "whole_chain_beats_final_step_constraint", "the final-step-only trust region's",
             "the trust region must cover the entire diffusion trajectory (the paper's design argument)")):
        d = paired_diff_ci(st["return_trudi"], st[f"return_{m}"], unit="seed")
        measured = {f"return_trudi_minus_{m}": d.rounded(),
                    f"return_drop_{m}": mean_ci(st[f"drop_{m}"], unit="seed").rounded(),
                    "return_drop_trudi": mean_ci(st["drop_trudi"], unit="seed").rounded(),
                    f"mean_kl_{m}": mean_ci(st[f"mean_kl_{m}"], unit="seed").rounded(),
                    "mean_kl_trudi": mean_ci(st["mean_kl_trudi"], unit="seed").rounded()}
        if m == "dppo":
            measured["ablation_clip"] = ablation(st)
        out.append(evidence(cid, f"at the large learning rate ({st['lr']:g}, {st['env']}) TruDi's final return is "
                            f"higher than {statement} (paired interval of the difference above 0)", paper,
                            measured, superiority(d, what=f"TruDi - {m} return", plan=plans.seeds),
                            requires=[stress_trudi, competent(f"{st['env']}/{m}/base"), f"stress_destabilises_{m}"]))
    cover = mean_ci(det["coverage_trudi"], unit="seed")
    out.append(evidence("multimodal_captures_both_modes", f"detour from the symmetric start: TruDi sends more than "
                        f"{p.min_coverage:g} of its episodes around the minority side",
                        "diffusion policies capture multimodal action distributions (qualitative)",
                        {"coverage_trudi": cover.rounded(),
                         "coverage_gauss": mean_ci(det["coverage_gauss"], unit="seed").rounded(),
                         "coverage_trudi_det": mean_ci(det["coverage_det_trudi"], unit="seed").rounded()},
                        superiority(cover, margin=p.min_coverage, what="TruDi's coverage", plan=plans.seeds),
                        requires=[competent("detour/trudi/main"), "detour_rewards_both_modes"]))
    d = paired_diff_ci(det["return_trudi"], det["return_gauss"], unit="seed")
    out.append(evidence("multimodal_beats_gaussian", "detour: TruDi's stochastic return exceeds Gaussian PPO's "
                        "(paired interval of the difference above 0)", "clear gains on the harder tasks",
                        {"return_trudi_minus_gauss": d.rounded()},
                        superiority(d, what="TruDi - Gaussian return", plan=plans.seeds),
                        requires=[competent("detour/trudi/main"), competent("detour/gauss/main"), "plateau_detour"]))
    for env, v in s["par"].items():
        d = paired_diff_ci(v["return_trudi"], v["return_gauss"], unit="seed")
        contrast = mean_ci(v["return_trudi"] - v["return_gauss"] + p.par_tol * v["gain_gauss"], unit="seed")
        out.append(evidence(f"unimodal_on_par_{env}", f"{env}: TruDi's return is not below Gaussian PPO's by more than "
                            f"{p.par_tol:g} of Gaussian PPO's gain over the trivial policy (per seed (TruDi - "
                            f"Gaussian) + {p.par_tol:g} x Gaussian's gain > 0, paired interval)",
                            "outperforms or on par with strong baselines on standard tasks",
                            {"trudi_minus_gauss": d.rounded(), "gain_gauss": mean_ci(v["gain_gauss"], unit="seed")
                             .rounded(), "contrast": contrast.rounded()},
                            noninferiority(contrast, margin=0.0, direction="above",
                                           what=f"TruDi - Gaussian return + {p.par_tol:g} x Gaussian's gain",
                                           plan=plans.seeds),
                            requires=[competent(f"{env}/trudi/main"), competent(f"{env}/gauss/main"),
                                      f"step_size_matched_{env}", f"plateau_{env}"]))
    kernels = {k: v["kernels"] for k, v in s["throughput"].items()}
    out += [
        check("epsilon_sensitivity", f"{sweep['env']}: TruDi's per-update KL rises with epsilon on every seed (the "
              "projection sets the step size: true by construction); the returns are reported for the sensitivity",
              "epsilon ablation (no number in the abstract)",
              {"epsilons": sweep["epsilons"], "mean_kl": sweep["mean_kl"], "return": sweep["return"]},
              exact(sweep["kl_increasing"], "per-update KL rises with epsilon on every seed of the sweep" if
                    sweep["kl_increasing"] else "per-update KL does not rise with epsilon on every seed of the sweep",
                    basis="fixed set")),
        check("batched_simulator_throughput", "one step call advances every environment with the same number of "
              "tensor kernels at every batch size (kernels per env step fall as 1/n)", "massively parallel "
              "simulation, thousands of environments per step", s["throughput"],
              exact(s["throughput_constant"], f"kernels per step call by simulator and batch size: {kernels}",
                    basis="enumeration")),
    ]
    return out


def claims(s: dict, rungs: Rungs, p: ClaimParams, plans: Plans) -> list[Claim]:
    """Preconditions, evidence and checks from the per-seed summaries ``s`` of analysis.summarise and each simulator's
    baseline ladder ``rungs[env]``."""
    return regime(s, rungs, p, plans) + findings(s, p, plans)
