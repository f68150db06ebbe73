"""Stages ``train_polar`` / ``train_axial``: fit one denoiser variant on L-L data (diffusion.py), then design on
every held-out target and on its mirror image (design.py)."""

from __future__ import annotations

import hashlib

import numpy as np
import pyarrow as pa

from paperdag.io import read_table, save_figure, save_tensors, write_json, write_table
from paperdag.stage import StageContext

from .batches import to_arrays
from .design import design_targets
from .diffusion import cosine_alpha_bar, fit_denoiser
from .model import Denoiser
from .params import Params
from .plots import plot_loss
from .prepare import EXAMPLES_FILE

WEIGHTS_FILE = "model.safetensors"
CONFIG_FILE = "config.json"
DESIGNS_FILE = "designs.parquet"
LOSS_PLOT = "loss.png"


def train(ctx: StageContext[Params], variant: str) -> dict[str, float]:
    """model.safetensors, config.json (architecture, variant, version = hash of the weights), designs.parquet (one
    row per design) and loss.png. ``variant`` "axial" adds the reflection-sensitive axial channels."""
    p = ctx.params
    rows = read_table(ctx.input("prepare", EXAMPLES_FILE)).to_pylist()
    train_arrays = to_arrays([r for r in rows if r["split"] == "train"], p.data.pocket_max)
    config = p.denoiser.model_dump() | {"pocket_max": p.data.pocket_max, "axial": variant == "axial"}
    model = Denoiser.from_config(config).to(ctx.device)
    losses = fit_denoiser(model, train_arrays, cosine_alpha_bar(p.denoiser.diffusion_steps), p.denoiser.coord_scale,
                          p.training, ctx.rng, ctx.device, ctx.log_metric,
                          lambda steps: ctx.progress(steps, desc="denoiser"))
    save_tensors(ctx.output(WEIGHTS_FILE), model.state_dict())
    version = f"pepmirror-{variant}-{hashlib.sha256(ctx.output(WEIGHTS_FILE).read_bytes()).hexdigest()[:12]}"
    write_json(ctx.output(CONFIG_FILE), config | {"version": version})
    targets = [r for r in rows if r["split"] == "target"]
    designs = design_targets(model.eval(), targets, p.denoiser, p.design, p.data.pocket_max, p.seed, ctx.device,
                             version)
    write_table(ctx.output(DESIGNS_FILE), pa.Table.from_pylist(designs))
    save_figure(plot_loss(losses, f"{variant} denoiser: training loss"), ctx.output(LOSS_PLOT))
    return {"final_loss": float(np.mean(losses[-50:])), "n_designs": len(designs)}
