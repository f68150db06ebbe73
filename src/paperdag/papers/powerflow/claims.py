"""The paper's claims restated for our scale: a pure function from exact per-seed metrics to claims of three kinds.

PowerFlow is the length-aware TB (``tb_length_*``). Every number is exact (enumeration of every response); seeds
vary only the fine-tuning samples, and every method uses the same seeds, so comparisons are paired t intervals over
the seeds both arms ran (unit ``seed``): power.seeds for PowerFlow against the RLIF baselines and GRPO, and for the
flattened aligned models (plan ``paired``); finetune.seeds otherwise (plan ``seeds``). A quantity of one model (the
base, a target, a trivial model) is exact and judged ``exact`` (basis: enumeration).

- precondition (the regime): the base model beats the strongest trivial model of its pretraining pairs (the ladder:
  a per-prompt add-one count model and the uniform policy); each baseline the method is said to beat improves on the
  strongest trivial use of the un-tuned base model (the ladder, ladder.py: its sampled response, its greedy response
  and a majority vote of finetune.group of its samples); there is headroom (the base is not already at the TB
  targets; PowerFlow's alpha > 1 target is more accurate than the base and within ``grpo_gap`` of GRPO); the
  mechanism can act (the aligned model is over-sharpened: its entropy lies below the base model's).
- evidence: TB reaches its own targets; alpha > 1 beats the base model and each RLIF baseline and approaches GRPO
  (the measured value and reason give PowerFlow's ceiling, its exact target's accuracy, and the smallest alpha whose
  target reaches GRPO); alpha < 1 applied to the aligned (GRPO-tuned) model raises its entropy without losing more
  than ``flat_acc_tol`` accuracy (a Pareto shift, both judged against the aligned model paired by seed);
  trajectory-level TB shortens responses; length-aware TB keeps their length. Length is judged on two task variants
  (task.py). On ``lengths`` (correct answers at every length, the same per-token density at every length; its own
  base model must beat its count model, and its exact length-aware target must keep length) length-aware TB is
  judged against the base model's length, as the paper states it. On ``chain`` the correct answers are the length-3
  traces, so every accuracy-raising target is longer than the base (the exact length-aware target is, a measured
  fact reported beside the claim) and "keeps the base length" cannot hold for any sharpening: there length-aware TB
  is judged by its defining property, that its length is the one its exact target defines (no length bias of its
  own, where trajectory-level TB's target is shorter).
- check: each trajectory-level sharpening TB run's expected length lies within ``length_tol`` (relative) of its exact
  target's, on both variants, and length-aware TB's on ``lengths`` (TB reaching its target's length: the reference
  against which a length change is read; on ``chain`` length-aware TB's is the evidence above); every part must hold.
- check: alpha < 1 applied to the base model raises the entropy (true of the flattened target, so it holds once TB
  reaches it). Flattening the base model cannot keep its accuracy (its exact alpha < 1 target is less accurate): the
  paper's alpha < 1 setting is the aligned model's, judged above.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from paperdag.common.stats import mean_ci, paired_diff_ci
from paperdag.common.verdicts import (
    Claim,
    Judgement,
    Ladder,
    all_of,
    check,
    equivalence,
    evidence,
    exact,
    noninferiority,
    precondition,
    superiority,
)

from .params import ClaimParams, Plans

RLIF = ("entropy", "self_certainty", "majority")
PAPER_RLIF = ("PowerFlow (alpha > 1) beats the RLIF baselines (Intuitor, EMPO/entropy, TTRL) and matches or exceeds "
              "supervised GRPO on math reasoning (Qwen2.5 / Llama base models, 1.5B-7B)")
BASE = "base_model_learned"
COUNT, UNIFORM = "add-one count model of the pretraining pairs", "uniform policy"


PAPER_FLAT = ("flattening an aligned, over-sharpened model (alpha < 1) raises diversity and quality together, "
              "shifting the Pareto frontier on creative writing")

Runs = dict[str, dict[str, np.ndarray]]


def _r(x: float) -> float:
    return round(float(x), 4)


def _ci(x: np.ndarray) -> dict:
    """A per-seed array's mean and t interval, for measured values."""
    return mean_ci(x, unit="seed").rounded()


def paired(runs: Runs, methods: list[str], key: str) -> list[np.ndarray]:
    """``runs[m][key]`` of each method restricted to the seeds every one of ``methods`` ran, in seed order."""
    common = sorted(set.intersection(*(set(runs[m]["seed"].tolist()) for m in methods)))
    return [np.array([runs[m][key][runs[m]["seed"] == s][0] for s in common]) for m in methods]


def base_learned(claim_id: str, data: str, reference: dict[str, float], base: dict[str, float]) -> Claim:
    """Precondition: the base model fits the data distribution ``data`` better than the strongest trivial model of
    the same pretraining pairs (the ladder: the per-prompt add-one count model, the uniform policy), exact KL."""
    ladder = Ladder.of("lower", {COUNT: reference["kl_data_count"], UNIFORM: reference["kl_data_uniform"]})
    top = ladder.strongest.name
    return precondition(
        claim_id, f"the base model learned {data} better than the strongest trivial model of the same pretraining "
        f"pairs (a per-prompt add-one count model, the uniform policy): exact KL({data} || base) < KL({data} || "
        "that model)", top, {k: _r(v) for k, v in reference.items()} | {"acc_base": _r(base["accuracy"])},
        exact(reference["kl_data_base"] < ladder.strongest.point(),
              f"KL({data}||base) {reference['kl_data_base']:.4f} vs KL({data}||{top}) {ladder.strongest.point():.4f}",
              basis="enumeration"), ladder=ladder)


def base_rungs(ladder_values: dict[str, float]) -> Ladder:
    """The fine-tuning-utility ladder: what the un-tuned base model gives (ladder.py), exact accuracies."""
    return Ladder.of("higher", ladder_values)


def regime(runs: Runs, base: dict[str, float], targets: dict[str, dict[str, float]], reference: dict[str, float],
           ceiling: dict, aligned: dict[str, np.ndarray], rungs: dict[str, float], p: ClaimParams, plans: Plans,
           peaks: dict[str, dict[str, float]]) -> list[Claim]:
    """The preconditions (module docstring)."""
    tb = [m for m in runs if m.startswith("tb_")]
    sharp = targets["tb_length_sharpen"]
    sharp_ent = mean_ci(aligned["aligned_entropy"], unit="seed")
    grpo = mean_ci(runs["grpo"]["accuracy"], unit="seed")
    nearest = min(targets[m]["kl_base"] for m in tb)
    out = [
        base_learned(BASE, "D", reference, base),
        precondition("targets_differ_from_base", f"the base model is not already at the TB targets: exact "
                     f"KL(base || target) > {p.kl_tol:g} nats for every TB variant",
                     "the pretrained model's own distribution (a headroom bound)",
                     {m: _r(targets[m]["kl_base"]) for m in tb},
                     exact(nearest > p.kl_tol, f"smallest KL(base||target) {nearest:.4f} vs {p.kl_tol:g}",
                           basis="enumeration")),
        precondition("sharpen_target_has_headroom", "PowerFlow's exact alpha > 1 target is more accurate than the base "
                     "model", "the pretrained model's exact accuracy (a headroom bound)",
                     {"target_accuracy": _r(sharp["accuracy"]), "base": _r(base["accuracy"])},
                     exact(sharp["accuracy"] > base["accuracy"],
                           f"target {sharp['accuracy']:.4f} vs base {base['accuracy']:.4f}", basis="enumeration")),
        precondition("grpo_within_reach", f"PowerFlow's exact alpha > 1 target (its accuracy ceiling) comes within "
                     f"{p.grpo_gap:g} of supervised GRPO's accuracy", "PowerFlow's exact alpha > 1 target accuracy",
                     {"target_accuracy": _r(sharp["accuracy"]), "grpo": grpo.rounded()} | ceiling,
                     _with_reach(superiority(grpo, direction="below", reference=sharp["accuracy"] + p.grpo_gap,
                                             what="GRPO's accuracy", plan=plans.paired), sharp, ceiling)),
        precondition("aligned_over_sharpened", "the aligned model flattened in the paper's alpha < 1 setting (the "
                     "supervised-GRPO policy of each seed) is over-sharpened: its exact entropy lies below the base "
                     f"model's (t interval over {sharp_ent.n} seeds)", "the pretrained model's exact entropy (a "
                     "mechanism bound)", {"aligned_entropy": sharp_ent.rounded(), "base": _r(base["entropy"]),
                                          "aligned_accuracy": _ci(aligned["aligned_accuracy"])},
                     superiority(sharp_ent, direction="below", reference=base["entropy"],
                                 what="the aligned model's entropy", plan=plans.paired)),
    ]
    ladder = base_rungs(rungs)
    top = ladder.strongest
    for m in (*RLIF, "grpo"):
        iv, peak = mean_ci(runs[m]["accuracy"], unit="seed"), peaks.get(m)
        out.append(precondition(f"competent_{m}", f"{m} fine-tuning improves on the strongest trivial use of the "
                                "un-tuned base model (of its sampled response, its greedy response and a majority vote "
                                f"of its samples; exact accuracies): its exact accuracy lies above it (t interval over "
                                f"{iv.n} seeds)", top.name,
                                {"accuracy": iv.rounded(), "strongest_rung": _r(top.point())}
                                | ({"training_curve_peak": peak} if peak else {}),
                                superiority(iv, reference=top.point(), what=f"{m}'s accuracy", plan=plans.paired),
                                ladder=ladder))
    return out


def _reach(sharp: dict[str, float], ceiling: dict) -> str:
    """PowerFlow's ceiling (its exact target's accuracy) and the smallest alpha whose target reaches GRPO."""
    alpha = ceiling["smallest_alpha_within_gap"]
    reach = (f"the smallest alpha whose exact target reaches GRPO - grpo_gap is {alpha:g}" if alpha is not None else
             f"no alpha up to {ceiling['largest_alpha']:g} has a target that reaches GRPO - grpo_gap")
    return f"PowerFlow's ceiling, its exact target at alpha = {ceiling['alpha']:g}, has accuracy " \
           f"{sharp['accuracy']:.4f}; {reach}"


def _with_reach(judged: Judgement, sharp: dict[str, float], ceiling: dict) -> Judgement:
    """A judgement with PowerFlow's ceiling appended to its reason (its rule, unit, n and plan kept)."""
    return replace(judged, reason=f"{judged.reason}; {_reach(sharp, ceiling)}")


def _flatten_aligned(aligned: dict[str, np.ndarray], p: ClaimParams, plans: Plans) -> tuple[dict, Judgement]:
    """The Pareto shift of the aligned model's flattening, paired by seed: entropy up, accuracy non-inferior."""
    d_ent = paired_diff_ci(aligned["entropy"], aligned["aligned_entropy"], unit="seed")
    d_acc = paired_diff_ci(aligned["accuracy"], aligned["aligned_accuracy"], unit="seed")
    measured = {f"{who}_{k}": _ci(aligned[f"{pre}{k}"]) for who, pre in
                (("aligned", "aligned_"), ("flattened", ""), ("its_exact_target", "target_"))
                for k in ("accuracy", "entropy")}
    measured |= {"entropy_gain": d_ent.rounded(), "accuracy_change": d_acc.rounded(),
                 "kl_to_target": _ci(aligned["kl"])}
    judged = all_of({"accuracy": noninferiority(d_acc, margin=p.flat_acc_tol, direction="above",
                                                what="flattened - aligned accuracy", plan=plans.paired),
                     "entropy": superiority(d_ent, what="flattened - aligned entropy", plan=plans.paired)})
    return measured, judged


def findings(runs: Runs, base: dict[str, float], targets: dict[str, dict[str, float]], ceiling: dict,
             aligned: dict[str, np.ndarray], p: ClaimParams, plans: Plans) -> list[Claim]:
    """The evidence and the check (module docstring)."""
    tb = [m for m in runs if m.startswith("tb_")]
    pf, flat, traj = runs["tb_length_sharpen"], runs["tb_length_flatten"], runs["tb_traj_sharpen"]
    acc = mean_ci(pf["accuracy"], unit="seed")
    worst_kl = mean_ci(np.max(paired(runs, tb, "kl"), axis=0), unit="seed")
    out = [
        evidence("tb_matches_own_target", f"every TB run reaches its own target: the per-seed worst exact "
                 f"KL(pi||target) over the 3 TB variants x alpha in (>1, <1) lies below {p.kl_tol:g} nats",
                 "TB's fixed point is pi = target (KL = 0); no KL value is reported at LLM scale",
                 {m: _ci(runs[m]["kl"]) for m in tb} | {"worst_variant": worst_kl.rounded()},
                 superiority(worst_kl, direction="below", reference=p.kl_tol, what="the worst variant's KL",
                             plan=plans.seeds),
                 requires=[BASE, "targets_differ_from_base"]),
        evidence("sharpen_beats_base", "alpha > 1 (length-aware TB) raises exact accuracy above the base model's",
                 "sharpening elicits reasoning: +accuracy over the base model",
                 {"powerflow": acc.rounded(), "base": _r(base["accuracy"])},
                 superiority(acc, reference=base["accuracy"], what="PowerFlow's accuracy", plan=plans.paired),
                 requires=[BASE, "sharpen_target_has_headroom"]),
    ]
    for m in RLIF:
        d = paired_diff_ci(*paired(runs, ["tb_length_sharpen", m], "accuracy"), unit="seed")
        out.append(evidence(f"sharpen_beats_{m}", f"alpha > 1 (length-aware TB) has higher exact accuracy than the "
                            f"{m} RLIF baseline (paired t interval of the difference over {d.n} seeds above 0)",
                            PAPER_RLIF, {"powerflow": acc.rounded(), m: _ci(runs[m]["accuracy"]),
                                         "difference": d.rounded()},
                            superiority(d, what=f"PowerFlow - {m} accuracy", plan=plans.paired),
                            requires=[BASE, f"competent_{m}"]))
    gap = paired_diff_ci(*paired(runs, ["tb_length_sharpen", "grpo"], "accuracy"), unit="seed")
    traj_len = mean_ci(traj["length"], unit="seed")
    flat_measured, flat_judged = _flatten_aligned(aligned, p, plans)
    sharp = targets["tb_length_sharpen"]
    rel_len = mean_ci((pf["length"] - sharp["length"]) / sharp["length"], unit="seed")
    out += [
        evidence("sharpen_approaches_grpo", f"alpha > 1 (length-aware TB) accuracy is at most {p.grpo_gap:g} below "
                 "supervised GRPO's (true reward; paired t interval of the difference)", PAPER_RLIF,
                 {"powerflow": acc.rounded(), "grpo": _ci(runs["grpo"]["accuracy"]),
                  "difference": gap.rounded(), "ceiling": {"alpha": ceiling["alpha"],
                                                           "target_accuracy": _r(sharp["accuracy"]),
                                                           "smallest_alpha_reaching_grpo": ceiling[
                                                               "smallest_alpha_within_gap"]}},
                 _with_reach(noninferiority(gap, margin=p.grpo_gap, direction="above",
                                            what="PowerFlow - GRPO accuracy", plan=plans.paired), sharp, ceiling),
                 requires=[BASE, "competent_grpo", "grpo_within_reach"]),
        evidence("flatten_aligned_pareto", f"alpha < 1 (length-aware TB toward the aligned model's own power target) "
                 f"raises the exact entropy of the aligned, over-sharpened (GRPO-tuned) model and keeps its exact "
                 f"accuracy within {p.flat_acc_tol:g} (paired t intervals over seeds)", PAPER_FLAT, flat_measured,
                 flat_judged, requires=["competent_grpo", "aligned_over_sharpened"]),
        evidence("traj_shortens_when_sharpening", "trajectory-level TB at alpha > 1 shortens the expected response "
                 "length below the base model's", "trajectory-level matching collapses length",
                 {"tb_traj_sharpen": traj_len.rounded(), "base": _r(base["length"])},
                 superiority(traj_len, direction="below", reference=base["length"], what="its expected length",
                             plan=plans.seeds),
                 requires=[BASE]),
        evidence("length_aware_keeps_length", f"on the chain variant (correct answers are the length-3 traces), "
                 f"length-aware TB at alpha > 1 keeps the expected length its exact target defines, within "
                 f"{p.length_tol:g} (relative): the objective adds no length bias of its own (its target's length "
                 "against the base model's is reported, a fact of the task: any accuracy-raising target is longer)",
                 "PowerFlow keeps the response length stable through training",
                 {"relative_to_target": rel_len.rounded(), "powerflow": _ci(pf["length"]),
                  "its_exact_target": _r(sharp["length"]), "base": _r(base["length"]),
                  "target_relative_to_base": _r((sharp["length"] - base["length"]) / base["length"]),
                  "tb_traj_sharpen_target": _r(targets["tb_traj_sharpen"]["length"])},
                 equivalence(rel_len, margin=p.length_tol, what="the length relative to its exact target",
                             plan=plans.paired),
                 requires=[BASE]),
    ]
    ent = mean_ci(flat["entropy"], unit="seed")
    out.append(check("flatten_raises_entropy", "alpha < 1 (length-aware TB) raises the exact entropy above the base "
                     "model's: true of the flattened target, so it holds once TB reaches it (a check, not evidence)",
                     "flattening (alpha < 1) raises diversity (creative writing, aligned models)",
                     {"powerflow_flatten": ent.rounded(), "base": _r(base["entropy"]),
                      "its_exact_target": _r(targets["tb_length_flatten"]["entropy"])},
                     superiority(ent, reference=base["entropy"], what="the flattened model's entropy",
                                 plan=plans.seeds)))
    return out


def claims(runs: Runs, base: dict[str, float], targets: dict[str, dict[str, float]], reference: dict[str, float],
           ceiling: dict, aligned: dict[str, np.ndarray], variant: dict, rungs: dict[str, float], p: ClaimParams,
           plans: Plans, peaks: dict[str, dict[str, float]] | None = None) -> list[Claim]:
    """``runs[method][metric]``: per-seed ``seed``, exact accuracy, entropy, length and (TB) KL to the method's own
    target; ``base`` and ``targets[method]`` (with ``kl_base`` = KL(base || target)): exact metrics; ``reference``:
    the base model's and the trivial models' fit to D (kl_data_base, kl_data_count, kl_data_uniform, acc_count,
    acc_uniform); ``ceiling``: baselines.power_ceiling against GRPO's accuracy, with ``alpha`` = PowerFlow's;
    ``aligned``: per seed, the aligned model's (aligned_*), its exact target's (target_*) and the flattened policy's
    exact accuracy and entropy (and kl to the target), from the flatten_aligned stage; ``variant``: the lengths
    variant's (``lengths``); ``rungs``: the fine-tuning-utility ladder's exact accuracies by name (ladder.py);
    ``peaks[method]``: the step and exact accuracy at the peak of an RLIF baseline's mean training curve (shown
    beside its competence, where its final accuracy is read)."""
    return (regime(runs, base, targets, reference, ceiling, aligned, rungs, p, plans, peaks or {})
            + findings(runs, base, targets, ceiling, aligned, p, plans) + lengths(runs, targets, variant, p, plans))


def lengths(chain_runs: Runs, chain_targets: dict[str, dict[str, float]], variant: dict, p: ClaimParams,
            plans: Plans) -> list[Claim]:
    """The length claims on the ``lengths`` variant and the check of both variants' lengths against their exact
    targets. ``variant``: ``base`` (exact metrics), ``reference`` (fit to D_len, as ``claims``' reference),
    ``targets[method]`` (exact metrics of its alpha > 1 target) and ``runs[method]`` (per-seed finals)."""
    base, ref = variant["base"], variant["reference"]
    runs, targets = variant["runs"], variant["targets"]
    pf, sharp = runs["tb_length_sharpen"], targets["tb_length_sharpen"]
    rel = mean_ci((pf["length"] - base["length"]) / base["length"], unit="seed")
    traj = mean_ci(runs["tb_traj_sharpen"]["length"], unit="seed")
    learned = "lengths_base_learned"
    kept = abs(sharp["length"] - base["length"])
    out = [
        base_learned(learned, "D_len", ref, base),
        precondition("lengths_target_keeps_length", f"on the lengths variant, the exact length-aware alpha > 1 target "
                     f"keeps the expected length within {p.length_tol:g} (relative) of its base model's",
                     "the lengths variant's pretrained model's exact expected length (a bound)",
                     {"target_length": _r(sharp["length"]), "base": _r(base["length"])},
                     exact(kept <= p.length_tol * base["length"],
                           f"the length-aware target's own expected length {sharp['length']:.4f} vs the base's "
                           f"{base['length']:.4f}", basis="enumeration")),
        evidence("lengths_traj_shortens", "on the lengths variant (correct answers at every length), trajectory-level "
                 "TB at alpha > 1 shortens the expected response length below the base model's",
                 "trajectory-level matching collapses length",
                 {"tb_traj_sharpen": traj.rounded(), "base": _r(base["length"]),
                  "its_exact_target": _r(targets["tb_traj_sharpen"]["length"])},
                 superiority(traj, direction="below", reference=base["length"], what="its expected length",
                             plan=plans.seeds),
                 requires=[learned]),
        evidence("lengths_length_aware_keeps_length", f"on the lengths variant, length-aware TB at alpha > 1 keeps the "
                 f"expected length within {p.length_tol:g} (relative) of the base model's",
                 "PowerFlow keeps the response length stable through training",
                 {"relative_change": rel.rounded(), "powerflow": _ci(pf["length"]),
                  "base": _r(base["length"]), "its_exact_target": _r(sharp["length"]),
                  "accuracy": _ci(pf["accuracy"]), "base_accuracy": _r(base["accuracy"])},
                 equivalence(rel, margin=p.length_tol, what="the relative length change", plan=plans.seeds),
                 requires=[learned, "lengths_target_keeps_length"]),
    ]
    tracked = (("chain", "tb_traj_sharpen"), ("lengths", "tb_traj_sharpen"), ("lengths", "tb_length_sharpen"))
    by_variant = {"chain": (chain_runs, chain_targets), "lengths": (runs, targets)}
    off = {f"{name}/{m}": mean_ci((by_variant[name][0][m]["length"] - by_variant[name][1][m]["length"])
                                  / by_variant[name][1][m]["length"], unit="seed") for name, m in tracked}
    out.append(check("length_tracks_exact_target", f"each sharpening TB run's expected length lies within "
                     f"{p.length_tol:g} (relative; t interval over seeds) of its exact target's (trajectory-level TB "
                     "on both task variants, length-aware TB on lengths; on chain it is evidence)",
                     "TB's fixed point is pi = target, length included",
                     {k: v.rounded() for k, v in off.items()},
                     all_of({k: equivalence(v, margin=p.length_tol, what=f"{k}'s length relative to its target",
                                            plan=plans.seeds) for k, v in off.items()})))
    return out
