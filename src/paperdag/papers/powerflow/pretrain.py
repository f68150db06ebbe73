"""Stage ``train_base``: pretrain the base model on D by maximum likelihood; its exact fit to D as the sanity check."""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from paperdag.io import save_tensors
from paperdag.stage import StageContext

from . import exact
from .data import load_pairs, load_task, stage_name
from .loops import pretrain as fit
from .params import Params
from .policy import build_model
from .prepare import DATA_FILE, PROMPTS_FILE
from .task import Task, data_log_probs

BASE_FILE = "base.safetensors"


def fit_base(ctx: StageContext[Params], task: Task, prepared: str,
             data_log_probs: Callable[[Task], torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    """Fit the base model of ``task`` to the pairs of stage ``prepared`` (loops.pretrain, maximum likelihood, the
    pretrain section's settings), save it as base.safetensors and return (log D, log base): the exact (Q, R) log
    probabilities of the task's data distribution (``data_log_probs``: task.data_log_probs for the chain and lengths
    variants, diversity.data_log_probs for diverse) and of the fitted base model (exact.log_probs)."""
    p = ctx.params
    prompts, responses, lengths = (x.to(ctx.device) for x in load_pairs(ctx.input(prepared, DATA_FILE),
                                                                         task.max_len))
    model = build_model(task, p.model.d_model, p.model.n_layer, p.model.n_head).to(ctx.device)
    gen = torch.Generator().manual_seed(p.seed)

    def log(step: int, loss: float) -> None:
        ctx.log_metric("pretrain_nll_per_token", loss, step)
        ctx.report("pretrain", step, p.pretrain.steps)

    fit(model, task, prompts, responses, lengths, p.pretrain.steps, p.pretrain.batch, p.pretrain.lr, gen, log)
    save_tensors(ctx.output(BASE_FILE), model.state_dict())
    return data_log_probs(task), exact.log_probs(model, task)


def pretrain(ctx: StageContext[Params], variant: str = "chain") -> dict[str, float]:
    """base.safetensors (fit_base on D); returns exact KL(D || base) beside KL(D || uniform) and both accuracies."""
    t = ctx.params.task
    prepared = stage_name("prepare", variant)
    task = load_task(ctx.input(prepared, PROMPTS_FILE), t.modulus, t.max_len, t.guess_bias, variant)
    log_d, log_base = fit_base(ctx, task, prepared, data_log_probs)
    kl = float((log_d.exp() * (log_d - log_base)).sum(1).mean())
    kl_uniform = float((log_d.exp() * (log_d + math.log(log_d.shape[1]))).sum(1).mean())
    return {"kl_data_base": kl, "kl_data_uniform": kl_uniform, "acc_base": exact.metrics(log_base, task)["accuracy"],
            "acc_data": exact.metrics(log_d, task)["accuracy"]}
