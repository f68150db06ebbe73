"""Stage ``train_<method>_<dataset>``: train one generator (flows.SPECS[method]) for each of the dataset's training
budgets, all seeds at once (training.train_flow: one seed-batched network, each seed's own math), on its training
data (the photo crops in pixel space, or the autoencoder's scaled codes of them for ``latent``: autoencoder.py) and
sample it with every step count from the shared evaluation noise (flows.eval_noise); latent samples are decoded
x = D(s z); samples are stored as 8-bit images, as any image generator's output would be. Each budget is its own
run (the cosine schedule spans it), from the same initialisation per seed."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from paperdag.io import load_tensors, save_tensors
from paperdag.stage import StageContext

from .autoencoder import AE_FILE, CODES_FILE, build
from .data import load_split, to_model_space
from .flows import SPECS, eval_noise, from_noise, sample
from .networks import ConvAutoencoder, VelocityMLP
from .params import Params
from .prepare import DATA_FILE
from .training import train_flow

WEIGHTS_FILE = "weights.safetensors"
SAMPLES_FILE = "samples.safetensors"


def to_uint8(x: torch.Tensor) -> torch.Tensor:
    """Quantise x in [-1, 1] to grey levels round(255 clip((x + 1) / 2, 0, 1))."""
    return torch.round(255 * ((x + 1) / 2).clamp(0, 1)).to(torch.uint8)


LATENT = "latent"  # the generator dataset of the autoencoder's codes


def load_autoencoder(ctx: StageContext[Params], device: str | torch.device = "cpu") -> tuple[ConvAutoencoder,
                                                                                           torch.Tensor, float]:
    """(the trained autoencoder in eval mode, the scaled training codes z / s [n, k], the scale s) from
    train_autoencoder's outputs (read by the latent flows and evaluate)."""
    net = build(ctx.params).to(device)
    net.load_state_dict(load_tensors(ctx.input("train_autoencoder", AE_FILE)))
    codes = load_tensors(ctx.input("train_autoencoder", CODES_FILE))
    return net.eval(), codes["train"].to(device), float(codes["scale"])


def training_data(ctx: StageContext[Params],
                  dataset: str) -> tuple[torch.Tensor, Callable[[torch.Tensor], torch.Tensor]]:
    """(the generator's training rows on ctx.device, the map from its samples to images in [-1, 1]): the photo crops
    and the identity, or the scaled codes z and the decoder z -> D(s z)."""
    if dataset != LATENT:
        return torch.as_tensor(to_model_space(load_split(ctx.input("prepare", DATA_FILE), dataset, "train")[0]),
                               device=ctx.device), lambda x: x
    net, codes, scale = load_autoencoder(ctx, ctx.device)
    return codes, lambda z: net.decode(scale * z)


def train(ctx: StageContext[Params], method: str, dataset: str) -> dict[str, float]:
    """weights.safetensors (one state dict per budget and seed) and samples.safetensors
    ({"samples": uint8 [budget, seed, steps, n, d]}: images, decoded for the latent flows)."""
    p, spec, seed = ctx.params.flow, SPECS[method], ctx.params.seed
    data, to_image = training_data(ctx, dataset)
    radius = float(data.norm(dim=1).mean())
    x0 = from_noise(eval_noise(p.n_samples, data.shape[1], seed).to(ctx.device), spec, radius)
    weights, samples, final = {}, [], []
    for budget in p.budgets[dataset]:
        nets = []
        for s in range(p.n_seeds):
            torch.manual_seed(seed * 1000 + s)  # the same initialisation for every method and budget
            nets.append(VelocityMLP(data.shape[1], p.hidden, p.depth, p.time_dim).to(ctx.device))
        gens = [torch.Generator(ctx.device).manual_seed(seed * 1000 + s) for s in range(p.n_seeds)]
        states, losses = train_flow(nets, data, spec, radius, budget, p.batch, p.lr, gens,
                                    lambda k, budget=budget: ctx.report(f"budget{budget} step", k + 1, budget))
        every = max(1, budget // 50)
        for s, (net, state) in enumerate(zip(nets, states, strict=True)):
            run = f"budget{budget}.seed{s}"
            for k in range(0, budget, every):
                ctx.log_metric("fm_loss", float(losses[k: k + every, s].mean()), k, run=run)
            final.append(float(losses[-max(1, budget // 10):, s].mean()))
            weights |= {f"{run}.{k}": v for k, v in state.items()}
            net.load_state_dict(state)
        with torch.no_grad():
            samples.append([torch.stack([to_uint8(to_image(sample(net.eval(), x0, n, spec, radius))).cpu()
                                         for n in p.sample_steps]) for net in nets])
    save_tensors(ctx.output(WEIGHTS_FILE), weights, metadata={"method": method, "dataset": dataset,
                                                                     "radius": repr(radius)})
    save_tensors(ctx.output(SAMPLES_FILE), {"samples": torch.stack([torch.stack(by) for by in samples])})
    return {"final_loss_mean": float(np.mean(final[-p.n_seeds:])), "radius": radius}
