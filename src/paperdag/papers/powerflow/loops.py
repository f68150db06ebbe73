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
    intuitor_loss,
    majority_reward,
    require_answer,
    self_certainty_reward,
    tb_residual,
)
from .policy import sample, sequence_log_prob, step_log_probs, token_log_probs
from .task import Task, response_answers, response_index


def pretrain(model: GPT, task: Task, prompts: torch.Tensor, responses: torch.Tensor, lengths: torch.Tensor,
             steps: int, batch: int, lr: float, gen: torch.Generator,
             log: Callable[[int, float], None]) -> None:
    """Maximum likelihood: minimise the mean sequence NLL -log pi(y | q) / (L + 1) over minibatches of the (q, y)
    pairs (Adam, learning rate decayed linearly from ``lr`` to 0). The divisor is the constant L + 1 (a per-token
    scale), never the response's own k + 1: weighting each pair by 1 / (k + 1) would make the optimum pi(y|q)
    proportional to D(y|q) / (k + 1), a model biased toward short responses rather than D. The decay settles the
    final iterate: at a constant rate it stays in Adam's noise ball (the default run's base model: exact
    KL(D || base) 0.057 at step 1200, 0.093 at step 1500; with the decay 0.031)."""
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    decay = torch.optim.lr_scheduler.LambdaLR(opt, lambda step: 1.0 - step / steps)
    for step in range(steps):
        idx = torch.randint(len(lengths), (batch,), generator=gen).to(prompts.device)
        nll = -sequence_log_prob(model, task, prompts[idx], responses[idx], lengths[idx]) / (task.max_len + 1)
        loss = nll.mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        decay.step()
        log(step, loss.item())


@dataclass(frozen=True)
class Method:
    """A fine-tuning objective: ``kind`` is a TB variant or an RLIF reward; ``alpha`` the power of a TB target;
    ``beta`` Intuitor's KL coefficient to the reference (base) policy (self_certainty only)."""

    kind: str
    alpha: float = 1.0
    beta: float = 0.0


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


def finetune(base: GPT, log_base: torch.Tensor, task: Task, method: Method, steps: int, group: int, lr: float,
             lr_log_z: float, clip: float, gen: torch.Generator,
             log: Callable[[int, GPT, torch.Tensor, float], None]) -> GPT:
    """Fine-tune a copy of ``base`` for ``steps`` steps of G = ``group`` on-policy samples per prompt (all prompts
    each step, Adam with both learning rates decayed linearly to 0, policy gradients clipped to norm ``clip``), so the
    final iterate is not a draw from Adam's noise ball: at a constant rate the default run's final exact KL of
    the former length-aware TB to its target was 0.028 / 0.062 / 0.060 over three seeds, and one seed went 0.077 -> 0.525 ->
    0.028 at steps 200 / 250 / 300 (GRPO's accuracy 0.998 -> 0.957 on one seed at the last step); with the decay
    0.029 / 0.029 / 0.029. ``log_base`` (Q, R) is the base model's exact log-likelihood of every response
    (exact.log_probs), read by TB for each sample; ``log(step, model, log_z, loss)`` is called before each step and
    after the last."""
    model = copy.deepcopy(base)
    dev = next(model.parameters()).device
    q = len(task.prompts)
    log_z = torch.zeros(q, device=dev, requires_grad=True)
    opt = torch.optim.Adam([{"params": model.parameters(), "lr": lr}, {"params": [log_z], "lr": lr_log_z}])
    decay = torch.optim.lr_scheduler.LambdaLR(opt, lambda k: 1.0 - k / steps)
    prompts = task.prompts.to(dev).repeat_interleave(group, 0)
    rows = torch.arange(q, device=dev).repeat_interleave(group)
    base_table = log_base.to(dev).float()
    loss = torch.tensor(float("nan"))
    for step in range(steps + 1):
        log(step, model, log_z.detach(), loss.item())
        if step == steps:
            break
        responses, lengths, steps_lp = sample(model, task, prompts, gen, score=True)
        n_tokens = (lengths + 1).float()
        token_lp = token_log_probs(steps_lp, responses, lengths, task.eos)
        log_pi = token_lp.sum(1)
        if method.kind in TB_VARIANTS:
            log_p_base = base_table[rows, response_index(responses, lengths, task.modulus)]
            delta = tb_residual(method.kind, log_z[rows], log_pi, log_p_base, n_tokens, method.alpha)
            loss = delta.pow(2).mean()
        else:
            reward = rlif_reward(method.kind, task, steps_lp.detach(), responses, lengths, group)
            if method.kind == "self_certainty":
                with torch.no_grad():
                    ref = token_log_probs(step_log_probs(base, task, prompts, responses), responses, lengths, task.eos)
                loss = intuitor_loss(reward, token_lp, ref, free_steps(lengths, task.max_len).float(), method.beta)
            else:
                loss = grpo_loss(reward, log_pi.view(q, group), task.max_len)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        opt.step()
        decay.step()
    return model
