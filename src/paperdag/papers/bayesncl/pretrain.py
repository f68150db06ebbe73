"""Self-supervised pretraining of one method: Adam on the method's loss over two augmented views per image; and the
supervised upper bound: the same encoder, data, augmentations and steps, trained by cross-entropy on one view."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import torch

from .augment import augment
from .networks import Classifier, ContrastiveNet
from .objectives import bernoulli_kl, features, nt_xent


@dataclass(frozen=True)
class Recipe:
    """Network sizes, optimisation and augmentation settings (the same for every method)."""

    width: int
    hidden: int
    feat_dim: int
    steps: int
    batch: int
    lr: float
    gate_lr: float
    weight_decay: float
    temperature: float
    p0: float
    kl_weight: float
    pi_init: float
    pi_eps: float
    min_scale: float
    jitter: float
    hue: float
    p_gray: float
    flip: bool


def build(method: str, r: Recipe) -> ContrastiveNet:
    """The network of ``method`` (with a gate only for BayesNCL)."""
    return ContrastiveNet(r.width, r.hidden, r.feat_dim, method == "bayesncl", r.pi_init, r.pi_eps)


def initial(method: str, r: Recipe, seed: int) -> ContrastiveNet:
    """The network of ``method`` at its initialisation for ``seed`` (torch's global RNG seeded with it)."""
    torch.manual_seed(seed)
    return build(method, r)


def batches(n: int, batch: int, steps: int, g: torch.Generator) -> Iterator[torch.Tensor]:
    """``steps`` index batches of rows 0..n-1, without replacement within each epoch: a fresh permutation from ``g`` is
    appended whenever fewer than ``batch`` indices remain. Lazy, so its draws from ``g`` interleave with the caller's
    (the augmentations) exactly as in one loop."""
    order = torch.empty(0, dtype=torch.long)
    for _ in range(steps):
        if len(order) < batch:
            order = torch.cat([order, torch.randperm(n, generator=g)])
        idx, order = order[:batch], order[batch:]
        yield idx


def pretrain(x: torch.Tensor, method: str, r: Recipe, seed: int,
             on_step: Callable[[int, dict[str, float]], None] | None = None) -> ContrastiveNet:
    """Train on images ``x`` (n, 3, s, s) for ``r.steps`` steps of batches drawn without replacement within each
    epoch. The loss is NT-Xent(f(t'(x)), f(t''(x))) (+ lambda * mean_batch sum_d KL(Bern(pi_d) || Bern(p0)) for
    BayesNCL, with pi = gate(stopgrad(h))). The init, batch order and augmentations depend on ``seed`` only, so
    every method sees the same draws."""
    net = initial(method, r, seed).to(x.device)
    g = torch.Generator().manual_seed(seed)
    body = [p for name, p in net.named_parameters() if not name.startswith("gate.")]
    groups = [{"params": body, "lr": r.lr}]
    if net.gate is not None:
        groups.append({"params": list(net.gate.parameters()), "lr": r.gate_lr})
    opt = torch.optim.Adam(groups, weight_decay=r.weight_decay)
    net.train()
    for step, idx in enumerate(batches(len(x), r.batch, r.steps, g)):
        views = [augment(x[idx.to(x.device)], g, r.min_scale, r.jitter, r.hue, r.p_gray, r.flip) for _ in range(2)]
        h = net.encoder(torch.cat(views))
        z = net.projector(h)
        pi = net.gate(h.detach()) if net.gate is not None else None
        f = features(method, z, pi)
        contrast = nt_xent(f[: r.batch], f[r.batch :], r.temperature)
        kl = bernoulli_kl(pi, r.p0).sum(1).mean() if pi is not None else torch.zeros((), device=x.device)
        loss = contrast + r.kl_weight * kl
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if on_step is not None:
            stats = {"loss": loss.item(), "nt_xent": contrast.item(), "kl": kl.item()}
            if pi is not None:
                stats["keep"] = (pi > 0.5).float().mean().item()
            on_step(step, stats)
    return net.eval()


def supervise(x: torch.Tensor, y: torch.Tensor, n_classes: int, r: Recipe, seed: int) -> Classifier:
    """Train encoder + linear head by Adam on mean_batch -log softmax(W h(t(x)) + b)_y for ``r.steps`` steps (one
    augmented view t(x) per image; the batches and augmentation draws are taken like ``pretrain``'s, from ``seed``,
    which also seeds the encoder's initialisation, so the supervised encoder starts where the self-supervised ones
    of the same seed do)."""
    torch.manual_seed(seed)
    net = Classifier(r.width, n_classes).to(x.device)
    g = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam(net.parameters(), lr=r.lr, weight_decay=r.weight_decay)
    net.train()
    for idx in batches(len(x), r.batch, r.steps, g):
        i = idx.to(x.device)
        loss = torch.nn.functional.cross_entropy(net(augment(x[i], g, r.min_scale, r.jitter, r.hue, r.p_gray, r.flip)),
                                                 y[i])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return net.eval()
