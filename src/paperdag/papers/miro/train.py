"""Stage ``train_<method>``: one generator per seed by flow matching (training.py; all seeds in one batched network),
each seed's reward curves scored at evenly spaced checkpoints (evaluation.py), the final EMA weights and their
scores on the held-out captions (rescore.py)."""

from __future__ import annotations

import torch

from paperdag.io import load_tensors, save_tensors, write_table
from paperdag.stage import StageContext

from .detector import Detector
from .evaluation import Sampler, generate, score
from .flow import Condition, VelocityNet
from .methods import method
from .params import Params
from .prepare import DATA_FILE, DETECTOR_FILE, EVALUATOR_FILE
from .rescore import final_scores, held_out_prompts
from .training import Budget, train_flow

WEIGHTS_FILE = "weights.safetensors"
CURVES_FILE = "curves.parquet"
FINALS_FILE = "finals.parquet"


def train(ctx: StageContext[Params], method_name: str) -> dict[str, float]:
    """weights.safetensors ({"s<seed>.<param>": ...}), curves.parquet (seed, step, scores) and finals.parquet (seed,
    scores on the held-out captions, rescore.py); returns the mean scores at the last checkpoint."""
    p, dev = ctx.params, ctx.device
    data = load_tensors(ctx.input("prepare", DATA_FILE), dev)
    det, evaluator = Detector().to(dev), Detector().to(dev)
    det.load_state_dict(load_tensors(ctx.input("prepare", DETECTOR_FILE), dev))
    evaluator.load_state_dict(load_tensors(ctx.input("prepare", EVALUATOR_FILE), dev))
    m = method(method_name, p.methods.single_reward, p.methods.filter_reward, p.methods.filter_fraction)
    rows = torch.as_tensor(m.rows(data["rewards"].cpu().numpy()), device=dev)
    images, mask = data["images"][rows] * 2 - 1, torch.as_tensor(m.mask, dtype=torch.float32, device=dev)
    cond = Condition(data["tokens"][rows], data["bins"][rows], mask.expand(len(rows), -1))
    s = Sampler(p.sampler.guidance, p.sampler.n_steps, p.sampler.per_prompt, p.seed)
    reference, b = data["rewards"].cpu().numpy(), p.budget
    checkpoints = {round(b.steps * k / b.n_checkpoints) for k in range(1, b.n_checkpoints + 1)}
    nets = []
    for seed in p.methods.seeds:  # each seed's own init, as in a run of that seed alone
        torch.manual_seed(seed)
        nets.append(VelocityNet(images[0].numel(), p.model.width, p.model.depth, mask.numel()).to(dev))
    curves = []

    def checkpoint(step: int, emas: list[VelocityNet]) -> None:
        for seed, ema in zip(p.methods.seeds, emas, strict=True):
            x, tokens = generate(ema, m, data["prompts"], torch.ones_like(mask), s)
            curves.append({"seed": seed, "step": step} | score(det, evaluator, x, tokens, reference,
                                                               s.per_prompt, p.rewards.min_pixels))
        ctx.report(method_name, step, b.steps)

    gens = [torch.Generator(device=dev).manual_seed(seed) for seed in p.methods.seeds]
    emas = train_flow(nets, images, cond, Budget(b.steps, b.batch, b.lr, b.caption_dropout, b.ema), gens,
                      checkpoints, checkpoint)
    weights = {f"s{seed}.{k}": v for seed, ema in zip(p.methods.seeds, emas, strict=True)
               for k, v in ema.state_dict().items()}
    save_tensors(ctx.output(WEIGHTS_FILE), weights, metadata={"method": method_name})
    write_table(ctx.output(CURVES_FILE), {k: [row[k] for row in curves] for k in curves[0]})
    held_out = torch.as_tensor(held_out_prompts(p.seed, p.final.n_prompts), device=dev)
    write_table(ctx.output(FINALS_FILE), {"seed": list(p.methods.seeds)} | final_scores(
        emas, m, held_out, det, evaluator, reference, s, p.rewards.min_pixels))
    final = [row for row in curves if row["step"] == b.steps]
    return {k: sum(r[k] for r in final) / len(final) for k in final[0] if k not in ("seed", "step")}
