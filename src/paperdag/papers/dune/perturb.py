"""Stage ``perturb_<scheme>``: the perturbed training set of one scheme (DUNE, its two branches, a baseline)."""

from __future__ import annotations

import torch

from paperdag.io import load_tensors, save_tensors
from paperdag.stage import StageContext

from .baselines import (
    adversarial_poison,
    error_minimising_noise,
    one_pixel_shortcut,
    ops_pixels,
    random_noise,
    synthetic_noise,
)
from .colour import apply_offsets, colour_offsets
from .labels import shift_labels
from .network import ConvNet, load_ensemble
from .params import Params
from .prepare import DATA_FILE
from .spatial import spatial_noise
from .surrogate import CLASSES, ENSEMBLE_FILE

PERTURBED_FILE = "perturbed.safetensors"


def perturb(ctx: StageContext[Params], scheme: str) -> dict[str, float]:
    """perturbed.safetensors: "x" (perturbed training images), plus "x_colour" / "offsets" for the colour part."""
    p, b = ctx.params, ctx.params.budget
    data = load_tensors(ctx.input("prepare", DATA_FILE), ctx.device)
    x, y = data["x_train"], data["y_train"]
    gen = torch.Generator().manual_seed(int(ctx.rng.integers(2**31)))
    out, summary = {}, {}
    if scheme in ("spatial", "colour", "adv_poison"):
        models = load_ensemble(load_tensors(ctx.input("train_surrogate", ENSEMBLE_FILE), ctx.device), x.shape[-1],
                               p.net.width, CLASSES)
        targets = shift_labels(y, p.dune.shift, CLASSES)
    if scheme == "random":
        out["x"] = random_noise(x, b.eps, gen)
    elif scheme == "synthetic":
        out["x"] = synthetic_noise(x, y, CLASSES, b.eps, p.baselines.synthetic_patch, p.baselines.synthetic_spread, gen)
    elif scheme == "ops":
        out["x"] = one_pixel_shortcut(x, y, *ops_pixels(x, y, CLASSES))
    elif scheme == "adv_poison":  # one clean-trained model: the last checkpoint of the surrogate run
        out["x"] = adversarial_poison(models[-1], x, y, CLASSES, b.eps, p.dune.pgd_steps, 500, gen)
    elif scheme == "em":
        q = p.baselines
        model = ConvNet(3, x.shape[-1], p.net.width, CLASSES).to(ctx.device)
        out["x"], rounds = error_minimising_noise(model, x, y, b.eps, q.em_rounds, q.em_train_steps, q.em_pgd_steps,
                                                  p.net.batch, p.net.lr, q.em_stop_acc, gen)
        summary["em_rounds"] = float(rounds)
    elif scheme == "spatial":
        out["x"] = spatial_noise(models, x, targets, b.eps, p.dune.pgd_steps, 500, gen)
    elif scheme == "colour":
        d = p.dune
        out["offsets"] = colour_offsets(models, x, y, targets, CLASSES, d.colour_bound, b.psnr_min, b.ssim_min,
                                        d.popsize, d.generations, d.sample, ctx.rng)
        out["x_colour"] = apply_offsets(x, y, out["offsets"])
        out["x"] = out["x_colour"].clone()
    elif scheme == "dune":  # the two separately optimised branches, superposed: clip(x_c + delta_spatial)
        spatial = load_tensors(ctx.input("perturb_spatial", PERTURBED_FILE), ctx.device)["x"]
        colour = load_tensors(ctx.input("perturb_colour", PERTURBED_FILE), ctx.device)
        out = {"x_colour": colour["x_colour"], "offsets": colour["offsets"],
               "x": (colour["x_colour"] + spatial - x).clamp(0.0, 1.0)}
    else:
        raise ValueError(f"unknown scheme {scheme!r}")
    save_tensors(ctx.output(PERTURBED_FILE), out, metadata={"scheme": scheme})
    return summary | {"mean_abs_change": float((out["x"] - x).abs().mean())}
