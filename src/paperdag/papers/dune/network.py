"""The image classifier shared by surrogates and victims, and its training loop.

ConvNet: conv3x3/2(C->w) - ReLU - conv3x3/2(w->2w) - ReLU - linear(2w * ceil(H/4)^2 -> K) (strided
convolutions keep a victim's training under a second of CPU at 14 x 14). Training minimises the mean
cross-entropy -(1/B) sum_i log softmax(f(x_i))_{y_i} with Adam; with
``adv_eps > 0`` every batch is first replaced by its PGD maximiser x* = argmax_{||x* - x||_inf <= eps} CE(f(x*), y)
(Madry et al. 2018, adversarial training), after a few clean warm-up epochs (from a random initialisation
adversarial training of this small network on the low-contrast digits collapses to a constant prediction).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence

import torch
from torch import nn
from torch.nn import functional as F

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
                     generator: torch.Generator, adv_eps: float = 0.0, adv_steps: int = 0, adv_warmup: int = 0,
                     on_epoch: Callable[[int, nn.Module], None] | None = None) -> nn.Module:
    """Adam on the mean cross-entropy over shuffled mini-batches (PGD adversarial training when adv_eps > 0, after
    ``adv_warmup`` clean epochs); ``on_epoch(e, model)`` is called after each epoch e = 1..epochs (checkpoints)."""
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    loss_fn = nn.CrossEntropyLoss()
    for epoch in range(1, epochs + 1):
        model.train()
        order = torch.randperm(len(x), generator=generator).to(x.device)
        for start in range(0, len(x), batch):
            xb, yb = x[order[start:start + batch]], y[order[start:start + batch]]
            if adv_eps > 0 and epoch > adv_warmup:
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


class Stacked(nn.Module):
    """S networks of one architecture evaluated at once (torch.func.vmap over their stacked parameters):
    forward(x [S, B, ...]) -> logits [S B, K], network s applied to x[s]."""

    def __init__(self, models: Sequence[nn.Module]):
        super().__init__()
        self.params, self.buffers = torch.func.stack_module_state(list(models))
        self.base = copy.deepcopy(models[0]).to("meta")
        self.size = len(models)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        def one(p: dict[str, torch.Tensor], b: dict[str, torch.Tensor], xs: torch.Tensor) -> torch.Tensor:
            return torch.func.functional_call(self.base, (p, b), (xs,))

        return torch.vmap(one)(self.params, self.buffers, x).flatten(0, 1)

    def unstack(self, models: Sequence[nn.Module]) -> list[nn.Module]:
        """Copy network s's trained weights into models[s] (eval mode, no gradients)."""
        for s, model in enumerate(models):
            model.load_state_dict({k: v[s].detach() for k, v in (self.params | self.buffers).items()})
            model.eval().requires_grad_(False)
        return list(models)


def train_stacked(models: Sequence[nn.Module], xs: torch.Tensor, y: torch.Tensor, epochs: int, batch: int, lr: float,
                  generators: Sequence[torch.Generator], adv_eps: float = 0.0, adv_steps: int = 0,
                  adv_warmup: int = 0) -> list[nn.Module]:
    """S networks trained at once, network s on inputs xs[s] [N, ...] (labels y) with its own shuffle from
    generators[s]: Adam on sum_s mean_i CE(f_s(x_si), y_i), whose gradient in network s's weights is that network's
    own and Adam is elementwise, so without adversarial training these are S separate ``train_classifier`` runs
    batched (seeds batched rather than looped). With ``adv_eps > 0`` every batch after ``adv_warmup`` clean epochs
    is replaced by its PGD maximiser, the random starts drawn from generators[0]."""
    stack = Stacked(models)
    opt = torch.optim.Adam(stack.params.values(), lr=lr)
    for epoch in range(1, epochs + 1):
        orders = torch.stack([torch.randperm(len(y), generator=g) for g in generators]).to(xs.device)
        for start in range(0, len(y), batch):
            idx = orders[:, start:start + batch]
            xb, yb = torch.stack([xs[s, idx[s]] for s in range(len(models))]), y[idx].flatten()
            if adv_eps > 0 and epoch > adv_warmup:
                xb = pgd([stack], xb, yb, adv_eps, 2.5 * adv_eps / adv_steps, adv_steps, minimise=False,
                         generator=generators[0])
            opt.zero_grad()
            (len(models) * F.cross_entropy(stack(xb), yb)).backward()
            opt.step()
    return stack.unstack(models)


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
