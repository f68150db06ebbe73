"""Per-sequence NAF certificates of every compared model, and the check of the enumeration against closed forms.

For protected item C in shard i only, the safe model is q_j (j != i) and a sequence's certificate is
k_seq = sum_t Delta(p(. | x_{<t}) || q_j(. | x_{<t})). A duplicated canary has no safe shard model (both saw it) and
a generic prompt protects no particular item, so both get the worst case max_j sum_t Delta(p || q_j).
The nearest form of the tightness claim that can hold (claims.py) takes the base model p0 as the safe model: it
never saw any private item, so safe(C) = p0 is admissible for every C; its columns are ``dmax_base, kl_base``.
"""

from __future__ import annotations

import torch

from .certificate import (cp_delta_closed_form, cp_k_closed_form, kl_divergence, max_divergence, scp_closed_form,
                          token_certificates)
from .combine import scp_delta_r
from .models import METHODS


def sequence_certificates(logp: dict[str, torch.Tensor], safe: list[int | None]) -> dict[str, list[float]]:
    """Columns method, dmax, kl, dmax_token_max, dmax_base, kl_base (one row per method and sequence) for sequences
    with safe shard model ``safe[b]`` (None: the worst case over both)."""
    rows: dict[str, list] = {k: [] for k in ("row", "method", "dmax", "kl", "dmax_token_max", "dmax_base", "kl_base")}
    for method in METHODS:
        cert = token_certificates(logp[method], logp["q1"], logp["q2"])
        base = (max_divergence(logp[method], logp["p0"]).sum(-1), kl_divergence(logp[method], logp["p0"]).sum(-1))
        for b, j in enumerate(safe):
            arms = (1, 2) if j is None else (j,)
            rows["row"].append(b)
            rows["method"].append(method)
            rows["dmax"].append(max(float(cert[f"dmax_{a}"][b].sum()) for a in arms))
            rows["kl"].append(max(float(cert[f"kl_{a}"][b].sum()) for a in arms))
            rows["dmax_token_max"].append(max(float(cert[f"dmax_{a}"][b].max()) for a in arms))
            rows["dmax_base"].append(float(base[0][b]))
            rows["kl_base"].append(float(base[1][b]))
    return rows


def closed_form_error(logp: dict[str, torch.Tensor], keep_mass: float) -> float:
    """max |enumerated certificate - closed form| over positions, shard models and the three protected models."""
    q1, q2, p0 = logp["q1"], logp["q2"], logp["p0"]
    keep = scp_delta_r(p0, q1, q2, keep_mass)[1]
    errs = []
    for j in (1, 2):
        cert = {m: token_certificates(logp[m], q1, q2) for m in ("cp_delta", "cp_k", "scp_delta_r")}
        errs.append((cert["cp_delta"][f"dmax_{j}"] - cp_delta_closed_form(q1, q2)).abs().max())
        errs.append((cert["scp_delta_r"][f"dmax_{j}"] - scp_closed_form(p0, q1, q2, keep, j)).abs().max())
    kl_sum = token_certificates(logp["cp_k"], q1, q2)
    errs.append((kl_sum["kl_1"] + kl_sum["kl_2"] - cp_k_closed_form(q1, q2)).abs().max())
    return float(max(errs))
