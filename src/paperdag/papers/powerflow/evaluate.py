"""Stage ``evaluate``: exact base-model and target metrics by enumeration, across-seed summaries of every method
(finetune_<method> seeds, with replicate_<method>'s added for the RLIF comparison and GRPO), the aligned model's
flattening (flatten_aligned), the lengths task variant (its base model, targets and sharpening TB runs), the
fine-tuning-utility ladder of the base model (ladder.py), the exact targets from D and from the learned base and the
sharpening ladders (anchors.py), the diverse variant's points (diversity.py), the claims (claims.py) and the
figures (plots.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import torch

from paperdag.claims import write_metrics
from paperdag.common.stats import mean_ci
from paperdag.io import load_tensors, read_table, save_figure, write_table
from paperdag.stage import StageContext

from . import anchors, diverse, diversity, exact
from .baselines import count_model_expected_kl, count_model_log_probs, kl, power_ceiling
from .claims import claims
from .data import load_pairs, load_task
from .finetune import CURVE_FILE, FINAL_FILE
from .ladder import greedy_accuracy, majority_accuracy
from .params import Params
from .plots import plot_diverse, plot_kl_curves, plot_lengths, plot_pareto
from .policy import build_model
from .prepare import DATA_FILE, PROMPTS_FILE
from .pretrain import BASE_FILE
from .stats import spread_by_step
from .task import Task, all_responses, data_log_probs

KEYS = ("accuracy", "entropy", "length", "kl")
ALIGNED = ("seed", "kl", *(f"{who}{k}" for who in ("aligned_", "target_", "") for k in ("accuracy", "entropy",
                                                                                       "length")))


def trivial_models(task: Task, log_base: torch.Tensor, data: Path) -> dict[str, float]:
    """The base model's exact fit to D beside the trivial models': KL(D || .) and accuracy of the uniform policy and
    of the per-prompt count model of the pretraining pairs (baselines.py)."""
    log_d = data_log_probs(task)
    log_uniform = torch.full_like(log_d, -float(np.log(log_d.shape[1])))
    log_count = count_model_log_probs(task, *load_pairs(data, task.max_len))
    return {"kl_data_base": kl(log_d, log_base), "kl_data_count": kl(log_d, log_count),
            "kl_data_uniform": kl(log_d, log_uniform), "acc_count": exact.metrics(log_count, task)["accuracy"],
            "acc_uniform": exact.metrics(log_uniform, task)["accuracy"]}


def sharpening_ladder(log_p: torch.Tensor, task: Task, alpha: float, who: str) -> dict[str, float]:
    """The sharpening ladder of ``who`` (the base model or D), exact accuracies: its sampled response, its greedy
    response and temperature-1/alpha decoding (anchors.tempered)."""
    log_p = anchors.safe(log_p)
    return {f"{who}'s sampled response": exact.metrics(log_p, task)["accuracy"],
            f"{who}'s greedy response": greedy_accuracy(log_p, task),
            f"temperature-1/{alpha:g} decoding of {who}": exact.metrics(anchors.tempered(log_p, task, alpha),
                                                                        task)["accuracy"]}


def anchored_targets(log_data: torch.Tensor, log_base: torch.Tensor, task: Task, p: Params) -> dict:
    """The chain variant's exact targets from D and from the learned base, D's aligned analogue (D conditioned on a
    correct answer) with its alpha < 1 target, and both sharpening ladders (anchors.py)."""
    alpha = p.alpha.sharpen
    flat = anchors.power_anchor(anchors.correct_only(log_data, task), task, p.alpha.flatten)
    return {"chain": {"data": anchors.power_anchor(log_data, task, alpha),
                      "base": anchors.power_anchor(log_base, task, alpha)},
            "aligned_data": {"start": flat["start"], "length": flat["length"]},
            "sharpen_ladder": {"base": sharpening_ladder(log_base, task, alpha, "the base model"),
                               "data": sharpening_ladder(log_data, task, alpha, "D")}}


def base_ladder(log_base: torch.Tensor, task: Task, base_accuracy: float, votes: int) -> dict[str, float]:
    """The un-tuned base model's exact accuracy sampled, greedy and by a majority vote of ``votes`` samples."""
    return {"the base model's sampled response": base_accuracy,
            "the base model's greedy response": greedy_accuracy(log_base, task),
            f"a majority vote of {votes} base-model samples": majority_accuracy(log_base, task, votes)}


def final_runs(ctx: StageContext[Params], method: str, replicated: bool) -> pa.Table:
    """The final exact metrics of every seed of ``method`` (finetune_<method>'s, then replicate_<method>'s)."""
    tables = [read_table(ctx.input(f"finetune_{method}", FINAL_FILE))]
    if replicated:
        tables.append(read_table(ctx.input(f"replicate_{method}", FINAL_FILE)).select(tables[0].column_names))
    return pa.concat_tables(tables).sort_by("seed")


def length_variant(ctx: StageContext[Params], methods: list[str]) -> dict:
    """The ``lengths`` task variant: its base model's exact metrics and fit to D_len, the exact alpha > 1 targets of
    ``methods`` and their per-seed final metrics."""
    p, t = ctx.params, ctx.params.task
    task = load_task(ctx.input("prepare_lengths", PROMPTS_FILE), t.modulus, t.max_len, t.guess_bias, "lengths")
    model = build_model(task, p.model.d_model, p.model.n_layer, p.model.n_head)
    model.load_state_dict(load_tensors(ctx.input("train_base_lengths", BASE_FILE)))
    log_base, n_tokens = exact.log_probs(model, task), (all_responses(task)[1] + 1).double()
    targets = {m: exact.metrics(exact.target(m.split("_")[1], log_base, n_tokens, p.alpha.sharpen), task)
               for m in methods}
    runs = {}
    for m in methods:
        final = read_table(ctx.input(f"finetune_{m}_lengths", FINAL_FILE))
        runs[m] = {k: final[k].to_numpy() for k in ("seed", *KEYS)}
    anchor = {"data": anchors.power_anchor(data_log_probs(task), task, p.alpha.sharpen),
              "base": anchors.power_anchor(log_base, task, p.alpha.sharpen)}
    return {"base": exact.metrics(log_base, task), "targets": targets, "runs": runs, "anchor": anchor,
            "reference": trivial_models(task, log_base, ctx.input("prepare_lengths", DATA_FILE))}


def diverse_variant(ctx: StageContext[Params], methods: list[str]) -> dict:
    """The ``diverse`` task variant (diversity.py): its base model's (quality, diversity) point and fit to D_div beside
    the trivial models' (count model, uniform policy; the count model's exact expected KL over draws of the declared
    n_train pairs beside the drawn one's), the exact alpha < 1 power targets' points from D_div and from
    the base (diversity.anchor), the base model's sampled and greedy quality (the ladder of GRPO's competence) and
    each method's per-seed finals (``runs[method][key]``, finetune_<method>_diverse)."""
    task = diverse.variant_task(ctx)
    base = diverse.load_base(ctx, task)
    log_base, log_d = exact.log_probs(base, task), diversity.data_log_probs(task)
    log_uniform = torch.full_like(log_d, -float(np.log(log_d.shape[1])))
    log_count = count_model_log_probs(task, *load_pairs(ctx.input("prepare_diverse", diverse.DATA_FILE),
                                                        task.max_len))
    alpha = ctx.params.alpha.flatten
    runs = {}
    for m in methods:
        t = read_table(ctx.input(f"finetune_{m}_diverse", diverse.FINAL_FILE)).sort_by("seed")
        runs[m] = {k: t[k].to_numpy() for k in t.column_names}
    return {"base": diversity.point(log_base, task), "data": diversity.point(log_d, task),
            "reference": {"kl_data_base": kl(log_d, log_base), "kl_data_count": kl(log_d, log_count),
                          "kl_data_count_expected": count_model_expected_kl(log_d, task, ctx.params.diverse.n_train),
                          "kl_data_uniform": kl(log_d, log_uniform)},
            "anchor": {"data": diversity.anchor(log_d, task, alpha), "base": diversity.anchor(log_base, task, alpha)},
            "rungs": {"the base model's sampled response": diversity.point(log_base, task)["quality"],
                      "the base model's greedy response": greedy_accuracy(log_base, task)},
            "runs": runs, "alpha": alpha}


def evaluate(ctx: StageContext[Params], methods: list[str], replicated: list[str],
             lengths: list[str], diverse_runs: list[str] = ()) -> dict[str, float]:
    """metrics.json, methods.parquet (one row per method: means and intervals) and four plots."""
    p, t = ctx.params, ctx.params.task
    task = load_task(ctx.input("prepare", PROMPTS_FILE), t.modulus, t.max_len, t.guess_bias)
    model = build_model(task, p.model.d_model, p.model.n_layer, p.model.n_head)
    model.load_state_dict(load_tensors(ctx.input("train_base", BASE_FILE)))
    log_base, n_tokens = exact.log_probs(model, task), (all_responses(task)[1] + 1).double()
    base = exact.metrics(log_base, task)
    reference = trivial_models(task, log_base, ctx.input("prepare", DATA_FILE))

    runs, s, targets, curves, peaks = {}, {}, {}, {}, {}
    dists = {"base": exact.length_distribution(log_base, task)}
    for m in methods:
        final = final_runs(ctx, m, m in replicated)
        runs[m] = {k: final[k].to_numpy() for k in ("seed", *KEYS)}
        s[m] = {k: mean_ci(runs[m][k], p.claims.confidence) for k in KEYS}
        dists[m] = np.mean(np.array(final["length_dist"].to_pylist()), 0)
        curve = read_table(ctx.input(f"finetune_{m}", CURVE_FILE))
        if m.startswith("tb_"):
            kind, power = m.split("_")[1], m.split("_")[2]
            log_target = exact.target(kind, log_base, n_tokens, getattr(p.alpha, power))
            targets[m] = exact.metrics(log_target, task) | {"kl_base": exact.metrics(log_base, task, log_target)["kl"]}
            curves[m] = spread_by_step(curve["step"].to_numpy(), curve["kl"].to_numpy())
        else:  # the peak of an RLIF baseline's training curve, beside its final accuracy
            acc = spread_by_step(curve["step"].to_numpy(), curve["accuracy"].to_numpy())
            best = int(np.argmax(acc["mean"]))
            peaks[m] = {"step": float(acc["step"][best]), "accuracy": round(float(acc["mean"][best]), 4)}
    baseline_only = [k for k in KEYS if k != "kl"]
    write_table(ctx.output("methods.parquet"), {
        "method": methods, **{f"{k}_{v}": [getattr(s[m][k], v) for m in methods] for k in KEYS
                              for v in ("mean", "lo", "hi")}})
    flat = read_table(ctx.input("flatten_aligned", FINAL_FILE)).sort_by("seed")
    aligned = {k: flat[k].to_numpy() for k in ALIGNED}
    metrics = {f"{k[:3]}_base": base[k] for k in baseline_only} | reference
    metrics |= {f"{k[:3]}_{who}aligned": float(np.mean(aligned[f"{pre}{k}"])) for who, pre in
                (("", "aligned_"), ("flattened_", ""), ("target_flattened_", "target_")) for k in baseline_only}
    metrics |= {f"{k[:3]}_{m}": s[m][k].mean for m in methods for k in KEYS if m.startswith("tb_") or k != "kl"}
    metrics |= {f"target_{k[:3]}_{m}": v[k] for m, v in targets.items() for k in baseline_only}
    save_figure(plot_kl_curves(curves), ctx.output("kl_curves.png"))
    save_figure(plot_pareto(s, base, targets, {k: float(np.mean(v)) for k, v in aligned.items()}),
                ctx.output("pareto.png"))
    save_figure(plot_lengths(dists), ctx.output("lengths.png"))
    ceiling = power_ceiling(log_base, n_tokens, task, float(s["grpo"]["accuracy"].mean), p.claims.grpo_gap)
    ceiling["alpha"] = p.alpha.sharpen
    variant = length_variant(ctx, lengths)
    metrics |= {"len_base_lengths": variant["base"]["length"], "acc_base_lengths": variant["base"]["accuracy"]}
    metrics |= {f"{k[:3]}_{m}_lengths": float(np.mean(variant["runs"][m][k])) for m in lengths
                for k in ("accuracy", "length")}
    metrics |= {f"target_{k[:3]}_{m}_lengths": variant["targets"][m][k] for m in lengths
                for k in ("accuracy", "length")}
    rungs = base_ladder(log_base, task, base["accuracy"], p.finetune.group)
    metrics |= {"acc_base_greedy": rungs["the base model's greedy response"],
                "acc_base_majority": rungs[f"a majority vote of {p.finetune.group} base-model samples"]}
    anchored = anchored_targets(data_log_probs(task), log_base, task, p) | {"lengths": variant["anchor"]}
    for src in ("data", "base"):
        metrics |= {f"target_{k[:3]}_{kind}_from_{src}{suffix}": anchored[name][src][kind][k]
                    for name, suffix in (("chain", ""), ("lengths", "_lengths"))
                    for kind in ("traj", "length", "rate_ratio", "rate_slope") for k in ("accuracy", "length")}
    metrics |= {f"acc_sharpen_ladder_{src}_{rung}": v for src, ladder in
                anchored["sharpen_ladder"].items() for rung, v in zip(("sampled", "greedy", "tempered"),
                                                                     ladder.values(), strict=True)}
    div = diverse_variant(ctx, diverse_runs)
    for name, point in (("base", div["base"]), ("data", div["data"])):
        metrics |= {f"{k}_{name}_diverse": point[k] for k in ("quality", "diversity")}
    for src in ("data", "base"):
        metrics |= {f"target_{k}_from_{src}_diverse": div["anchor"][src]["target"][k]
                    for k in ("quality", "diversity")}
    metrics |= {f"{k}_{m}_diverse": float(np.mean(div["runs"][m][k])) for m in diverse_runs
                for k in ("quality", "diversity")}
    metrics |= {f"{k}_diverse": v for k, v in div["reference"].items()}
    save_figure(plot_diverse(div), ctx.output("diverse.png"))
    verdicts = claims(runs, base, targets, reference, ceiling, aligned, variant, anchored, rungs, p.claims, p.plans,
                      peaks, div if diverse_runs else None, p.diverse.collapse_frac)
    write_metrics(ctx.out, metrics, verdicts)
    return {k: float(v) for k, v in metrics.items()}
