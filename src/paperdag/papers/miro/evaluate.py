"""Stage ``evaluate``: speed-ups from every method's reward curves (analysis.py), the final scores each train stage
computed on a larger held-out prompt set (rescore.py), the trivial generators' GenEval on the same prompts
(trivial.py) and each generator's own replay (trivial.own_replay_geneval), MIRO's controllability sweep and the sample grids (evaluation.py), its guidance ablation
(guidance.py), the claims (claims.py) and the figures (plots.py)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import torch

from paperdag.claims import write_metrics
from paperdag.common.stats import Interval
from paperdag.io import load_tensors, read_json, read_table, save_figure
from paperdag.stage import StageContext

from .analysis import OBSERVES, corruption_gaps, curve_bands, seed_speedups
from .claims import claims, sampler_named
from .detector import Detector
from .evaluation import Sampler, controllability, diversity, generate
from .flow import load_net
from .guidance import MODES, ablate
from .methods import method
from .params import Params
from .plots import plot_control, plot_final, plot_reward_curves, plot_samples
from .prepare import CHECKS_FILE, DATA_FILE, DETECTOR_FILE, EVALUATOR_FILE
from .rescore import held_out_prompts
from .rewards import REWARDS
from .scenes import CORRUPTIONS, caption_text, render
from .train import CURVES_FILE, FINALS_FILE, WEIGHTS_FILE
from .trivial import ladder_geneval, own_replay_geneval, target_scores

SCORES = ("aggregate", "geneval_overall", "diversity", *(f"reward_{r}" for r in REWARDS))


def evaluate(ctx: StageContext[Params], methods: list[str]) -> dict[str, float]:
    """metrics.json with the claims, and reward_curves.png, samples.png, control.png, final_rewards.png."""
    p, dev = ctx.params, ctx.device
    data, checks = load_tensors(ctx.input("prepare", DATA_FILE), dev), read_json(ctx.input("prepare", CHECKS_FILE))
    det, evaluator = Detector().to(dev), Detector().to(dev)
    det.load_state_dict(load_tensors(ctx.input("prepare", DETECTOR_FILE), dev))
    evaluator.load_state_dict(load_tensors(ctx.input("prepare", EVALUATOR_FILE), dev))
    tables = {m: read_table(ctx.input(f"train_{m}", CURVES_FILE)) for m in methods}
    curves = pa.concat_tables([t.append_column("method", pa.array([m] * t.num_rows)) for m, t in tables.items()])
    keys = ("aggregate", *(f"reward_{r}" for r in REWARDS))
    per_key = {k: seed_speedups(curves, tuple(methods[1:]), k) for k in keys}
    speed = {b: {k.removeprefix("reward_"): per_key[k][b] for k in keys} for b in methods[1:]}
    nets = {m: load_tensors(ctx.input(f"train_{m}", WEIGHTS_FILE), dev) for m in methods}
    spec = (p.model.width, p.model.depth, len(REWARDS))
    miro = method("miro", p.methods.single_reward, p.methods.filter_reward, p.methods.filter_fraction)
    bins = data["bins"].cpu().numpy()
    levels = {r: np.unique(bins[:, j]) for j, r in enumerate(REWARDS)}
    s = Sampler(p.sampler.guidance, p.sampler.n_steps, 1, p.seed)
    per_seed = [controllability(load_net(nets["miro"], f"s{seed}.", 3 * 16 * 16, *spec), det, miro,
                                data["prompts"][: p.sampler.n_control], list(levels.values()), s, p.rewards.min_pixels)
                for seed in ctx.progress(p.methods.seeds, desc="controllability")]
    control = {r: np.stack([c[j] for c in per_seed]) for j, r in enumerate(REWARDS)}
    reference = data["rewards"].cpu().numpy()
    held_out = torch.as_tensor(held_out_prompts(p.seed, p.final.n_prompts), device=dev)
    specs = {m: method(m, p.methods.single_reward, p.methods.filter_reward, p.methods.filter_fraction) for m in methods}
    final = {m: _by_seed(read_table(ctx.input(f"train_{m}", FINALS_FILE)), p.methods.seeds) for m in methods}
    modes = [ablate(load_net(nets["miro"], f"s{seed}.", 3 * 16 * 16, *spec), det, evaluator, held_out, reference,
                    p.sampler.guidance, p.sampler.n_steps, p.seed, p.rewards.min_pixels) for seed in p.methods.seeds]
    guided = {k: {mode: np.array([m[mode][k] for m in modes]) for mode in MODES} for k in ("aggregate", "geneval")}

    prompts = data["prompts"][:8]
    grids = {"data (clean)": render(prompts.cpu().numpy(), np.random.default_rng(p.seed))}
    for m in methods:
        net = load_net(nets[m], f"s{p.methods.seeds[0]}.", 3 * 16 * 16, *spec)
        grids[m] = generate(net, specs[m], prompts, torch.ones(len(REWARDS), device=dev), s)[0].cpu().numpy()
    save_figure(plot_samples(grids, [caption_text(t) for t in prompts.cpu().numpy()]), ctx.output("samples.png"))
    save_figure(plot_reward_curves(curve_bands(curves, methods, SCORES, p.plans.seeds.confidence)),
                ctx.output("reward_curves.png"))
    save_figure(plot_control(levels, control), ctx.output("control.png"))
    save_figure(plot_final({m: {r: float(final[m][f"z_{r}"].mean()) for r in REWARDS} for m in methods}),
                ctx.output("final_rewards.png"))

    metrics = {f"{m}_{k}": float(final[m][k].mean()) for m in methods for k in SCORES}
    metrics |= {f"speedup_over_{b}" + ("" if k == "aggregate" else f"_{k}"): float(v.mean())
                for b, by_key in speed.items() for k, v in by_key.items()} | checks
    regime, gaps, reward_std = _regime(data, evaluator, held_out.cpu().numpy(), p)
    trivial = ladder_geneval(data["images"], data["tokens"].cpu().numpy(), evaluator, held_out.cpu().numpy(),
                             p.sampler.per_prompt, len(p.methods.seeds), ctx.rng)
    metrics |= regime | {f"miro_guidance_{mode}_{k}": float(v.mean()) for k, by in guided.items()
                         for mode, v in by.items()}
    metrics |= {f"trivial_geneval_overall_{k}": float(v.mean()) for k, v in trivial.items()}
    scores = {m: target_scores(specs[m], bins, reference) for m in methods}
    scores["clean"] = (~data["flags"].bool().any(1)).float().cpu().numpy()
    own, cover = own_replay_geneval(data["images"], data["tokens"].cpu().numpy(), scores, evaluator,
                                    held_out.cpu().numpy(), p.sampler.per_prompt, len(p.methods.seeds), ctx.rng)
    metrics |= {f"{m}_own_replay_geneval": float(v.mean()) for m, v in own.items() if m != "clean"}
    metrics |= {f"{m}_own_replay_exact_cover": v for m, v in cover.items() if m != "clean"}
    metrics["trivial_geneval_overall_clean_replay"] = float(own["clean"].mean())
    f = p.methods.filter_fraction
    targets = {"base": "all training images", "filter": f"the kept {f:.0%} by the {p.methods.filter_reward} reward",
               "single": f"the {p.methods.single_reward} reward's top bin",
               "miro": "the all-top cell (the nearest bins to it where the layout has none)"}
    steps = np.unique(curves["step"].to_numpy())
    speed_cap = float(steps.max() / steps.min())
    metrics |= {f"speedup_share_over_{b}" + ("" if k == "aggregate" else f"_{k}"): float((v > 1).mean())
                for b, by_key in speed.items() for k, v in by_key.items()}
    renders = int(data["sanity"].shape[1])
    correct = {net: (round(checks[f"{net}_overall"] * renders), renders) for net in ("detector", "evaluator")}
    top = (int((data["bins"] == 1.0).all(1).sum()), int(len(data["bins"])))
    sampler = sampler_named(p.sampler.guidance, p.sampler.n_steps, p.sampler.per_prompt, p.methods.single_reward)
    found = claims(final, speed, speed_cap, control, levels, reward_std, gaps, top, correct, trivial, own, cover,
                   {m: targets[m] for m in methods}, regime["data_diversity"], p.methods.single_reward, guided, sampler,
                   p.claims, p.plans)
    write_metrics(ctx.out, metrics, found)
    return {k: float(v) for k, v in metrics.items()}


def _by_seed(table: pa.Table, seeds: list[int]) -> dict[str, np.ndarray]:
    """Per score of a finals table, its values in the order of ``seeds``."""
    order = [table["seed"].to_pylist().index(seed) for seed in seeds]
    return {k: table[k].to_numpy()[order] for k in table.column_names if k != "seed"}


def _regime(data: dict[str, torch.Tensor], evaluator: Detector, prompts: np.ndarray,
            p: Params) -> tuple[dict[str, float], dict[str, dict[str, Interval]], dict[str, float]]:
    """The numbers of the preconditions and references: metrics (the all-top share; each clean minus corrupted
    reward gap; the diversity of clean renders on the final scores' held-out ``prompts``), the gaps' intervals, and
    each reward's std over the training data."""
    rewards, bins = data["rewards"].cpu().numpy(), data["bins"].cpu().numpy()
    gaps = corruption_gaps(data["sanity"].cpu().numpy(), OBSERVES, REWARDS, CORRUPTIONS, 0.95)
    metrics = {"all_top_share": float((bins == 1.0).all(1).mean())}
    metrics |= {f"gap_{r}_{k}": g.mean for r, v in gaps.items() for k, g in v.items()}
    clean = render(prompts.repeat(p.sampler.per_prompt, 0), np.random.default_rng(p.seed))
    with torch.no_grad():
        features = evaluator.features(torch.as_tensor(clean, dtype=torch.float32, device=data["images"].device))
    metrics["data_diversity"] = diversity(features, p.sampler.per_prompt)
    return metrics, gaps, {r: float(rewards[:, j].std()) for j, r in enumerate(REWARDS)}
