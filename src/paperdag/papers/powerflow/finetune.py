"""Stage ``finetune_<method>``: fine-tune the base model with one objective, once per seed, with exact curves."""

from __future__ import annotations

import torch

from paperdag.io import load_tensors, save_tensors, write_table
from paperdag.stage import StageContext

from . import exact
from .data import load_task, stage_name
from .loops import Method
from .loops import finetune as run
from .objectives import TB_VARIANTS
from .params import Params
from .policy import build_model
from .prepare import PROMPTS_FILE
from .pretrain import BASE_FILE
from .task import all_responses

WEIGHTS_FILE = "weights.safetensors"
CURVE_FILE = "curve.parquet"
FINAL_FILE = "final.parquet"


def finetune(ctx: StageContext[Params], objective: str, power: str, variant: str = "chain") -> dict[str, float]:
    """weights.safetensors (seed<i>.* policy, log_z), curve.parquet (exact metrics every ``eval_every`` updates,
    KL to the method's own target for TB) and final.parquet (final exact metrics and length distribution)."""
    p, t, f = ctx.params, ctx.params.task, ctx.params.finetune
    task = load_task(ctx.input(stage_name("prepare", variant), PROMPTS_FILE), t.modulus, t.max_len, t.guess_bias,
                     variant)
    base = build_model(task, p.model.d_model, p.model.n_layer, p.model.n_head).to(ctx.device)
    base.load_state_dict(load_tensors(ctx.input(stage_name("train_base", variant), BASE_FILE), ctx.device))
    alpha = getattr(p.alpha, power) if power != "none" else 1.0
    log_base, n_tokens = exact.log_probs(base, task), (all_responses(task)[1] + 1).double()
    curve, final, tensors = [], [], {}
    for seed in range(f.seeds):
        gen = torch.Generator().manual_seed(p.seed * 10_007 + seed)
        target = exact.target(objective, log_base, n_tokens, alpha) if objective in TB_VARIANTS else None

        def log(step: int, model: torch.nn.Module, log_z: torch.Tensor, loss: float) -> None:
            tensors[f"seed{seed}.log_z"] = log_z.clone()
            if step % f.eval_every == 0 or step == f.steps:
                m = exact.metrics(exact.log_probs(model, task), task, target)
                curve.append({"seed": seed, "step": step, "loss": loss, **m})
                ctx.log_metric("kl_to_target" if target is not None else "accuracy", m.get("kl", m["accuracy"]),
                               step, run=f"seed{seed}", params={"seed": seed})
            ctx.report(f"seed {seed}", step, f.steps)

        method = Method(objective, alpha, f.intuitor_kl)
        model = run(base, log_base, task, method, f.steps, f.group, f.lr, f.lr_log_z, f.clip, gen, log)
        log_pi = exact.log_probs(model, task)
        final.append({"seed": seed, **exact.metrics(log_pi, task, target),
                      "length_dist": exact.length_distribution(log_pi, task).tolist()})
        tensors |= {f"seed{seed}.{k}": v for k, v in model.state_dict().items()}
    save_tensors(ctx.output(WEIGHTS_FILE), tensors, metadata={"objective": objective, "alpha": str(alpha)})
    write_table(ctx.output(CURVE_FILE), {k: [row.get(k, float("nan")) for row in curve] for k in curve[0] | {"kl": 0}})
    write_table(ctx.output(FINAL_FILE), {k: [row.get(k, float("nan")) for row in final] for k in final[0] | {"kl": 0}})
    return {key: sum(row[key] for row in final) / len(final) for key in ("accuracy", "entropy", "length")}
