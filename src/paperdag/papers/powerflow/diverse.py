"""Stages of the ``diverse`` task variant (diversity.py: several correct responses per prompt): prepare_diverse,
train_base_diverse and finetune_<method>_diverse (alpha < 1 trajectory-level TB and GRPO)."""

from __future__ import annotations

import dataclasses
import hashlib
import zlib

import numpy as np
import torch

from paperdag.io import load_tensors, save_tensors, write_json, write_table
from paperdag.stage import StageContext

from . import exact
from .data import load_task, write_prompts
from .diversity import data_log_probs, point, sample_response
from .loops import Method
from .loops import finetune as run
from .params import DiverseParams, Params
from .pretrain import fit_base
from .policy import build_model
from .task import Task, all_responses, draw_weights

VARIANT = "diverse"
DATA_FILE, PROMPTS_FILE = "data.parquet", "prompts.parquet"
BASE_FILE, WEIGHTS_FILE, FINAL_FILE = "base.safetensors", "weights.safetensors", "final.parquet"


def variant_rng(seed: int, stage: str) -> np.random.Generator:
    """The numpy generator of one of the variant's stages, seeded from (diverse.seed, stage) as the platform seeds
    ctx.rng from (seed, stage): the variant draws from its own root, so its weights, pairs and base model are
    draws that the root seed's runs never saw."""
    return np.random.default_rng([seed, zlib.crc32(stage.encode())])


def seed_torch(seed: int, stage: str) -> None:
    """Seed torch's global RNG (a model's initialisation) from (diverse.seed, stage), as the platform does from
    (seed, stage)."""
    torch.manual_seed(seed * 1_000_003 + zlib.crc32(stage.encode()))


def design_task(d: DiverseParams, rng: np.random.Generator) -> Task:
    """The variant's Task: K, L, beta of ``d`` and per-prompt weights w_q ~ Dirichlet(concentration * mix)."""
    return Task(d.modulus, d.max_len, d.guess_bias, draw_weights(rng, d.modulus**2, d.mix, d.concentration), VARIANT)


def variant_task(ctx: StageContext[Params]) -> Task:
    """The diverse variant's Task (prompts.parquet of prepare_diverse)."""
    d = ctx.params.diverse
    return load_task(ctx.input("prepare_diverse", PROMPTS_FILE), d.modulus, d.max_len, d.guess_bias, VARIANT)


def prepare(ctx: StageContext[Params]) -> dict[str, float]:
    """prompts.parquet (w_q ~ Dirichlet), data.parquet (n_train pairs from D_div) and provenance.json."""
    d = ctx.params.diverse
    rng = variant_rng(d.seed, "prepare_diverse")
    task = design_task(d, rng)
    write_prompts(ctx.output(PROMPTS_FILE), task)
    qs = rng.integers(len(task.prompts), size=d.n_train)
    prompts = task.prompts[torch.as_tensor(qs)].numpy()
    write_table(ctx.output(DATA_FILE), {"q": qs, "a": prompts[:, 0], "b": prompts[:, 1],
                                        "response": [sample_response(rng, task, int(q)) for q in qs]})
    write_json(ctx.output("provenance.json"), {
        "source": "procedural (no download): numpy PCG64 seeded from (diverse.seed, stage)",
        "distribution": "D_div(y|q) = w_chain Uniform(T_q) + w_guess [g] + w_noise Uniform(length, digits), "
                        "T_q = {[c], [a,c], [b,c], [a,b,c], [b,a,c]} (distinct)",
        "seed": ctx.params.diverse.seed,
        "sha256": {n: hashlib.sha256(ctx.output(n).read_bytes()).hexdigest() for n in (DATA_FILE, PROMPTS_FILE)},
    })
    return {"pairs": float(d.n_train), "prompts": float(len(task.prompts))}


def pretrain(ctx: StageContext[Params]) -> dict[str, float]:
    """base.safetensors: pretrain.fit_base on D_div's pairs (the chain base model's settings, its initialisation and
    batch order drawn from diverse.seed); returns exact KL(D_div || base) and the base model's quality and
    diversity."""
    task = variant_task(ctx)
    seed_torch(ctx.params.diverse.seed, "train_base_diverse")  # the initialisation, from diverse.seed
    own = dataclasses.replace(ctx, params=ctx.params.model_copy(update={"seed": ctx.params.diverse.seed}))
    log_d, log_base = fit_base(own, task, "prepare_diverse", data_log_probs)  # batch order from diverse.seed
    kl = float((log_d.exp() * (log_d - log_base)).sum(1).mean())
    return {"kl_data_base": kl} | {f"{k}_base": v for k, v in point(log_base, task).items()}


def load_base(ctx: StageContext[Params], task: Task) -> torch.nn.Module:
    """The diverse variant's base model."""
    m = ctx.params.model
    model = build_model(task, m.d_model, m.n_layer, m.n_head).to(ctx.device)
    model.load_state_dict(load_tensors(ctx.input("train_base_diverse", BASE_FILE), ctx.device))
    return model


def finetune(ctx: StageContext[Params], objective: str) -> dict[str, float]:
    """final.parquet: finetune.seeds runs of ``objective`` (``grpo``, or ``traj``: trajectory-level TB toward the
    exact alpha-power target p_base^alpha at alpha = alpha.flatten) from the diverse base model (loops.finetune,
    the chain runs' settings), each seed's exact quality, diversity, accuracy, entropy, length and (TB) KL to the
    target; weights.safetensors (each seed's policy)."""
    p, f, task = ctx.params, ctx.params.finetune, variant_task(ctx)
    base = load_base(ctx, task)
    log_base, n_tokens = exact.log_probs(base, task), (all_responses(task)[1] + 1).double()
    alpha = p.alpha.flatten if objective == "traj" else 1.0
    target = exact.target("traj", log_base, n_tokens, alpha) if objective == "traj" else None
    rows, tensors = [], {}
    for seed in range(f.seeds):
        gen = torch.Generator().manual_seed(p.diverse.seed * 10_007 + 7_919 + seed)

        def log(step: int, model: torch.nn.Module, log_z: torch.Tensor, loss: float) -> None:
            ctx.report(f"seed {seed}", step, f.steps)

        model = run(base, log_base, task, Method(objective, alpha), f.steps, f.group, f.lr, f.lr_log_z, f.clip,
                    gen, log)
        log_pi = exact.log_probs(model, task)
        row = {"seed": seed, **point(log_pi, task)}
        row["kl"] = exact.metrics(log_pi, task, target)["kl"] if target is not None else float("nan")
        rows.append(row)
        tensors |= {f"seed{seed}.{k}": v for k, v in model.state_dict().items()}
    save_tensors(ctx.output(WEIGHTS_FILE), tensors, metadata={"objective": objective, "alpha": str(alpha)})
    write_table(ctx.output(FINAL_FILE), {k: [r[k] for r in rows] for k in rows[0]})
    return {k: float(np.mean([r[k] for r in rows])) for k in ("quality", "diversity")}
