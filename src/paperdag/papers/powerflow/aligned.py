"""Stage ``flatten_aligned``: the paper's alpha < 1 setting, flattening an aligned, over-sharpened model toward its
own power target. The aligned model of seed s (power.seeds of them) is the supervised-GRPO policy of seed s
(``finetune_grpo``'s seeds, then ``replicate_grpo``'s); PowerFlow (length-aware TB at alpha = alpha.flatten)
fine-tunes a copy of it by LA-TB (objectives.py) toward
    p_LA(y|q)  proportional to  p_aligned(y|q)^alpha exp(-lambda(q) n(y))
(exact.target with the aligned model in place of the base), and the exact metrics of the aligned model, of that
target and of the flattened policy are recorded per seed."""

from __future__ import annotations

import torch

from paperdag.io import load_tensors, write_table
from paperdag.stage import StageContext

from . import exact
from .data import load_task
from .finetune import FINAL_FILE, WEIGHTS_FILE
from .loops import Method
from .loops import finetune as run
from .params import Params
from .policy import build_model
from .prepare import PROMPTS_FILE
from .task import all_responses

STREAM = 1_000  # generator seed = seed * 10_007 + STREAM + s: draws apart from every finetune_<method> stream


def policy_state(tensors: dict[str, torch.Tensor], seed: int) -> dict[str, torch.Tensor]:
    """The policy weights of seed ``seed`` in a finetune stage's weights file (its log Z left out)."""
    prefix = f"seed{seed}."
    return {k[len(prefix):]: v for k, v in tensors.items() if k.startswith(prefix) and k[len(prefix):] != "log_z"}


def flatten_aligned(ctx: StageContext[Params]) -> dict[str, float]:
    """final.parquet: per seed, aligned_* and target_* (exact accuracy, entropy, length) and the flattened policy's
    exact metrics with its KL to the target."""
    p, t, f = ctx.params, ctx.params.task, ctx.params.finetune
    task = load_task(ctx.input("prepare", PROMPTS_FILE), t.modulus, t.max_len, t.guess_bias)
    tensors = load_tensors(ctx.input("finetune_grpo", WEIGHTS_FILE), ctx.device)
    tensors |= load_tensors(ctx.input("replicate_grpo", WEIGHTS_FILE), ctx.device)
    n_tokens, alpha = (all_responses(task)[1] + 1).double(), p.alpha.flatten
    rows = []
    for seed in range(p.power.seeds):
        aligned = build_model(task, p.model.d_model, p.model.n_layer, p.model.n_head).to(ctx.device)
        aligned.load_state_dict(policy_state(tensors, seed))
        gen = torch.Generator().manual_seed(p.seed * 10_007 + STREAM + seed)
        log_aligned = exact.log_probs(aligned, task)
        target = exact.target("length", log_aligned, n_tokens, alpha)
        model = run(aligned, log_aligned, task, Method("length", alpha), f.steps, f.group, f.lr, f.lr_log_z, f.clip,
                    gen, lambda step, *_, seed=seed: ctx.report(f"seed {seed}", step, f.steps))
        rows.append({"seed": seed, **{f"aligned_{k}": v for k, v in exact.metrics(log_aligned, task).items()},
                     **{f"target_{k}": v for k, v in exact.metrics(target, task).items()},
                     **exact.metrics(exact.log_probs(model, task), task, target)})
    write_table(ctx.output(FINAL_FILE), {k: [row[k] for row in rows] for k in rows[0]})
    return {key: sum(row[key] for row in rows) / len(rows) for key in ("accuracy", "entropy", "aligned_entropy")}
