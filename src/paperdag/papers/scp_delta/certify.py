"""The sequence-level NAF certificate of one canary prompt, computed by the verify stage and redone, row by row, by
``paperdag verify scp_delta`` (reverify.py): one code path, so the re-check is as strict as the computation.

For prompt x, every certified model p (q_full, CP-Delta, CP-k, and SCP-Delta_r at every keep_mass of the run) and
every safe model q in (q1, q2, p0) the row stores k_x(p || q) over the 10^D codes and "other" (certificate.py), an
outcome attaining it, and the minimax bound K*_x of the prompt. The item's own safe model is the shard model that
never saw it (q2 for a shard-1 canary); the NAF k of the model at x is the larger of the two shard rows, since items
of either shard may be asked for; p0 saw no private item and is an admissible safe model for every canary.
"""

from __future__ import annotations

import math

import torch

from paperdag.common.tokenizer import encode

from .certificate import log_ratio, minimax_bound
from .combine import cp_delta, cp_k, scp_sweep
from .extraction import digit_suffixes, outcome_logprobs
from .models import Models

FIXED = ("q_full", "cp_delta", "cp_k")  # certified models without a keep_mass
SCP = "scp_delta_r"
SAFE = ("q1", "q2", "p0")
COLUMNS = ("method", "keep_mass", "safe", "k", "witness", "minimax")
CERTIFICATE_FILE = "certificates.parquet"  # the verify folder: the rows, the model shape, the weights
META_FILE = "certificate.json"
MODELS_DIR = "models"


def canary_steps(models: Models, prompt: str, digits: int) -> dict[str, torch.Tensor]:
    """Next-token log-probabilities (10^(D-1), D, 256) of p0, q1, q2 and q_full after the prompt and every digit
    prefix (extraction.digit_suffixes)."""
    return models.continuations(torch.as_tensor(encode(prompt), dtype=torch.long), digit_suffixes(digits))


def certified(steps: dict[str, torch.Tensor], keep_masses: list[float]) -> dict[tuple[str, float], torch.Tensor]:
    """(method, keep_mass) -> outcome log-probs of every certified model; keep_mass is nan for the fixed methods."""
    q1, q2 = steps["q1"], steps["q2"]
    fixed = {"q_full": steps["q_full"], "cp_delta": cp_delta(q1, q2), "cp_k": cp_k(q1, q2)}
    out = {(m, math.nan): outcome_logprobs(fixed[m]) for m in FIXED}
    sweep = scp_sweep(steps["p0"], steps["q1"], steps["q2"], keep_masses)
    for km, (logp, _) in zip(keep_masses, sweep, strict=True):
        out[(SCP, km)] = outcome_logprobs(logp)
    return out


def log_ratios(models: Models, prompt: str, digits: int,
               keep_masses: list[float]) -> tuple[dict[tuple[str, float, str], torch.Tensor], float]:
    """((method, keep_mass, safe) -> log P(o) / Q(o) over the outcomes, the minimax bound K*_x) of one prompt."""
    steps = canary_steps(models, prompt, digits)
    safe = {q: outcome_logprobs(steps[q]) for q in SAFE}
    ratios = {(method, km, q): log_ratio(logp, safe[q]) for (method, km), logp in certified(steps, keep_masses).items()
              for q in SAFE}
    return ratios, minimax_bound(safe["q1"], safe["q2"])


def canary_certificates(models: Models, prompt: str, digits: int, keep_masses: list[float]) -> dict[str, list]:
    """Rows (COLUMNS) of the certificate of one prompt: every certified model against every safe model, k_x the
    largest log-ratio and the witness the first outcome attaining it."""
    ratios, bound = log_ratios(models, prompt, digits, keep_masses)
    rows: dict[str, list] = {c: [] for c in COLUMNS}
    for (method, km, q), diff in ratios.items():
        witness = int(diff.argmax())
        for c, v in zip(COLUMNS, (method, km, q, float(diff[witness]), witness, bound), strict=True):
            rows[c].append(v)
    return rows
