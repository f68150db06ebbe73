"""Training loops: Adam with a cosine learning-rate decay lr_k = lr (1 + cos(pi k / K)) / 2 over K steps, minibatches
drawn with replacement from a seeded torch.Generator (a run is a function of its seed)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import torch
from torch import nn
from torch.nn import functional as F

from .flows import FlowSpec, fm_loss, source
from .geometry import project_to_sphere
from .networks import Classifier, SeedBatch


def _optimizer(params: Iterable[torch.Tensor], lr: float,
               steps: int) -> tuple[torch.optim.Optimizer, torch.optim.lr_scheduler.LRScheduler]:
    opt = torch.optim.Adam(params, lr=lr)
    return opt, torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=steps)


def train_flow(nets: list[nn.Module], data: torch.Tensor, spec: FlowSpec, radius: float, steps: int, batch: int,
               lr: float, gens: list[torch.Generator],
               report: Callable[[int], None] | None = None) -> tuple[list[dict[str, torch.Tensor]], torch.Tensor]:
    """Minimise fm_loss (flows.py) of every seed's network over ``steps`` minibatches, seed s drawing from gens[s]:
    x1 from ``data`` (projected to S_R for the spherical geometry), x0 from the source, t ~ U[0, 1]. The seeds train as
    one SeedBatch: the summed loss sum_s L_s has gradient dL_s/dtheta_s in seed s's parameters, and Adam acts
    elementwise, so each seed follows its own run's updates. Returns (each seed's trained state dict, the loss
    [steps, seeds])."""
    field = SeedBatch(nets)
    target = project_to_sphere(data, radius) if spec.geometry == "sphere" else data
    opt, sched = _optimizer(field.params.values(), lr, steps)
    dev, losses = data.device, []
    for k in range(steps):
        x1 = torch.stack([target[torch.randint(len(target), (batch,), generator=g, device=dev)] for g in gens])
        x0 = torch.stack([source(batch, data.shape[1], spec, radius, g, str(dev)) for g in gens])
        t = torch.stack([torch.rand(batch, generator=g, device=dev) for g in gens])
        loss = fm_loss(field, x0, x1, t, spec)
        opt.zero_grad()
        loss.sum().backward()
        opt.step()
        sched.step()
        losses.append(loss.detach())
        if report is not None:
            report(k)
    return field.state_dicts(), torch.stack(losses).cpu()


def train_classifier(X: torch.Tensor, y: torch.Tensor, hidden: int, feat_dim: int, steps: int, batch: int, lr: float,
                     gen: torch.Generator, n_classes: int = 10) -> Classifier:
    """Minimise the cross-entropy -(1/n) sum_i log softmax(f(x_i))_{y_i} of a Classifier (networks.py)."""
    net = Classifier(X.shape[1], hidden, feat_dim, n_classes).to(X.device)
    opt, sched = _optimizer(net.parameters(), lr, steps)
    for _ in range(steps):
        idx = torch.randint(len(X), (batch,), generator=gen, device=X.device)
        loss = F.cross_entropy(net(X[idx]), y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
    return net.eval()


@torch.no_grad()
def accuracy(net: nn.Module, X: torch.Tensor, y: torch.Tensor) -> float:
    """Fraction of rows with argmax_c f(x)_c = y."""
    return float((net(X).argmax(1) == y).float().mean())


def train_autoencoder(net: nn.Module, X: torch.Tensor, steps: int, batch: int, lr: float,
                      gen: torch.Generator) -> torch.Tensor:
    """Minimise the reconstruction error (1/n) sum_i ||D(E(x_i)) - x_i||^2 / d over ``steps`` minibatches of the rows
    of X; returns the loss per step [steps] (on the CPU)."""
    opt, sched = _optimizer(net.parameters(), lr, steps)
    losses = []
    for _ in range(steps):
        x = X[torch.randint(len(X), (batch,), generator=gen, device=X.device)]
        loss = F.mse_loss(net(x), x)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        losses.append(loss.detach())
    return torch.stack(losses).cpu()
