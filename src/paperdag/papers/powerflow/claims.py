"""The paper's claims restated for our scale: a pure function from exact per-seed metrics to claims of three kinds.

PowerFlow is the paper's length-aware TB, LA-TB (``tb_length_*``, objectives.py). Every number is exact (enumeration of every response); seeds
vary only the fine-tuning samples, and every method uses the same seeds, so comparisons are paired t intervals over
the seeds both arms ran (unit ``seed``): power.seeds for PowerFlow against the RLIF baselines and GRPO, and for the
flattened aligned models (plan ``paired``); finetune.seeds otherwise (plan ``seeds``). A quantity of one model (the
base, a target, a trivial model) is exact and judged ``exact`` (basis: enumeration).

- precondition (the regime): the base model beats the strongest trivial model of its pretraining pairs (the ladder:
  a per-prompt add-one count model and the uniform policy); each baseline the method is said to beat improves on the
  strongest trivial use of the un-tuned base model (the ladder, ladder.py: its sampled response, its greedy response
  and a majority vote of finetune.group of its samples); the base is not already at the TB targets; the mechanism
  can act (the aligned model is over-sharpened: its entropy lies below the base model's).
- precondition (exact targets, anchors.py): every evidence claim on where a TB run ends (its accuracy, entropy or
  length) is judged only where the exact target has the claimed property, enumerated from the data distribution and
  from the learned model (both parts must hold; both values are reported, also beside the evidence): PowerFlow's
  alpha > 1 target beats the strongest rung of the sharpening ladder (sampling, greedy and temperature-1/alpha
  decoding, exact: headroom), lies above each RLIF baseline and within ``grpo_gap`` of GRPO (ceilings, the lower of
  the two targets); the aligned model's alpha < 1 target raises its entropy and keeps its accuracy (from D
  conditioned on a correct answer, and per learned aligned model, paired over seeds); the trajectory-level target
  is shorter than its start (both variants); on ``lengths`` the length-aware target keeps the length.
- evidence: TB reaches its own targets; alpha > 1 beats the base model and each RLIF baseline and approaches GRPO
  (the measured value and reason give PowerFlow's ceiling, its exact target's accuracy, and the smallest alpha whose
  target reaches GRPO); alpha < 1 applied to the aligned (GRPO-tuned) model raises its entropy without losing more
  than ``flat_acc_tol`` accuracy (a Pareto shift, both judged against the aligned model paired by seed);
  trajectory-level TB shortens responses (both variants); on ``lengths`` (correct answers at every length, the same
  per-token density at every length; its own base model must beat its count model) length-aware TB keeps the base
  model's length, as the paper states it.
- check: on ``chain`` the correct answers are the length-3 traces, so every accuracy-raising target is longer than
  the base and "keeps the base length" cannot hold for any sharpening: there length-aware TB ending at the length
  its exact target defines is TB convergence (``length_aware_keeps_length``, a check, as tb_matches_own_target).
- check: each trajectory-level sharpening TB run's expected length lies within ``length_tol`` (relative) of its exact
  target's, on both variants, and length-aware TB's on ``lengths``; every part must hold.
- the ``diverse`` variant (several correct responses per prompt, ``diverse``): the exact alpha < 1 target's
  (quality, diversity) point gates alpha < 1 TB's claims (quality and diversity above the base model's; more
  diversity than GRPO, where GRPO is competent and measured to collapse).
- check: alpha < 1 applied to the base model raises the entropy (true of the flattened target, so it holds once TB
  reaches it). Flattening the base model cannot keep its accuracy (its exact alpha < 1 target is less accurate): the
  paper's alpha < 1 setting is the aligned model's, judged above.
"""

from __future__ import annotations

from collections.abc import Callable
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


def anchored_exact(sources: dict[str, tuple[float, float]], holds: Callable[[float, float], bool],
                   what: str) -> Judgement:
    """An exact property of the exact target, one part per source (the data distribution, the learned model):
    ``sources[name] = (value, bound)``; every part must hold."""
    return all_of({name: exact(holds(value, bound), f"{what} from {name}: {value:.4f} vs {bound:.4f}",
                               basis="enumeration") for name, (value, bound) in sources.items()})


def _two(anchor: dict, kind: str, key: str) -> dict[str, float]:
    """The exact target's ``key`` from the data distribution and from the learned base, for ``measured``."""
    return {"from_data": _r(anchor["data"][kind][key]), "from_base": _r(anchor["base"][kind][key])}


def sharpen_ceiling(anchored: dict) -> float:
    """PowerFlow's accuracy ceiling: the lower of its exact alpha > 1 targets' accuracies (from D, from the base)."""
    return min(anchored["chain"][src]["length"]["accuracy"] for src in ("data", "base"))


def regime(runs: Runs, base: dict[str, float], targets: dict[str, dict[str, float]], reference: dict[str, float],
           ceiling: dict, aligned: dict[str, np.ndarray], anchored: dict, rungs: dict[str, float], p: ClaimParams,
           plans: Plans, peaks: dict[str, dict[str, float]]) -> list[Claim]:
    """The preconditions (module docstring)."""
    tb = [m for m in runs if m.startswith("tb_")]
    sharp = targets["tb_length_sharpen"]
    chain, top_acc = anchored["chain"], sharpen_ceiling(anchored)
    sharpening = {src: Ladder.of("higher", anchored["sharpen_ladder"][src]) for src in ("base", "data")}
    flat_acc = paired_diff_ci(aligned["target_accuracy"], aligned["aligned_accuracy"], unit="seed")
    flat_ent = paired_diff_ci(aligned["target_entropy"], aligned["aligned_entropy"], unit="seed")
    flat_d = anchored["aligned_data"]
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
        precondition("sharpen_target_has_headroom", "PowerFlow's exact alpha > 1 target is more accurate than the "
                     "strongest rung of the sharpening ladder (sampling, greedy decoding and temperature-1/alpha "
                     "decoding, exact, no training), from the learned base (against its ladder) and from D (against "
                     "D's)", sharpening["base"].strongest.name,
                     {"target_accuracy": _two(chain, "length", "accuracy"), "base": _r(base["accuracy"]),
                      "ladder_from_data": sharpening["data"].row()},
                     anchored_exact({src: (chain[src]["length"]["accuracy"], sharpening[src].strongest.point())
                                     for src in ("base", "data")}, lambda v, b: v > b,
                                    "the target's accuracy against the strongest rung"),
                     ladder=sharpening["base"]),
        precondition("grpo_within_reach", f"PowerFlow's exact alpha > 1 target (its accuracy ceiling, the lower of "
                     f"its targets from D and from the base) comes within {p.grpo_gap:g} of supervised GRPO's "
                     "accuracy", "PowerFlow's exact alpha > 1 target accuracy",
                     {"target_accuracy": _two(chain, "length", "accuracy"), "grpo": grpo.rounded()} | ceiling,
                     _with_reach(superiority(grpo, direction="below", reference=top_acc + p.grpo_gap,
                                             what="GRPO's accuracy", plan=plans.paired), sharp, ceiling)),
        precondition("flatten_target_is_pareto", f"the exact alpha < 1 length-aware target of the aligned model raises "
                     f"its entropy and keeps its accuracy within {p.flat_acc_tol:g}: from D's aligned analogue (D "
                     "conditioned on a correct answer, exact) and from each learned aligned (GRPO) model (paired t "
                     "intervals over seeds of target - aligned)", "the aligned model's exact accuracy and entropy",
                     {"from_data": {"aligned_accuracy": _r(flat_d["start"]["accuracy"]),
                                    "target_accuracy": _r(flat_d["length"]["accuracy"]),
                                    "aligned_entropy": _r(flat_d["start"]["entropy"]),
                                    "target_entropy": _r(flat_d["length"]["entropy"])},
                      "from_base": {"target_minus_aligned_accuracy": flat_acc.rounded(),
                                    "target_minus_aligned_entropy": flat_ent.rounded(),
                                    "target_accuracy": _ci(aligned["target_accuracy"]),
                                    "aligned_accuracy": _ci(aligned["aligned_accuracy"])}},
                     all_of({"aligned models: accuracy": noninferiority(
                                 flat_acc, margin=p.flat_acc_tol, direction="above",
                                 what="target - aligned accuracy", plan=plans.paired),
                             "aligned models: entropy": superiority(flat_ent, what="target - aligned entropy",
                                                                    plan=plans.paired),
                             "D | correct: accuracy": exact(
                                 flat_d["length"]["accuracy"] >= flat_d["start"]["accuracy"] - p.flat_acc_tol,
                                 f"target {flat_d['length']['accuracy']:.4f} vs {flat_d['start']['accuracy']:.4f}",
                                 basis="enumeration"),
                             "D | correct: entropy": exact(
                                 flat_d["length"]["entropy"] > flat_d["start"]["entropy"],
                                 f"target {flat_d['length']['entropy']:.4f} vs {flat_d['start']['entropy']:.4f}",
                                 basis="enumeration")})),
        precondition("traj_target_shortens", "on chain, the exact trajectory-level alpha > 1 target is shorter than "
                     "its start, from D and from the base", "the start's exact expected length",
                     {"target_length": _two(chain, "traj", "length"), "base": _r(base["length"]),
                      "data": _r(chain["data"]["start"]["length"])},
                     anchored_exact({src: (chain[src]["traj"]["length"], chain[src]["start"]["length"])
                                     for src in ("data", "base")}, lambda v, b: v < b, "the target's length")),
        precondition("aligned_over_sharpened", "the aligned model flattened in the paper's alpha < 1 setting (the "
                     "supervised-GRPO policy of each seed) is over-sharpened: its exact entropy lies below the base "
                     f"model's (t interval over {sharp_ent.n} seeds)", "the pretrained model's exact entropy (a "
                     "mechanism bound)", {"aligned_entropy": sharp_ent.rounded(), "base": _r(base["entropy"]),
                                          "aligned_accuracy": _ci(aligned["aligned_accuracy"])},
                     superiority(sharp_ent, direction="below", reference=base["entropy"],
                                 what="the aligned model's entropy", plan=plans.paired)),
    ]
    for m in RLIF:
        iv = mean_ci(runs[m]["accuracy"], unit="seed")
        out.append(precondition(f"sharpen_target_above_{m}", f"PowerFlow's exact alpha > 1 target (the lower of its "
                                f"targets from D and from the base) is more accurate than the {m} baseline (its t "
                                f"interval over {iv.n} seeds lies below): the ceiling is on the claimed side",
                                "PowerFlow's exact alpha > 1 target accuracy",
                                {m: iv.rounded(), "target_accuracy": _two(chain, "length", "accuracy")},
                                superiority(iv, direction="below", reference=top_acc, what=f"{m}'s accuracy",
                                            plan=plans.paired)))
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
             aligned: dict[str, np.ndarray], anchored: dict, p: ClaimParams, plans: Plans) -> list[Claim]:
    """The evidence and the checks (module docstring)."""
    chain = anchored["chain"]
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
                 {"powerflow": acc.rounded(), "base": _r(base["accuracy"]),
                  "exact_target_accuracy": _two(chain, "length", "accuracy")},
                 superiority(acc, reference=base["accuracy"], what="PowerFlow's accuracy", plan=plans.paired),
                 requires=[BASE, "sharpen_target_has_headroom"]),
    ]
    for m in RLIF:
        d = paired_diff_ci(*paired(runs, ["tb_length_sharpen", m], "accuracy"), unit="seed")
        out.append(evidence(f"sharpen_beats_{m}", f"alpha > 1 (length-aware TB) has higher exact accuracy than the "
                            f"{m} RLIF baseline (paired t interval of the difference over {d.n} seeds above 0)",
                            PAPER_RLIF, {"powerflow": acc.rounded(), m: _ci(runs[m]["accuracy"]),
                                         "difference": d.rounded(),
                                         "exact_target_accuracy": _two(chain, "length", "accuracy")},
                            superiority(d, what=f"PowerFlow - {m} accuracy", plan=plans.paired),
                            requires=[BASE, f"competent_{m}", f"sharpen_target_above_{m}"]))
    gap = paired_diff_ci(*paired(runs, ["tb_length_sharpen", "grpo"], "accuracy"), unit="seed")
    traj_len = mean_ci(traj["length"], unit="seed")
    flat_measured, flat_judged = _flatten_aligned(aligned, p, plans)
    sharp = targets["tb_length_sharpen"]
    rel_len = mean_ci((pf["length"] - sharp["length"]) / sharp["length"], unit="seed")
    out += [
        evidence("sharpen_approaches_grpo", f"alpha > 1 (length-aware TB) accuracy is at most {p.grpo_gap:g} below "
                 "supervised GRPO's (true reward; paired t interval of the difference)", PAPER_RLIF,
                 {"powerflow": acc.rounded(), "grpo": _ci(runs["grpo"]["accuracy"]),
                  "difference": gap.rounded(), "exact_target_accuracy": _two(chain, "length", "accuracy"),
                  "ceiling": {"alpha": ceiling["alpha"], "target_accuracy": _r(sharp["accuracy"]),
                              "smallest_alpha_reaching_grpo": ceiling["smallest_alpha_within_gap"]}},
                 _with_reach(noninferiority(gap, margin=p.grpo_gap, direction="above",
                                            what="PowerFlow - GRPO accuracy", plan=plans.paired), sharp, ceiling),
                 requires=[BASE, "competent_grpo", "grpo_within_reach"]),
        evidence("flatten_aligned_pareto", f"alpha < 1 (length-aware TB toward the aligned model's own power target) "
                 f"raises the exact entropy of the aligned, over-sharpened (GRPO-tuned) model and keeps its exact "
                 f"accuracy within {p.flat_acc_tol:g} (paired t intervals over seeds)", PAPER_FLAT,
                 flat_measured | {"exact_target_from_data": {
                     k: _r(anchored["aligned_data"]["length"][k]) for k in ("accuracy", "entropy")}},
                 flat_judged, requires=["competent_grpo", "aligned_over_sharpened", "flatten_target_is_pareto"]),
        evidence("traj_shortens_when_sharpening", "trajectory-level TB at alpha > 1 shortens the expected response "
                 "length below the base model's", "trajectory-level matching collapses length",
                 {"tb_traj_sharpen": traj_len.rounded(), "base": _r(base["length"]),
                  "exact_target_length": _two(chain, "traj", "length")},
                 superiority(traj_len, direction="below", reference=base["length"], what="its expected length",
                             plan=plans.seeds),
                 requires=[BASE, "traj_target_shortens"]),
    ]
    out.append(check(
        "length_aware_keeps_length", "on the chain variant (correct answers are the length-3 traces), length-aware TB "
        f"at alpha > 1 ends at the expected length its exact target defines, within {p.length_tol:g} (relative): TB "
        "convergence, not evidence (its target is longer than the base, reported: on chain any accuracy-raising "
        "target is)", "PowerFlow keeps the response length stable through training",
        {"relative_to_target": rel_len.rounded(), "powerflow": _ci(pf["length"]),
         "its_exact_target": _r(sharp["length"]), "base": _r(base["length"]),
         "target_relative_to_base": _r((sharp["length"] - base["length"]) / base["length"]),
         "tb_traj_sharpen_target": _r(targets["tb_traj_sharpen"]["length"]),
         "exact_target_length": _two(chain, "length", "length")},
        equivalence(rel_len, margin=p.length_tol, what="the length relative to its exact target", plan=plans.paired)))
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
           ceiling: dict, aligned: dict[str, np.ndarray], variant: dict, anchored: dict, rungs: dict[str, float],
           p: ClaimParams, plans: Plans, peaks: dict[str, dict[str, float]] | None = None,
           diverse_variant: dict | None = None, collapse_frac: float = 0.5) -> list[Claim]:
    """``runs[method][metric]``: per-seed ``seed``, exact accuracy, entropy, length and (TB) KL to the method's own
    target; ``base`` and ``targets[method]`` (with ``kl_base`` = KL(base || target)): exact metrics; ``reference``:
    the base model's and the trivial models' fit to D (kl_data_base, kl_data_count, kl_data_uniform, acc_count,
    acc_uniform); ``ceiling``: baselines.power_ceiling against GRPO's accuracy, with ``alpha`` = PowerFlow's;
    ``aligned``: per seed, the aligned model's (aligned_*), its exact target's (target_*) and the flattened policy's
    exact accuracy and entropy (and kl to the target), from the flatten_aligned stage; ``variant``: the lengths
    variant's (``lengths``); ``anchored``: the exact targets' metrics from D and from the learned base (anchors.py;
    ``chain`` and ``lengths``: ``data`` / ``base`` -> ``start``, ``traj``, ``length``; ``aligned_data``: D
    conditioned on a correct answer and its alpha < 1 target; ``sharpen_ladder``: ``base`` / ``data`` -> rung name
    -> exact accuracy); ``rungs``: the fine-tuning-utility ladder's exact accuracies by name (ladder.py);
    ``peaks[method]``: the step and exact accuracy at the peak of an RLIF baseline's mean training curve (shown
    beside its competence, where its final accuracy is read); ``diverse_variant``: the diverse variant's (``diverse``,
    with diverse.collapse_frac as ``collapse_frac``), omitted when None."""
    return (regime(runs, base, targets, reference, ceiling, aligned, anchored, rungs, p, plans, peaks or {})
            + findings(runs, base, targets, ceiling, aligned, anchored, p, plans)
            + lengths(runs, targets, variant, anchored["lengths"], p, plans)
            + (diverse(diverse_variant, p, collapse_frac, plans) if diverse_variant is not None else []))


def lengths(chain_runs: Runs, chain_targets: dict[str, dict[str, float]], variant: dict, anchor: dict,
            p: ClaimParams, plans: Plans) -> list[Claim]:
    """The length claims on the ``lengths`` variant and the check of both variants' lengths against their exact
    targets. ``variant``: ``base`` (exact metrics), ``reference`` (fit to D_len, as ``claims``' reference),
    ``targets[method]`` (exact metrics of its alpha > 1 target) and ``runs[method]`` (per-seed finals); ``anchor``:
    the exact targets from D_len and from its learned base (``data`` / ``base`` -> ``start``, ``traj``, ``length``)."""
    base, ref = variant["base"], variant["reference"]
    runs, targets = variant["runs"], variant["targets"]
    pf, sharp = runs["tb_length_sharpen"], targets["tb_length_sharpen"]
    rel = mean_ci((pf["length"] - base["length"]) / base["length"], unit="seed")
    traj = mean_ci(runs["tb_traj_sharpen"]["length"], unit="seed")
    learned = "lengths_base_learned"
    sources = ("data", "base")
    out = [
        base_learned(learned, "D_len", ref, base),
        precondition("lengths_target_keeps_length", f"on the lengths variant, the exact length-aware alpha > 1 target "
                     f"keeps the expected length within {p.length_tol:g} (relative) of its start, from D_len and from "
                     "its learned base", "the start's exact expected length (a bound)",
                     {"target_length": _two(anchor, "length", "length"), "base": _r(base["length"]),
                      "data": _r(anchor["data"]["start"]["length"]),
                      "former_rate_target_length_ablation_not_judged": {
                          f"{est}_estimator": _two(anchor, f"rate_{est}", "length") for est in ("ratio", "slope")},
                      "relative_change": {f"from_{src}": _r(anchor[src]["length"]["length"]
                                                            / anchor[src]["start"]["length"] - 1) for src in sources}},
                     anchored_exact({src: (anchor[src]["length"]["length"], anchor[src]["start"]["length"])
                                     for src in sources}, lambda v, b: abs(v - b) <= p.length_tol * b,
                                    "the target's length")),
        precondition("lengths_traj_target_shortens", "on the lengths variant, the exact trajectory-level alpha > 1 "
                     "target is shorter than its start, from D_len and from its learned base",
                     "the start's exact expected length",
                     {"target_length": _two(anchor, "traj", "length"), "base": _r(base["length"]),
                      "data": _r(anchor["data"]["start"]["length"])},
                     anchored_exact({src: (anchor[src]["traj"]["length"], anchor[src]["start"]["length"])
                                     for src in sources}, lambda v, b: v < b, "the target's length")),
        evidence("lengths_traj_shortens", "on the lengths variant (correct answers at every length), trajectory-level "
                 "TB at alpha > 1 shortens the expected response length below the base model's",
                 "trajectory-level matching collapses length",
                 {"tb_traj_sharpen": traj.rounded(), "base": _r(base["length"]),
                  "its_exact_target": _r(targets["tb_traj_sharpen"]["length"]),
                  "exact_target_length": _two(anchor, "traj", "length")},
                 superiority(traj, direction="below", reference=base["length"], what="its expected length",
                             plan=plans.seeds),
                 requires=[learned, "lengths_traj_target_shortens"]),
        evidence("lengths_length_aware_keeps_length", f"on the lengths variant, length-aware TB at alpha > 1 keeps the "
                 f"expected length within {p.length_tol:g} (relative) of the base model's",
                 "PowerFlow keeps the response length stable through training",
                 {"relative_change": rel.rounded(), "powerflow": _ci(pf["length"]),
                  "base": _r(base["length"]), "its_exact_target": _r(sharp["length"]),
                  "accuracy": _ci(pf["accuracy"]), "base_accuracy": _r(base["accuracy"]),
                  "exact_target_length": _two(anchor, "length", "length")},
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


PAPER_DIVERSE = ("alpha < 1 raises diversity and quality together (a Pareto shift), where reward maximisation "
                 "(GRPO) collapses onto one correct response")


def diverse(dv: dict, p: ClaimParams, collapse_frac: float, plans: Plans) -> list[Claim]:
    """The ``diverse`` variant (diverse.py): several correct responses per prompt; quality = P(correct), diversity =
    entropy among correct responses (exact). ``dv``: ``base`` / ``data`` (points), ``reference`` (fit to D_div as
    ``claims``' reference), ``anchor`` (``data`` / ``base`` -> ``start`` / ``target``: the exact points of the start
    and of its alpha < 1 power target), ``rungs`` (the base model's sampled and greedy quality), ``runs`` (per-seed
    finals of ``tb_traj_flatten`` and ``grpo``), ``alpha``.

    - preconditions: the base model learned D_div (better than its count model and the uniform policy); the exact
      target p^alpha has headroom: from D_div and from the learned base its quality and its diversity both exceed
      its start's (the effect can appear); GRPO is competent (quality above the strongest base-model rung) and
      collapses (its diversity's t interval lies below ``collapse_frac`` of the base model's).
    - evidence: alpha < 1 TB raises quality and diversity above the base model's (both intervals above, all_of);
      it keeps more diversity among correct responses than GRPO (paired by seed).
    - check: the TB runs reach their exact target (KL below ``kl_tol``).
    """
    base, anchor, runs = dv["base"], dv["anchor"], dv["runs"]
    tb, grpo = runs["tb_traj_flatten"], runs["grpo"]
    learned = "diverse_base_learned"
    tb_q, tb_d = mean_ci(tb["quality"], unit="seed"), mean_ci(tb["diversity"], unit="seed")
    g_q, g_d = mean_ci(grpo["quality"], unit="seed"), mean_ci(grpo["diversity"], unit="seed")
    ladder = base_rungs(dv["rungs"])
    top = ladder.strongest

    def targets(key: str) -> dict[str, float]:
        return {f"from_{src}": _r(anchor[src]["target"][key]) for src in ("data", "base")}

    points = {"exact_target_quality": targets("quality"), "exact_target_diversity": targets("diversity"),
              "alpha": dv["alpha"]}
    head = {f"{src}: {key}": exact(anchor[src]["target"][key] > anchor[src]["start"][key],
                                   f"target {anchor[src]['target'][key]:.4f} vs start "
                                   f"{anchor[src]['start'][key]:.4f}", basis="enumeration")
            for src in ("data", "base") for key in ("quality", "diversity")}
    d_div = paired_diff_ci(*paired(runs, ["tb_traj_flatten", "grpo"], "diversity"), unit="seed")
    kl = mean_ci(tb["kl"], unit="seed")
    return [
        base_learned(learned, "D_div", dv["reference"], base),
        precondition("diverse_target_has_headroom", f"on the diverse variant, the exact alpha = {dv['alpha']:g} power "
                     "target is both more accurate (P(correct)) and more diverse (entropy among correct responses) "
                     "than its start, from D_div and from the learned base (every part must hold)",
                     "the start's exact quality and diversity",
                     points | {"start_quality": {"from_data": _r(anchor["data"]["start"]["quality"]),
                                                 "from_base": _r(base["quality"])},
                               "start_diversity": {"from_data": _r(anchor["data"]["start"]["diversity"]),
                                                   "from_base": _r(base["diversity"])}},
                     all_of(head)),
        precondition("diverse_competent_grpo", "on the diverse variant, GRPO's exact quality lies above the strongest "
                     f"trivial use of the un-tuned base model (its sampled and greedy response; t interval over "
                     f"{g_q.n} seeds)", top.name, {"grpo_quality": g_q.rounded(), "strongest_rung": _r(top.point())},
                     superiority(g_q, reference=top.point(), what="GRPO's quality", plan=plans.seeds), ladder=ladder),
        precondition("diverse_grpo_collapses", f"on the diverse variant, GRPO collapses onto few correct responses: "
                     f"its exact diversity among correct responses lies below {collapse_frac:g} x the base model's "
                     f"(t interval over {g_d.n} seeds)",
                     "the pretrained model's exact diversity (a mechanism bound: collapse)",
                     {"grpo_diversity": g_d.rounded(), "base_diversity": _r(base["diversity"]),
                      "bound": _r(collapse_frac * base["diversity"])},
                     superiority(g_d, direction="below", reference=collapse_frac * base["diversity"],
                                 what="GRPO's diversity", plan=plans.seeds)),
        evidence("diverse_flatten_raises_quality_and_diversity", "on the diverse variant, alpha < 1 "
                 "(trajectory-level TB toward p_base^alpha) raises both the exact quality and the exact diversity "
                 "among correct responses above the base model's (t intervals over seeds, both must hold)",
                 PAPER_DIVERSE, points | {"tb_quality": tb_q.rounded(), "tb_diversity": tb_d.rounded(),
                                          "base_quality": _r(base["quality"]), "base_diversity": _r(base["diversity"]),
                                          "grpo_quality": g_q.rounded(), "grpo_diversity": g_d.rounded()},
                 all_of({"quality": superiority(tb_q, reference=base["quality"], what="the flattened quality",
                                                plan=plans.seeds),
                         "diversity": superiority(tb_d, reference=base["diversity"], what="the flattened diversity",
                                                  plan=plans.seeds)}),
                 requires=[learned, "diverse_target_has_headroom"]),
        evidence("diverse_flatten_more_diverse_than_grpo", "on the diverse variant, alpha < 1 TB keeps more diversity "
                 "among correct responses than GRPO (paired t interval of the difference over seeds above 0)",
                 PAPER_DIVERSE, points | {"tb_diversity": tb_d.rounded(), "grpo_diversity": g_d.rounded(),
                                          "difference": d_div.rounded(), "tb_quality": tb_q.rounded(),
                                          "grpo_quality": g_q.rounded()},
                 superiority(d_div, what="TB - GRPO diversity", plan=plans.seeds),
                 requires=[learned, "diverse_target_has_headroom", "diverse_competent_grpo",
                           "diverse_grpo_collapses"]),
        check("diverse_tb_matches_target", f"on the diverse variant, alpha < 1 TB reaches its exact target: "
              f"KL(pi || p_base^alpha) below {p.kl_tol:g} nats (t interval over seeds)",
              "TB's fixed point is pi = target", {"kl": kl.rounded()},
              superiority(kl, direction="below", reference=p.kl_tol, what="KL to the target", plan=plans.seeds)),
    ]
