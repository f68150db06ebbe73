"""Stage ``train_autoencoder``: the latent space of the paper's latent-space half. A convolutional autoencoder
(networks.ConvAutoencoder) trained on the photo crops' training split (model scale [-1, 1]); the latent flows
(train_<method>_latent) model its codes of those crops and are scored after decoding, in the same feature space as the
pixel-space flows. The codes are divided by one global scale s = sqrt(mean_{i,j} E(x_i)_j^2) (the codes' root mean
square over every crop and coordinate), so the latent data have the source N(0, I_k)'s per-coordinate scale; one
scalar keeps every code's direction and the ratios of the norms (the geometry SFM acts on)."""

from __future__ import annotations

import torch

from paperdag.io import save_tensors
from paperdag.stage import StageContext

from .data import load_split, to_model_space
from .networks import ConvAutoencoder
from .params import Params
from .prepare import DATA_FILE
from .training import train_autoencoder as fit

SOURCE = "photos"  # the crops the autoencoder encodes (the judged dataset)
AE_FILE = "autoencoder.safetensors"
CODES_FILE = "codes.safetensors"


def code_scale(codes: torch.Tensor) -> torch.Tensor:
    """s = sqrt(mean_{i,j} z_ij^2): the codes' root mean square over every row and coordinate."""
    return codes.pow(2).mean().sqrt()


def build(p: Params) -> ConvAutoencoder:
    """The autoencoder of the configured crop side, width and latent dimension (untrained)."""
    return ConvAutoencoder(p.data.crop_side, p.autoencoder.width, p.autoencoder.latent_dim)


def train_autoencoder(ctx: StageContext[Params]) -> dict[str, float]:
    """autoencoder.safetensors (state dict) and codes.safetensors ({"train": z / s [n_train, k], "scale": s}); returns
    the reconstruction error on the training and test crops and the parameter count."""
    p = ctx.params
    X_tr, X_te = (torch.as_tensor(to_model_space(load_split(ctx.input("prepare", DATA_FILE), SOURCE, s)[0]),
                                  device=ctx.device) for s in ("train", "test"))
    torch.manual_seed(p.seed)
    net = build(p).to(ctx.device)
    a = p.autoencoder
    losses = fit(net, X_tr, a.steps, a.batch, a.lr, torch.Generator(ctx.device).manual_seed(p.seed))
    every = max(1, a.steps // 50)
    for k in range(0, a.steps, every):
        ctx.log_metric("reconstruction_mse", float(losses[k: k + every].mean()), k)
    net.eval()
    with torch.no_grad():
        codes = net.encode(X_tr)
        scale = code_scale(codes)
        mse = {f"reconstruction_mse_{name}": float(((net(X) - X) ** 2).mean()) for name, X in
               (("train", X_tr), ("test", X_te))}
    save_tensors(ctx.output(AE_FILE), {k: v.cpu() for k, v in net.state_dict().items()})
    save_tensors(ctx.output(CODES_FILE), {"train": (codes / scale).cpu(), "scale": scale.reshape(1).cpu()})
    return mse | {"parameters": float(sum(v.numel() for v in net.parameters())), "code_scale": float(scale)}
