"""Stage ``replicate_<method>``: the seeds finetune.seeds .. power.seeds - 1 of a method in the RLIF comparison or of
GRPO (the same fine-tuning as ``finetune_<method>``, generator seed = seed * 10_007 + seed index as there, no training
curve), so PowerFlow, each RLIF baseline and GRPO are compared on power.seeds paired seeds, and flatten_aligned
flattens power.seeds GRPO-aligned models."""

from __future__ import annotations

import torch

from paperdag.io import load_tensors, save_tensors, write_table
from paperdag.stage import StageContext

from . import exact
from .data import load_task
from .finetune import FINAL_FILE, WEIGHTS_FILE
from .loops import Method
from .loops import finetune as run
from .objectives import TB_VARIANTS
from .params import Params
from .policy import build_model
from .prepare import PROMPTS_FILE
from .pretrain import BASE_FILE
from .task import all_responses


def replicate(ctx: StageContext[Params], objective: str, power: str) -> dict[str, float]:
    """weights.safetensors (seed<i>.* policy, log_z, as finetune_<method>'s) and final.parquet (final exact metrics,
    and KL to the own target for TB) of each added seed."""
    p, t, f = ctx.params, ctx.params.task, ctx.params.finetune
    task = load_task(ctx.input("prepare", PROMPTS_FILE), t.modulus, t.max_len, t.guess_bias)
    base = build_model(task, p.model.d_model, p.model.n_layer, p.model.n_head).to(ctx.device)
    base.load_state_dict(load_tensors(ctx.input("train_base", BASE_FILE), ctx.device))
    alpha = getattr(p.alpha, power) if power != "none" else 1.0
    log_base, n_tokens = exact.log_probs(base, task), (all_responses(task)[1] + 1).double()
    rows, tensors = [], {}
    for seed in range(f.seeds, p.power.seeds):
        gen = torch.Generator().manual_seed(p.seed * 10_007 + seed)
        target = exact.target(objective, log_base, n_tokens, alpha) if objective in TB_VARIANTS else None
        method = Method(objective, alpha, f.intuitor_kl)

        def log(step: int, _model: torch.nn.Module, log_z: torch.Tensor, _loss: float, seed: int = seed) -> None:
            tensors[f"seed{seed}.log_z"] = log_z.clone()
            ctx.report(f"seed {seed}", step, f.steps)

        model = run(base, log_base, task, method, f.steps, f.group, f.lr, f.lr_log_z, f.clip, gen, log)
        tensors |= {f"seed{seed}.{k}": v for k, v in model.state_dict().items()}
        log_pi = exact.log_probs(model, task)
        rows.append({"seed": seed, **exact.metrics(log_pi, task, target),
                     "length_dist": exact.length_distribution(log_pi, task).tolist()})
    save_tensors(ctx.output(WEIGHTS_FILE), tensors, metadata={"objective": objective, "alpha": str(alpha)})
    write_table(ctx.output(FINAL_FILE), {k: [row.get(k, float("nan")) for row in rows] for k in rows[0] | {"kl": 0}})
    return {key: sum(row[key] for row in rows) / len(rows) for key in ("accuracy", "entropy", "length")}
