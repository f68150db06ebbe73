"""Training loops: Adam with a cosine learning-rate decay lr_k = lr (1 + cos(pi k / K)) / 2 over K steps, minibatches
drawn with replacement from a seeded torch.Generator (a run is a function of its seed)."""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn
from torch.nn import functional as F

from .flows import FlowSpec, fm_loss, source
from .geometry import project_to_sphere
from .networks import Classifier


def _optimizer(net: nn.Module, lr: float,
               steps: int) -> tuple[torch.optim.Optimizer, torch.optim.lr_scheduler.LRScheduler]:
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    return opt, torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=steps)


def train_flow(net: nn.Module, data: torch.Tensor, spec: FlowSpec, radius: float, steps: int, batch: int, lr: float,
               gen: torch.Generator, report: Callable[[int, float], None] | None = None) -> list[float]:
    """Minimise fm_loss (flows.py) over ``steps`` minibatches: x1 from ``data`` (projected to S_R for the spherical
    geometry), x0 from the source, t ~ U[0, 1]. Returns the loss of every step."""
    target = project_to_sphere(data, radius) if spec.geometry == "sphere" else data
    opt, sched = _optimizer(net, lr, steps)
    losses = []
    for k in range(steps):
        x1 = target[torch.randint(len(target), (batch,), generator=gen, device=data.device)]
        x0 = source(batch, data.shape[1], spec, radius, gen, str(data.device))
        t = torch.rand(batch, generator=gen, device=data.device)
        loss = fm_loss(net, x0, x1, t, spec)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        losses.append(loss.item())
        if report is not None:
            report(k, losses[-1])
    return losses


def train_classifier(X: torch.Tensor, y: torch.Tensor, hidden: int, feat_dim: int, steps: int, batch: int, lr: float,
                     gen: torch.Generator, n_classes: int = 10) -> Classifier:
    """Minimise the cross-entropy -(1/n) sum_i log softmax(f(x_i))_{y_i} of a Classifier (networks.py)."""
    net = Classifier(X.shape[1], hidden, feat_dim, n_classes).to(X.device)
    opt, sched = _optimizer(net, lr, steps)
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
