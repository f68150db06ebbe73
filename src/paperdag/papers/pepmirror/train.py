"""Stages ``train_polar`` / ``train_axial``: fit the DDPM denoiser on L-L data, then design on every held-out
target and on its mirror image with shared (mirrored) noise."""

from __future__ import annotations

import hashlib
import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import torch
from safetensors.torch import save_file

from paperdag.io import write_json, write_table
from paperdag.papers.pepmirror import batches
from paperdag.papers.pepmirror.diffusion import cosine_alpha_bar, ddpm_loss, ddpm_sample
from paperdag.papers.pepmirror.geometry import MIRROR
from paperdag.papers.pepmirror.model import Denoiser
from paperdag.papers.pepmirror.refine import refine
from paperdag.stage import StageContext

ARCH_KEYS = ("hidden", "vec_channels", "n_layers", "diffusion_steps", "coord_scale", "pocket_max")


def train_polar(ctx: StageContext) -> dict[str, float]:
    """Polar-only (reflection-equivariant) variant."""
    return fit_and_design(ctx, axial=False)


def train_axial(ctx: StageContext) -> dict[str, float]:
    """Polar + axial (reflection-sensitive) variant."""
    return fit_and_design(ctx, axial=True)


def build_model(config: dict) -> Denoiser:
    """The denoiser described by a saved config.json."""
    return Denoiser(config["hidden"], config["vec_channels"], config["n_layers"], config["axial"])


def design_noise(seed: int, target: int, n_samples: int, steps: int) -> torch.Tensor:
    """Noise [T+1, n, 12, 4, 3] for one target, a function of (seed, target index) only, so both variants and
    both hands of the target see the same draws (paired comparison)."""
    g = torch.Generator().manual_seed(seed * 1_000_003 + target)
    return torch.randn(steps + 1, n_samples, batches.MAX_LEN, 4, 3, generator=g, dtype=torch.float64)


def fit_and_design(ctx: StageContext, axial: bool) -> dict[str, float]:
    """Adam on the DDPM loss (cosine learning-rate decay), then n_samples designs per target and hand."""
    p = ctx.params
    rows = pq.read_table(ctx.inputs["prepare"] / "examples.parquet").to_pylist()
    train = batches.to_arrays([r for r in rows if r["split"] == "train"], p.pocket_max)
    targets = [r for r in rows if r["split"] == "target"]
    config = {k: getattr(p, k) for k in ARCH_KEYS} | {"axial": axial}
    model = build_model(config).to(ctx.device)
    opt = torch.optim.Adam(model.parameters(), lr=p.lr)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * s / p.train_steps)))
    alpha_bar = cosine_alpha_bar(p.diffusion_steps)
    n_train = len(train["pep_mask"])
    losses = []
    for step in ctx.progress(range(p.train_steps), desc="denoiser"):
        batch = batches.to_torch(train, ctx.rng.integers(n_train, size=p.batch_size), ctx.device)
        loss = ddpm_loss(model, batch, alpha_bar, p.coord_scale)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        losses.append(loss.item())
        if step % 10 == 0:
            ctx.log_metric("train_loss", float(np.mean(losses[-10:])), step)
    state = {k: v.detach().cpu().contiguous() for k, v in model.state_dict().items()}
    save_file(state, str(ctx.out / "model.safetensors"))
    version = f"pepmirror-{'axial' if axial else 'polar'}-{hashlib.sha256((ctx.out / 'model.safetensors').read_bytes()).hexdigest()[:12]}"
    write_json(ctx.out / "config.json", config | {"version": version})
    designs = design_targets(model.eval(), targets, p, ctx.device, version)
    write_table(ctx.out / "designs.parquet", pa.Table.from_pylist(designs))
    plt.figure(figsize=(5, 3))
    plt.plot(np.convolve(losses, np.ones(20) / 20, mode="valid"))
    plt.xlabel("step")
    plt.ylabel("DDPM loss (20-step mean)")
    plt.title(version)
    plt.tight_layout()
    plt.savefig(ctx.out / "loss.png", dpi=100)
    plt.close()
    return {"final_loss": float(np.mean(losses[-50:])), "n_designs": len(designs)}


def design_targets(model: Denoiser, targets: list[dict], p, device: str, version: str) -> list[dict]:
    """For each target: n_samples designs on the L target and, with mirrored noise P z, on its mirror image, each
    sampled (xyz_raw) and refined (xyz, see refine.py). Rows hold coordinates in the target's own frame (hand D =
    the mirror about the pocket centroid)."""
    alpha_bar = cosine_alpha_bar(p.diffusion_steps)
    out = []
    for k, target in enumerate(targets):
        arr = batches.to_arrays([target] * p.n_samples, p.pocket_max)
        noise = design_noise(p.seed, k, p.n_samples, p.diffusion_steps)
        P = torch.as_tensor(MIRROR)
        for hand in ("L", "D"):
            a = dict(arr)
            z = noise
            if hand == "D":
                a["pocket_x"] = arr["pocket_x"] @ MIRROR.T
                z = noise @ P.T
            batch = batches.to_torch(a, np.arange(p.n_samples), device)
            raw = ddpm_sample(model, batch, alpha_bar, p.coord_scale, z.to(device=device, dtype=torch.float32))
            raw = raw.double().cpu()
            xyz = refine(raw, batch["pep_mask"].cpu(), batch["pocket_x"].cpu(), batch["pocket_mask"].cpu(),
                         iters=p.refine_iters).numpy()
            raw = raw.numpy() + arr["center"][:, None, None]
            xyz = xyz + arr["center"][:, None, None]
            L = target["length"]
            for s in range(p.n_samples):
                out.append({"target_id": target["id"], "target_index": k, "target_hand": hand, "sample": s,
                            "length": L, "xyz": xyz[s, :L].reshape(-1).tolist(),
                            "xyz_raw": raw[s, :L].reshape(-1).tolist(), "model_version": version})
    return out
