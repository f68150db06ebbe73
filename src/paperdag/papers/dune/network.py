"""The image classifier shared by surrogates and victims, and its training loop.

ConvNet: conv3x3/2(C->w) - ReLU - conv3x3/2(w->2w) - ReLU - linear(2w * ceil(H/4)^2 -> K) (strided
convolutions keep a victim's training under a second of CPU at 14 x 14). Training minimises the mean
cross-entropy -(1/B) sum_i log softmax(f(x_i))_{y_i} with Adam; with
``adv_eps > 0`` every batch is first replaced by its PGD maximiser x* = argmax_{||x* - x||_inf <= eps} CE(f(x*), y)
(Madry et al. 2018, adversarial training).
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

from .attacks import pgd


class ConvNet(nn.Module):
    """A two-block CNN: the same architecture for surrogates and victims."""

    def __init__(self, channels: int, size: int, width: int, classes: int):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(channels, width, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(width, 2 * width, 3, stride=2, padding=1), nn.ReLU(), nn.Flatten())
        self.head = nn.Linear(2 * width * ((size + 3) // 4) ** 2, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x))


def train_classifier(model: nn.Module, x: torch.Tensor, y: torch.Tensor, epochs: int, batch: int, lr: float,
                     generator: torch.Generator, adv_eps: float = 0.0, adv_steps: int = 0,
                     on_epoch: Callable[[int, nn.Module], None] | None = None) -> nn.Module:
    """Adam on the mean cross-entropy over shuffled mini-batches (PGD adversarial training when adv_eps > 0);
    ``on_epoch(e, model)`` is called after each epoch e = 1..epochs (checkpoints, curves)."""
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    loss_fn = nn.CrossEntropyLoss()
    for epoch in range(1, epochs + 1):
        model.train()
        order = torch.randperm(len(x), generator=generator).to(x.device)
        for start in range(0, len(x), batch):
            xb, yb = x[order[start:start + batch]], y[order[start:start + batch]]
            if adv_eps > 0:
                model.eval()
                xb = pgd([model], xb, yb, adv_eps, 2.5 * adv_eps / adv_steps, adv_steps, minimise=False,
                         generator=generator)
                model.train()
            opt.zero_grad()
            loss_fn(model(xb), yb).backward()
            opt.step()
        if on_epoch is not None:
            on_epoch(epoch, model)
    model.eval()
    return model


@torch.no_grad()
def accuracy(model: nn.Module, x: torch.Tensor, y: torch.Tensor, batch: int = 1024) -> float:
    """Top-1 accuracy (1/n) sum_i [argmax f(x_i) = y_i] in eval mode."""
    model.eval()
    hits = sum(int((model(x[i:i + batch]).argmax(1) == y[i:i + batch]).sum()) for i in range(0, len(x), batch))
    return hits / len(x)


def load_ensemble(tensors: dict[str, torch.Tensor], size: int, width: int, classes: int) -> list[nn.Module]:
    """The members stored as ``m<j>.<param>`` (surrogate checkpoints), in eval mode, on the tensors' device."""
    members = sorted({k.split(".", 1)[0] for k in tensors}, key=lambda m: int(m[1:]))
    models = []
    for name in members:
        model = ConvNet(3, size, width, classes).to(next(iter(tensors.values())).device)
        model.load_state_dict({k.split(".", 1)[1]: v for k, v in tensors.items() if k.startswith(name + ".")})
        models.append(model.eval().requires_grad_(False))
    return models


@torch.no_grad()
def ensemble_rate(models: list[nn.Module], x: torch.Tensor, t: torch.Tensor) -> float:
    """(1/M) sum_m (1/n) sum_i [argmax f_m(x_i) = t_i]: how often the surrogates predict the targets t."""
    return sum(accuracy(m, x, t) for m in models) / len(models)
