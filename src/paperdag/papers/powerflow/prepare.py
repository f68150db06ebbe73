"""Stage ``prepare``: the per-prompt mixture weights of D and the base model's pretraining pairs, with provenance."""

from __future__ import annotations

import hashlib

from paperdag.io import write_json
from paperdag.stage import StageContext

from .data import write_pairs, write_prompts
from .params import Params
from .task import Task, draw_weights

DATA_FILE = "data.parquet"
PROMPTS_FILE = "prompts.parquet"


def prepare(ctx: StageContext[Params], variant: str = "chain") -> dict[str, float]:
    """prompts.parquet (weights w_q ~ Dirichlet), data.parquet (n_train pairs from D, or D_len for the ``lengths``
    variant) and provenance.json."""
    p = ctx.params.task
    task = Task(p.modulus, p.max_len, p.guess_bias, draw_weights(ctx.rng, p.modulus**2, p.mix, p.concentration),
                variant)
    write_prompts(ctx.output(PROMPTS_FILE), task)
    write_pairs(ctx.output(DATA_FILE), ctx.rng, task, p.n_train)
    write_json(ctx.output("provenance.json"), {
        "source": "procedural (no download): numpy PCG64 seeded from (seed, stage)",
        "task": "q = (a, b) in Z_K^2, answer (a + b) mod K, responses of <= L digits then EOS",
        "distribution": "D(y|q) = w_chain [a,b,c]|[b,a,c] + w_guess [g] + w_noise Uniform(length, digits)"
                        if variant == "chain" else "D_len(y|q) = (1/L) K^-(k-1) A_q(answer): k ~ U{1..L}, uniform "
                        "work digits, answer c | guess | uniform with weights w_q",
        "seed": ctx.params.seed,
        "sha256": {name: hashlib.sha256(ctx.output(name).read_bytes()).hexdigest() for name in (DATA_FILE, PROMPTS_FILE)},
    })
    return {"pairs": float(p.n_train), "prompts": float(len(task.prompts))}
