"""The fine-tuning objectives, on on-policy samples y ~ pi_theta(. | q) with n(y) = |y| generated tokens (EOS included).

The paper's objective (Chen, Chen, Li & Huang 2026, "PowerFlow", arXiv 2603.18363v2): TB toward an unnormalised
target (Sec. 3.2, Eqs. 5-6),
    L_TB(theta, phi; q, y) = ( log Z_phi(q) + sum_t log pi_theta(y_t | y_<t, q) - log p~_target(y | q) )^2,   (5)
    min_{theta, phi}  E_{q ~ D} E_{y ~ pi_theta(.|q)} [ L_TB ],                                             (6)
and its length-aware form (Sec. 3.3, LA-TB, PowerFlow's objective): log p(y|q) = sum_t log p(y_t | y_<t, q) is
about negatively linear in |y|, so a prompt-level scalar Z lets length dominate the match (alpha > 1 collapses
length, alpha < 1 inflates it). LA-TB reparameterises the partition function per token, Z_phi(q, y) = Z'_phi(q)^|y|,
and divides the log-mismatch by |y|:
    L_LA-TB = ( log Z'_phi(q) + (1/|y|) log pi_theta(y|q) - alpha [ (1/|y|) log p_base(y|q) + psi(y) ] )^2,
the paper's full loss (its Eq. 10) weighting it by w, a detached clipped importance ratio. Its fixed point is the
one-dimensional exponential tilt of the alpha-power target by length,
    pi*(y|q)  proportional to  p_base(y|q)^alpha exp(-lambda_q |y|),   lambda_q = log Z'(q) at convergence.
Sources (Sec. 3.3 beyond its first paragraph is not in the offline copy of the arXiv HTML): Eqs. 5-6 and Sec. 3.3's
opening from the arXiv HTML (https://arxiv.org/html/2603.18363, via its mirror layerthelatestinalattice.com); the
LA-TB loss, Z = Z'^|y| and the tilted fixed point from the first author's ICML 2026 poster (github.com/Chenruishuo/
posterly, examples/powerflow_icml2026/poster.html @ cb50661, panel 5 "Length-Aware TB", the PowerFlow loss), as
restated in a paper note (papernotes, "Loss & Training", Eq. 10). The authors' repository (Chenruishuo/PowerFlow) is
not in the offline index. Here psi = 0 (our task has no answer format to penalise) and w = 1 (every update is on
fresh on-policy samples, so the importance ratio is 1 and its clip never binds).

Trajectory Balance (Malkin et al. 2022, NeurIPS) toward the alpha-power target, learned log Z per prompt:
    traj    delta = log Z(q) + log pi(y|q) - alpha log p_base(y|q)                     (Eq. 5; target p_base^alpha)
    length  delta = log Z'(q) + [log pi(y|q) - alpha log p_base(y|q)] / n(y)            (LA-TB, above; PowerFlow)
    loss = mean delta^2.
The package's former length-aware form, delta = log Z + log pi - alpha log p_base + (alpha - 1) h(q) n(y) with h(q)
the base model's log-likelihood per token (its target p_base^alpha exp(-(alpha - 1) h n)), was not the paper's; it is
no longer trained: exact.target("rate", ...) keeps its exact target as an ablation, reported under two estimators of
h (exact.ratio_rate, exact.slope_rate). Its former ``token`` variant was LA-TB's residual under another name.
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

TB_VARIANTS = ("traj", "length")
RLIF_REWARDS = ("entropy", "self_certainty", "majority", "grpo")


def tb_residual(kind: str, log_z: torch.Tensor, log_pi: torch.Tensor, log_base: torch.Tensor, n_tokens: torch.Tensor,
                alpha: float) -> torch.Tensor:
    """delta of TB variant ``kind``, elementwise over samples (module docstring):
    traj    log Z(q) + log pi(y|q) - alpha log p_base(y|q)                        (Eq. 5's residual)
    length  log Z'(q) + (1/|y|) log pi(y|q) - alpha (1/|y|) log p_base(y|q)      (LA-TB, psi = 0; ``log_z`` is log Z')
    with log pi and log p_base summed over the |y| = ``n_tokens`` generated tokens."""
    if kind == "traj":
        return log_z + log_pi - alpha * log_base
    if kind == "length":
        return log_z + log_pi / n_tokens - alpha * (log_base / n_tokens)
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

