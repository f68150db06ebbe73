"""Stages ``train_polar`` / ``train_axial``: for each training seed, fit one denoiser of the variant on L-L data
(diffusion.py), then design on every held-out target and on its mirror image (design.py).

Seed s of either variant draws its initialisation (torch's generator), minibatches (numpy) and DDPM-loss noise from
SeedSequence([seed, s]) alone, and its design noise from (seed, s, target): the two variants of a seed share them,
so their designs pair by (seed, target, sample)."""

from __future__ import annotations

import hashlib

import numpy as np
import pyarrow as pa
import torch

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


def seed_streams(seed: int, train_seed: int, device: str) -> tuple[np.random.Generator, torch.Generator]:
    """The minibatch and loss-noise generators of one training seed; seeds torch's global generator (the network's
    initialisation) from the same SeedSequence."""
    state = np.random.SeedSequence([seed, train_seed]).generate_state(3)
    torch.manual_seed(int(state[0]))
    return np.random.default_rng(int(state[1])), torch.Generator(device=device).manual_seed(int(state[2]))


def train(ctx: StageContext[Params], variant: str) -> dict[str, float]:
    """model.safetensors (every seed's weights, keys prefixed ``seed<s>.``), config.json (architecture, variant,
    seeds, version of each seed's network = hash of its weights), designs.parquet (one row per design, with its
    train_seed) and loss.png. ``variant`` "axial" adds the reflection-sensitive axial channels."""
    p = ctx.params
    rows = read_table(ctx.input("prepare", EXAMPLES_FILE)).to_pylist()
    train_arrays = to_arrays([r for r in rows if r["split"] == "train"], p.data.pocket_max)
    targets = [r for r in rows if r["split"] == "target"]
    config = p.denoiser.model_dump() | {"pocket_max": p.data.pocket_max, "axial": variant == "axial"}
    weights, versions, losses, designs = {}, {}, {}, []
    for s in p.training.seeds:
        rng, generator = seed_streams(p.seed, s, ctx.device)
        model = Denoiser.from_config(config).to(ctx.device)
        losses[s] = fit_denoiser(model, train_arrays, cosine_alpha_bar(p.denoiser.diffusion_steps),
                                 p.denoiser.coord_scale, p.training, rng, ctx.device,
                                 lambda name, value, step, s=s: ctx.log_metric(name, value, step, run=f"seed{s}"),
                                 lambda steps, s=s: ctx.progress(steps, desc=f"denoiser seed {s}"), generator)
        state = {k: v.detach().cpu().contiguous() for k, v in model.state_dict().items()}
        digest = hashlib.sha256(b"".join(v.numpy().tobytes() for _, v in sorted(state.items()))).hexdigest()[:12]
        versions[s] = f"pepmirror-{variant}-s{s}-{digest}"
        weights |= {f"seed{s}.{k}": v for k, v in state.items()}
        designs += design_targets(model.eval(), targets, p.denoiser, p.design, p.data.pocket_max, p.seed, s,
                                  ctx.device, versions[s])
    save_tensors(ctx.output(WEIGHTS_FILE), weights)
    write_json(ctx.output(CONFIG_FILE), config | {"seeds": list(p.training.seeds),
                                                  "versions": {str(s): v for s, v in versions.items()}})
    write_table(ctx.output(DESIGNS_FILE), pa.Table.from_pylist(designs))
    save_figure(plot_loss(losses, f"{variant} denoiser: training loss per seed"), ctx.output(LOSS_PLOT))
    return {"final_loss": float(np.mean([np.mean(v[-50:]) for v in losses.values()])), "n_designs": len(designs)}


def seed_weights(weights: dict[str, torch.Tensor], train_seed: int) -> dict[str, torch.Tensor]:
    """One seed's state dict out of model.safetensors."""
    prefix = f"seed{train_seed}."
    return {k[len(prefix):]: v for k, v in weights.items() if k.startswith(prefix)}
