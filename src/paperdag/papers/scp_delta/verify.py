"""Stage ``verify``: the exact sequence-level NAF certificate of every canary prompt of every seed (certify.py),
stored with the weights it was computed from, so ``paperdag verify scp_delta`` redoes it from this folder alone."""

from __future__ import annotations

import shutil

from paperdag.io import write_json, write_table
from paperdag.stage import StageContext

from .certify import CERTIFICATE_FILE, META_FILE, MODELS_DIR, canary_certificates
from .lm import model_config
from .models import Models
from .params import Params
from .prepare import CANARY_FILE
from .records import read_canaries
from .train import P0_FILE, WEIGHTS_DIR


def weight_paths(ctx: StageContext[Params], s: int) -> dict[str, object]:
    """The trained weights of seed s: p0 and the seed's q1, q2, q_full."""
    paths = {"p0": ctx.input("train_p0", P0_FILE)}
    return paths | {m: ctx.input(f"train_{m}", f"{WEIGHTS_DIR}/seed{s}.safetensors") for m in ("q1", "q2", "q_full")}


def seed_models(ctx: StageContext[Params], s: int) -> Models:
    """p0, q1, q2, q_full of seed s (float64)."""
    return Models.load(model_config(ctx.params.model), weight_paths(ctx, s), ctx.device)


def certified_keep_masses(p: Params) -> list[float]:
    """SCP-Delta_r's keep_mass and every keep_mass of the sparsity sweep, ascending."""
    return sorted({p.keep_mass, *p.sparsity_grid})


def verify(ctx: StageContext[Params]) -> dict[str, float]:
    """certificates.parquet (seed, canary, where, prompt, then certify.COLUMNS), certificate.json (model shape,
    code digits) and models/ (p0.safetensors, seed<s>/{q1,q2,q_full}.safetensors)."""
    p = ctx.params
    table: dict[str, list] = {}
    for s in ctx.progress(range(p.n_seeds), desc="seeds"):
        for name, path in weight_paths(ctx, s).items():
            target = ctx.output(MODELS_DIR) / (f"{name}.safetensors" if name == "p0" else f"seed{s}/{name}.safetensors")
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
        models = seed_models(ctx, s)
        for c in read_canaries(ctx.input("prepare", CANARY_FILE), s):
            rows = canary_certificates(models, "\n" + c.prompt, p.records.code_digits, certified_keep_masses(p))
            n = len(rows["k"])
            for key, col in ({"seed": [s] * n, "canary": [c.name] * n, "where": [c.where] * n,
                              "prompt": ["\n" + c.prompt] * n} | rows).items():
                table.setdefault(key, []).extend(col)
    write_table(ctx.output(CERTIFICATE_FILE), table)
    write_json(ctx.output(META_FILE), {"model": p.model.model_dump(), "code_digits": p.records.code_digits})
    return {"rows": float(len(table["k"])), "prompts": float(len(set(zip(table["seed"], table["canary"]))))}
