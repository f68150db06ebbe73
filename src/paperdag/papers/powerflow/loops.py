"""Training loops: maximum-likelihood pretraining of the base model on D, and on-policy fine-tuning of a copy of it
with one objective of objectives.py (same prompts, group size, steps and learning rate for every method)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass

import torch

from paperdag.common.transformer import GPT

from .objectives import (
    TB_VARIANTS,
    entropy_reward,
    free_steps,
    grpo_loss,
    majority_reward,
    require_answer,
    self_certainty_reward,
    tb_residual,
)
from .policy import sample, sequence_log_prob, step_log_probs, token_log_probs
from .task import Task, response_answers


def pretrain(model: GPT, task: Task, prompts: torch.Tensor, responses: torch.Tensor, lengths: torch.Tensor,
             steps: int, batch: int, lr: float, gen: torch.Generator,
             log: Callable[[int, float], None]) -> None:
    """Maximum likelihood: minimise the mean sequence NLL -log pi(y | q) / (L + 1) over minibatches of the (q, y)
    pairs (Adam). The divisor is the constant L + 1 (a per-token scale), never the response's own k + 1: weighting
    each pair by 1 / (k + 1) would make the optimum pi(y|q) proportional to D(y|q) / (k + 1), a model biased toward
    short responses rather than D."""
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    for step in range(steps):
        idx = torch.randint(len(lengths), (batch,), generator=gen).to(prompts.device)
        nll = -sequence_log_prob(model, task, prompts[idx], responses[idx], lengths[idx]) / (task.max_len + 1)
        loss = nll.mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        log(step, loss.item())


@dataclass(frozen=True)
class Method:
    """A fine-tuning objective: ``kind`` is a TB variant or an RLIF reward; ``alpha`` the power of a TB target."""

    kind: str
    alpha: float = 1.0


def base_rate_estimate(base: GPT, task: Task, n_samples: int, gen: torch.Generator) -> torch.Tensor:
    """(Q,) h^(q) = sum_i log p_base(y_i|q) / sum_i n(y_i) over n_samples base samples per prompt."""
    prompts = task.prompts.to(next(base.parameters()).device).repeat_interleave(n_samples, 0)
    with torch.no_grad():
        responses, lengths = sample(base, task, prompts, gen)
        log_p = sequence_log_prob(base, task, prompts, responses, lengths)
    q = len(task.prompts)
    return (log_p.view(q, n_samples).sum(1) / (lengths + 1).view(q, n_samples).sum(1).float()).cpu().double()


def rlif_reward(kind: str, task: Task, steps: torch.Tensor, responses: torch.Tensor, lengths: torch.Tensor,
                group: int) -> torch.Tensor:
    """(Q, G) rewards of the RLIF baseline or supervised reference ``kind`` (objectives.py)."""
    free = free_steps(lengths, task.max_len)
    answers = response_answers(responses, lengths).view(-1, group)
    answered = (lengths > 0).view(-1, group)
    if kind == "entropy":
        return require_answer(entropy_reward(token_log_probs(steps, responses, lengths, task.eos).sum(1))
                              .view(-1, group), answered)
    if kind == "self_certainty":
        return require_answer(self_certainty_reward(steps, free).view(-1, group), answered)
    if kind == "majority":
        return majority_reward(answers)
    if kind == "grpo":
        return (answers == task.answers.to(answers.device).unsqueeze(1)).float()
    raise ValueError(f"unknown objective {kind!r}")


def finetune(base: GPT, task: Task, method: Method, h: torch.Tensor, steps: int, group: int, lr: float,
             lr_log_z: float, clip: float, gen: torch.Generator,
             log: Callable[[int, GPT, torch.Tensor, float], None]) -> GPT:
    """Fine-tune a copy of ``base`` for ``steps`` steps of G = ``group`` on-policy samples per prompt (all prompts
    each step, Adam, policy gradients clipped to norm ``clip``); ``log(step, model, log_z, loss)`` is called before each step and after the last."""
    model = copy.deepcopy(base)
    dev = next(model.parameters()).device
    q = len(task.prompts)
    log_z = torch.zeros(q, device=dev, requires_grad=True)
    opt = torch.optim.Adam([{"params": model.parameters(), "lr": lr}, {"params": [log_z], "lr": lr_log_z}])
    prompts = task.prompts.to(dev).repeat_interleave(group, 0)
    rows = torch.arange(q, device=dev).repeat_interleave(group)
    h_rows = h.to(dev).float()[rows]
    loss = torch.tensor(float("nan"))
    for step in range(steps + 1):
        log(step, model, log_z.detach(), loss.item())
        if step == steps:
            break
        responses, lengths = sample(model, task, prompts, gen)
        n_tokens = (lengths + 1).float()
        steps_lp = step_log_probs(model, task, prompts, responses)
        log_pi = token_log_probs(steps_lp, responses, lengths, task.eos).sum(1)
        if method.kind in TB_VARIANTS:
            with torch.no_grad():
                log_base = sequence_log_prob(base, task, prompts, responses, lengths)
            delta = tb_residual(method.kind, log_z[rows], log_pi, log_base, n_tokens, method.alpha, h_rows)
            loss = delta.pow(2).mean()
        else:
            reward = rlif_reward(method.kind, task, steps_lp.detach(), responses, lengths, group)
            loss = grpo_loss(reward, log_pi.view(q, group), task.max_len)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        opt.step()
    return model
