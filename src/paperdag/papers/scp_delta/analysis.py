"""What the evaluate stage measures on one seed: extraction attacks on every canary, held-out utility along the
sparsity sweep, and the token-level checks (closed forms, the minimax bound).

Utility is the mean next-token NLL (nats per byte) on windows of held-out records, perplexity exp(NLL). SCP-Delta_r's kept
fraction at a position is |S| / V (combine.influential_set).
Token-level minimax: a model k-NAF for items of either shard satisfies p <= e^k q1 and p <= e^k q2, so
1 = sum_v p <= e^k Z with Z = sum_v min(q1, q2): max_j Delta_max(p || q_j) >= -log Z for every p, with equality for
CP-Delta (certificate.cp_delta_closed_form). No method can be tighter than CP-Delta there.
"""

from __future__ import annotations

import torch

from .certificate import (
    cp_delta_closed_form,
    cp_k_closed_form,
    max_divergence,
    scp_closed_form,
    token_certificates,
)
from .certify import canary_steps
from .combine import scp_delta_r, scp_sweep
from .extraction import code_logprobs, digit_steps, exposure, greedy_hit
from .models import BASE, METHODS, Models, with_methods
from .records import Canary

ATTACKED = ("p0", "q1", "q2", *METHODS)


def attack_canary(models: Models, canary: Canary, keep_mass: float) -> dict[str, dict[str, float]]:
    """Per model: exposure (bits), exact sampled-extraction probability P(code | prompt) and the greedy hit."""
    steps = with_methods(canary_steps(models, "\n" + canary.prompt, len(canary.code)), keep_mass)
    out = {}
    for m in ATTACKED:
        digit_logp, argmax = digit_steps(steps[m])
        codes = code_logprobs(digit_logp)
        out[m] = {"exposure": exposure(codes, int(canary.code)), "p_extract": float(codes[int(canary.code)].exp()),
                  "greedy": float(greedy_hit(argmax, canary.code))}
    return out


def sweep_utility(models: Models, windows: torch.Tensor, keep_mass: float,
                  grid: list[float]) -> tuple[dict[str, float], dict[float, tuple[float, float]]]:
    """({model: mean NLL} for p0, q1, q2 and every method; {keep_mass: (SCP-Delta_r's NLL, mean kept fraction)}
    along the sweep) on windows[:, 1:] given windows[:, :-1]."""
    trained = models.trained(windows[:, :-1])
    logp = with_methods(trained, keep_mass)
    target = windows[:, 1:, None]
    nll = {m: float(-logp[m].gather(-1, target).mean()) for m in (*BASE, *METHODS)}
    sweep = {}
    for km, (scp, keep) in zip(grid, scp_sweep(trained["p0"], trained["q1"], trained["q2"], grid), strict=True):
        sweep[km] = (float(-scp.gather(-1, target).mean()), float(keep.double().mean()))
    return nll, sweep


def token_checks(models: Models, windows: torch.Tensor, keep_mass: float) -> dict[str, float]:
    """On every position of windows: the largest gap between an enumerated certificate and its closed form
    (``closed_form_err``), between CP-Delta's max_j Delta_max and -log Z (``cp_minimax_gap``), the smallest margin of
    any method above -log Z (``min_above_minimax``, >= 0 by the minimax argument) and SCP-Delta_r's summed
    certificate over the summed bound (``scp_over_minimax``)."""
    logp = models.logprobs(windows[:, :-1], keep_mass)
    q1, q2, p0 = logp["q1"], logp["q2"], logp["p0"]
    bound = cp_delta_closed_form(q1, q2)
    worst = {m: torch.maximum(max_divergence(logp[m], q1), max_divergence(logp[m], q2)) for m in METHODS}
    keep = scp_delta_r(p0, q1, q2, keep_mass)[1]
    errs = [(worst["cp_delta"] - bound).abs().max()]
    for j in (1, 2):
        errs.append((token_certificates(logp["scp_delta_r"], q1, q2)[f"dmax_{j}"]
                     - scp_closed_form(p0, q1, q2, keep, j)).abs().max())
    kl = token_certificates(logp["cp_k"], q1, q2)
    errs.append((kl["kl_1"] + kl["kl_2"] - cp_k_closed_form(q1, q2)).abs().max())
    return {"closed_form_err": float(max(errs)), "cp_minimax_gap": float(errs[0]),
            "min_above_minimax": float(min((w - bound).min() for w in worst.values())),
            "scp_over_minimax": float(worst["scp_delta_r"].sum() / bound.sum())}
