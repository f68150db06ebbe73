"""The autoregressive policy pi_theta(y | q) = prod_{t=0}^{|y|} pi(y_t | q, y_<t): the shared tiny GPT
(paperdag.common.transformer) reading [a, b, SEP, y_1, ..., y_L], with the response vocabulary enforced by masking:
step t < L may emit a digit or EOS, step L only EOS (so every response has at most L content tokens).

A response is stored as (L,) content digits padded with 0 and its content length k; its tokens are y_1..y_k, EOS,
so it has k + 1 generated tokens.
"""

from __future__ import annotations

import torch

from paperdag.common.transformer import GPT, GPTConfig

from .task import Task


def build_model(task: Task, d_model: int, n_layer: int, n_head: int) -> GPT:
    """A GPT over the task's vocabulary whose context holds a prompt and L content tokens."""
    return GPT(GPTConfig(vocab_size=task.vocab, context=3 + task.max_len, n_layer=n_layer, n_head=n_head,
                         d_model=d_model))


def _inputs(task: Task, prompts: torch.Tensor, responses: torch.Tensor) -> torch.Tensor:
    """(N, 3 + L) model inputs [a, b, SEP, y_1..y_L] (positions after the response's end are padding)."""
    sep = torch.full((len(prompts), 1), task.sep, dtype=torch.long, device=prompts.device)
    return torch.cat([prompts, sep, responses], 1)


def _steps(task: Task, logits: torch.Tensor) -> torch.Tensor:
    """(N, L + 1, K + 1) log-softmax over {digits, EOS} of the logits read at steps 0..L-1, then the forced step L."""
    K = task.modulus
    steps = torch.log_softmax(logits[:, 2:, : K + 1].float(), dim=-1)
    forced = torch.full((len(logits), 1, K + 1), float("-inf"), device=logits.device)
    forced[..., K] = 0.0
    return torch.cat([steps, forced], 1)


def step_log_probs(model: GPT, task: Task, prompts: torch.Tensor, responses: torch.Tensor) -> torch.Tensor:
    """(N, L + 1, K + 1) log pi(. | q, y_<t) over {digits, EOS} at steps t = 0..L; step L puts all mass on EOS.

    Step t is read at position 2 + t of [a, b, SEP, y_1..y_L]; the forced step L needs no forward pass, so the
    model reads [a, b, SEP, y_1..y_{L-1}] (causal attention: the logits of steps t < L do not see y_L)."""
    return _steps(task, model(_inputs(task, prompts, responses[:, : task.max_len - 1])))


def token_log_probs(steps: torch.Tensor, responses: torch.Tensor, lengths: torch.Tensor, eos: int) -> torch.Tensor:
    """(N, L + 1) log pi(y_t | q, y_<t) of the response's own tokens (digits then EOS at step k), 0 after EOS."""
    L = responses.shape[1]
    t = torch.arange(L + 1, device=steps.device)
    tokens = torch.cat([responses, torch.zeros_like(responses[:, :1])], 1)
    tokens = torch.where(t == lengths.unsqueeze(1), torch.full_like(tokens, eos), tokens)
    picked = steps.gather(2, tokens.unsqueeze(2)).squeeze(2)
    return torch.where(t <= lengths.unsqueeze(1), picked, torch.zeros_like(picked))


def sequence_log_prob(model: GPT, task: Task, prompts: torch.Tensor, responses: torch.Tensor,
                      lengths: torch.Tensor) -> torch.Tensor:
    """(N,) log pi(y | q) = sum_{t=0}^{k} log pi(y_t | q, y_<t) (differentiable)."""
    steps = step_log_probs(model, task, prompts, responses)
    return token_log_probs(steps, responses, lengths, task.eos).sum(1)


def sample(model: GPT, task: Task, prompts: torch.Tensor, gen: torch.Generator,
           score: bool = False) -> tuple[torch.Tensor, ...]:
    """Ancestral samples y ~ pi(. | q): (N, L) content digits (0-padded) and (N,) content lengths; with ``score``
    also their step_log_probs (differentiable). The last step reads [a, b, SEP, y_1..y_{L-1}] (0 after an EOS), which
    is step_log_probs' input, so that one forward pass, run with gradients, serves both."""
    K, L = task.modulus, task.max_len
    n, dev = len(prompts), prompts.device
    responses = torch.zeros(n, L, dtype=torch.long, device=dev)
    lengths = torch.full((n,), L, dtype=torch.long, device=dev)
    done = torch.zeros(n, dtype=torch.bool, device=dev)
    for t in range(L):  # step t reads [a, b, SEP, y_1..y_t] (causal: nothing later changes its logits)
        with torch.set_grad_enabled(score and t == L - 1):
            logits = model(_inputs(task, prompts, responses[:, :t]))
        probs = torch.softmax(logits[:, -1, : K + 1].detach().float(), dim=-1)
        token = torch.multinomial(probs.cpu(), 1, generator=gen).squeeze(1).to(dev)
        stop = (token == K) & ~done
        lengths[stop] = t
        done |= stop
        responses[:, t] = torch.where(done, torch.zeros_like(token), token)
    return (responses, lengths, _steps(task, logits)) if score else (responses, lengths)
