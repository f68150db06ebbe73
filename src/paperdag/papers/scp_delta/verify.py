"""Stage ``verify``: exact per-sequence NAF certificates (token-level Delta_max and KL summed over each sequence) of
q_full, CP-Delta, CP-k and SCP-Delta_r on canary lines and on generic prompts, for every seed."""

from __future__ import annotations

import numpy as np
import torch

from paperdag.common.corpus import load_split_tokens
from paperdag.common.tokenizer import encode
from paperdag.io import write_table
from paperdag.stage import StageContext

from .certify import closed_form_error, sequence_certificates
from .lm import model_config
from .models import Models
from .params import Params
from .prepare import CANARY_FILE, CORPUS_FILE, PRIVATE_FILE
from .records import read_canaries, shard_tokens
from .train import P0_FILE, WEIGHTS_DIR, eval_windows

CERTIFICATE_FILE = "certificates.parquet"
SAFE = {"1": 2, "2": 1, "both": None}


def seed_models(ctx: StageContext[Params], s: int) -> Models:
    """p0, q1, q2, q_full of seed s."""
    paths = {"p0": ctx.input("train_p0", P0_FILE)}
    paths |= {m: ctx.input(f"train_{m}", f"{WEIGHTS_DIR}/seed{s}.safetensors") for m in ("q1", "q2", "q_full")}
    return Models.load(model_config(ctx.params.model), paths, ctx.device)


def verify(ctx: StageContext[Params]) -> dict[str, float]:
    """certificates.parquet (seed, kind, row, method, dmax, kl, dmax_token_max, dmax_base, kl_base); returns the
    closed-form check."""
    p, n, length = ctx.params, ctx.params.certify.n_generic, ctx.params.certify.generic_len
    stdlib = eval_windows(load_split_tokens(ctx.input("prepare", CORPUS_FILE), "val"), length, p.seed)[:n]
    table: dict[str, list] = {}
    worst = 0.0
    for s in ctx.progress(range(p.n_seeds), desc="seeds"):
        models = seed_models(ctx, s)
        canaries = read_canaries(ctx.input("prepare", CANARY_FILE), s)
        held = eval_windows(shard_tokens(ctx.input("prepare", PRIVATE_FILE), s, ("heldout",)), length, p.seed + s)
        lines = torch.as_tensor(np.stack([encode("\n" + c.line) for c in canaries]), dtype=torch.long)
        groups = {"canary": (lines, [SAFE[c.where] for c in canaries]), "stdlib": (stdlib, [None] * n),
                  "records": (held[:n], [None] * n)}
        for kind, (ids, safe) in groups.items():
            logp = models.logprobs(ids[:, :-1], p.keep_mass)
            worst = max(worst, closed_form_error(logp, p.keep_mass))
            rows = sequence_certificates(logp, safe)
            kinds = [kind if kind != "canary" else ("dup" if canaries[r].where == "both" else "single")
                     for r in rows["row"]]
            for key, col in ({"seed": [s] * len(kinds), "kind": kinds} | rows).items():
                table.setdefault(key, []).extend(col)
    write_table(ctx.output(CERTIFICATE_FILE), table)
    return {"closed_form_max_abs_err": worst, "sequences": float(len(table["row"]))}
