"""What the evaluate stage measures on one seed: extraction attacks on every canary, held-out utility, and the
sparsity of the fine-tuning shift.

Utility is the mean next-token NLL (nats per byte) on held-out windows, perplexity exp(NLL). Sparsity: at a position
with per-token terms c_v = q(v) log(q(v) / p0(v)) of KL(q || p0), the fraction of the 256 tokens that the fewest
tokens by decreasing c_v need for their running sum to reach kl_mass * KL(q || p0).
Headroom of the tightness claim: a model that is k-NAF for items of either shard satisfies p <= e^k q1 and
p <= e^k q2, so sum_v p = 1 <= e^k Z with Z = sum_v min(q1, q2): k >= -log Z binds every method. The headroom is
CP-Delta's certificate max_j sum_t Delta_max(CP-Delta || q_j), enumerated, over that lower bound summed alike.
"""

from __future__ import annotations

import torch

from .certificate import cp_delta_closed_form, max_divergence
from .combine import scp_delta_r
from .extraction import code_logprobs, digit_steps, enumeration_inputs, exposure, greedy_hit
from .models import BASE, METHODS, Models
from .records import Canary

ATTACKED = ("p0", "q1", "q2", *METHODS)


def attack_canary(models: Models, canary: Canary, keep_mass: float, chunk: int = 2000) -> dict[str, dict[str, float]]:
    """Per model: exposure (bits), exact sampled-extraction probability P(code | prompt) and the greedy hit."""
    digits = len(canary.code)
    ids = enumeration_inputs("\n" + canary.prompt, digits)
    steps: dict[str, list[tuple[torch.Tensor, torch.Tensor]]] = {m: [] for m in ATTACKED}
    for i in range(0, len(ids), chunk):
        logp = models.logprobs(ids[i:i + chunk], keep_mass, last=digits)
        for m in ATTACKED:
            steps[m].append(digit_steps(logp[m]))
    out = {}
    for m in ATTACKED:
        digit_logp, argmax = (torch.cat(parts) for parts in zip(*steps[m], strict=True))
        codes = code_logprobs(digit_logp)
        out[m] = {"exposure": exposure(codes, int(canary.code)), "p_extract": float(codes[int(canary.code)].exp()),
                  "greedy": float(greedy_hit(argmax, canary.code))}
    return out


def utility_nll(models: Models, windows: torch.Tensor, keep_mass: float) -> dict[str, float]:
    """Mean NLL of windows[:, 1:] given windows[:, :-1] under p0, q1, q2 and every method."""
    logp = models.logprobs(windows[:, :-1], keep_mass)
    target = windows[:, 1:, None]
    return {m: float(-logp[m].gather(-1, target).mean()) for m in (*BASE, *METHODS)}


def kl_carrier_fraction(logq: torch.Tensor, logp0: torch.Tensor, kl_mass: float) -> torch.Tensor:
    """Per position: (fewest tokens whose sorted terms q log(q/p0) reach kl_mass * KL(q || p0)) / vocabulary size."""
    terms = (logq.exp() * (logq - logp0)).sort(dim=-1, descending=True).values
    reached = terms.cumsum(-1) >= kl_mass * terms.sum(-1, keepdim=True)
    return (reached.float().argmax(-1) + 1).double() / logq.shape[-1]


def shift_sparsity(models: Models, windows: torch.Tensor, keep_mass: float, kl_mass: float) -> dict[str, float]:
    """Median fraction of tokens carrying kl_mass of KL(q_full || p0), and SCP-Delta_r's mean kept fraction |S| / V."""
    logp = models.logprobs(windows[:, :-1], keep_mass)
    frac = kl_carrier_fraction(logp["q_full"], logp["p0"], kl_mass)
    kept = scp_delta_r(logp["p0"], logp["q1"], logp["q2"], keep_mass)[1].double().mean(-1)
    return {"kl_carrier_fraction_median": float(frac.median()), "scp_kept_fraction_mean": float(kept.mean())}


def minimax_headroom(models: Models, windows: torch.Tensor, keep_mass: float) -> float:
    """CP-Delta's summed worst-case Delta_max certificate over the summed minimax lower bound -log Z (module
    docstring) on ``windows``: how much any method could tighten CP-Delta's bound (1 = not at all)."""
    logp = models.logprobs(windows[:, :-1], keep_mass)
    cert = torch.maximum(*(max_divergence(logp["cp_delta"], logp[q]).sum(-1) for q in ("q1", "q2")))
    return float(cert.sum() / cp_delta_closed_form(logp["q1"], logp["q2"]).sum())
