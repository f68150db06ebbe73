"""The fine-tuning objectives, on on-policy samples y ~ pi_theta(. | q) with n(y) generated tokens (EOS included).

The paper's objective (Chen et al. 2026, arXiv 2603.18363v2, Eqs. 5-6, just before Sec. 3.3): TB toward an
unnormalised target,
    L_TB(theta, phi; q, y) = ( log Z_phi(q) + sum_t log pi_theta(y_t | y_<t, q) - log p~_target(y | q) )^2,   (5)
    min_{theta, phi}  E_{q ~ D} E_{y ~ pi_theta(.|q)} [ L_TB ],                                             (6)
and Sec. 3.3 (length-aware PowerFlow): log p(y|q) = sum_t log p(y_t | y_<t, q) is approximately negatively linear in
|y|, so matching p_base^alpha is dominated by length (alpha > 1 collapses it, alpha < 1 inflates it); the
length-aware target removes the alpha-rescaled part of that per-token decay. Its closed form is written below as
``length`` (the Sec. 3.3 equation itself could not be retrieved offline; tests/papers/test_powerflow.py checks the
implemented residual against Eq. 5 with this target, written independently).

Trajectory Balance (Malkin et al. 2022, NeurIPS) toward the alpha-power target, learned log Z_phi(q) per prompt:
    traj    delta = log Z(q) + log pi(y|q) - alpha log p_base(y|q)                    target p_base^alpha
    token   delta = log Z(q) + [log pi(y|q) - alpha log p_base(y|q)] / n(y)           (FlowRL-style normalisation;
            at delta = 0, log pi = alpha log p_base - n(y) log Z: target p_base^alpha e^{-c n(y)}, c = log Z)
    length  delta = log Z(q) + log pi(y|q) - alpha log p_base(y|q) + (alpha - 1) h(q) n(y)
            (length-aware: h(q) = the base model's log-likelihood per token, estimated from base samples; the
            per-token decay of log p_base is only rescaled by 1, not alpha, so a sequence that is exactly as likely
            per token as a typical base sample keeps its base score at every length: target
            p_base^alpha e^{-(alpha-1) h n(y)})
    loss = mean delta^2.
RLIF baselines and the supervised reference, all with GRPO advantages A_i = (r_i - mean_G r) / (std_G r + eps) over
G samples per prompt and the Dr. GRPO loss -mean_i A_i log pi(y_i|q) / (L + 1) (Liu et al. 2025: no per-response
length normalisation, which would itself bias length), except Intuitor, run in its published form (below):
    entropy        r = log pi(y|q)                                (EM-RL, trajectory level, Agarwal et al. 2025)
    self_certainty r = (1/n) sum_t KL(U || pi(. | q, y_<t))       (Intuitor, Zhao et al. 2025)
    majority       r = 1[ans(y) = majority answer of the group]    (TTRL, Zuo et al. 2025)
    grpo           r = 1[ans(y) = c]                               (supervised GRPO, Shao et al. 2024)
Intuitor's objective is GRPO's (Shao et al. 2024, Eq. 3; Zhao et al. 2025, Sec. 3), per-response token mean and a
KL penalty to the reference (base) policy with the k3 estimator,
    J = (1/G) sum_i (1/n_i) sum_t [ min(rho_t A_i, clip(rho_t, 1 -+ eps) A_i) - beta D_t ],
    D_t = pi_ref(y_t|.) / pi(y_t|.) - log(pi_ref(y_t|.) / pi(y_t|.)) - 1,
with one policy update per batch of samples (the recipe's), so rho_t = pi / pi_old = 1 and the clip never binds:
its value and gradient are those of A_i log pi(y_t|.) (``intuitor_loss``).
Token sums run over the free steps t <= k with t < L (the forced EOS at step L carries no choice). Entropy and
self-certainty carry the recipes' answer requirement (``require_answer``): a response without an answer (the empty
one) gets its group's lowest reward; without it both converge to the empty response, whose one certain EOS step is
the most confident output. The entropy baseline is EM-RL's trajectory-level form: its token-level mean-entropy form
(RENT's) rewards whichever response is most confident per token and drifts to arbitrary, mostly wrong ones here.
"""

from __future__ import annotations

import torch

TB_VARIANTS = ("traj", "token", "length")
RLIF_REWARDS = ("entropy", "self_certainty", "majority", "grpo")


def tb_residual(kind: str, log_z: torch.Tensor, log_pi: torch.Tensor, log_base: torch.Tensor, n_tokens: torch.Tensor,
                alpha: float, h: torch.Tensor) -> torch.Tensor:
    """delta of TB variant ``kind`` (module docstring), elementwise over samples."""
    if kind == "traj":
        return log_z + log_pi - alpha * log_base
    if kind == "token":
        return log_z + (log_pi - alpha * log_base) / n_tokens
    if kind == "length":
        return log_z + log_pi - alpha * log_base + (alpha - 1.0) * h * n_tokens
    raise ValueError(f"unknown TB variant {kind!r}")


def free_steps(lengths: torch.Tensor, max_len: int) -> torch.Tensor:
    """(N, L + 1) mask of the steps t <= k with t < L."""
    t = torch.arange(max_len + 1, device=lengths.device)
    return (t <= lengths.unsqueeze(1)) & (t < max_len)


def entropy_reward(log_pi: torch.Tensor) -> torch.Tensor:
    """EM-RL's trajectory-level reward (Agarwal et al. 2025): r(y) = log pi(y|q) = sum_t log pi(y_t | q, y_<t), the
    one-sample estimate of -H(pi(.|q)); its policy gradient E[r grad log pi] is exactly grad(-H), since
    E[grad log pi] = 0."""
    return log_pi


def self_certainty_reward(steps: torch.Tensor, free: torch.Tensor) -> torch.Tensor:
    """Intuitor's self-certainty (Zhao et al. 2025): r = (1/n) sum_t KL(U || pi_t)
    = (1/n) sum_t [-log V - (1/V) sum_j log pi_t(j)] over the n free steps (the forced last step is skipped)."""
    steps, free = steps[:, :-1], free[:, :-1]
    v = steps.shape[-1]
    kl = -torch.log(torch.tensor(float(v))) - steps.mean(-1)
    return (kl * free).sum(1) / free.sum(1).clamp(min=1)


def require_answer(reward: torch.Tensor, answered: torch.Tensor) -> torch.Tensor:
    """(Q, G) the recipes' answer requirement (Intuitor prompts for a boxed final answer; EMPO and TTRL score a
    response without an extractable answer at the bottom): a response that carries no answer gets the lowest
    reward of its group."""
    floor = reward.min(1, keepdim=True).values.expand_as(reward)
    return torch.where(answered, reward, floor)


def majority_reward(answers: torch.Tensor) -> torch.Tensor:
    """(Q, G) r = 1[ans = the group's most frequent answer] (ties to the smallest; no answer (-1) never votes)."""
    n_classes = int(answers.max().clamp(min=0)) + 1
    votes = torch.zeros(answers.shape[0], n_classes + 1, device=answers.device)
    votes.scatter_add_(1, answers + 1, torch.ones_like(answers, dtype=votes.dtype))
    votes[:, 0] = -1.0
    majority = votes.argmax(1, keepdim=True) - 1
    return ((answers == majority) & (answers >= 0)).float()


def grpo_loss(rewards: torch.Tensor, log_pi: torch.Tensor, max_len: int, eps: float = 1e-6) -> torch.Tensor:
    """(Q, G) rewards and log pi: -mean A log pi / (L + 1) with group-normalised advantages A."""
    adv = (rewards - rewards.mean(1, keepdim=True)) / (rewards.std(1, keepdim=True) + eps)
    return -(adv.detach() * log_pi).mean() / (max_len + 1)


def intuitor_loss(rewards: torch.Tensor, token_lp: torch.Tensor, ref_token_lp: torch.Tensor, free: torch.Tensor,
                  beta: float, eps: float = 1e-6) -> torch.Tensor:
    """-J of Intuitor's GRPO objective (module docstring): (Q, G) rewards, (N, L + 1) per-token log pi (differentiable)
    and log pi_ref of the sampled tokens, (N, L + 1) mask of the n_i free steps, KL coefficient ``beta``."""
    adv = ((rewards - rewards.mean(1, keepdim=True)) / (rewards.std(1, keepdim=True) + eps)).reshape(-1, 1)
    log_ratio = ref_token_lp - token_lp
    penalty = log_ratio.exp() - log_ratio - 1.0
    per_token = (adv.detach() * token_lp - beta * penalty) * free
    return -(per_token.sum(1) / free.sum(1).clamp(min=1)).mean()

