"""The networks shared by every method: a small CNN encoder x -> h, an MLP projector h -> z, and BayesNCL's gating
head h -> pi (keep-probability of each of the D feature dimensions); and the supervised classifier on the same
encoder."""

from __future__ import annotations

import torch
from torch import nn


class Encoder(nn.Module):
    """Four 3x3 conv + BatchNorm + ReLU blocks (widths w, 2w, 4w, 4w; strides 2, 1, 2, 2: a 19-pixel receptive
    field, the size of an object), then global average pooling: h in R^{4w}."""

    def __init__(self, width: int) -> None:
        super().__init__()
        layers, c_in = [], 3
        for c_out, stride in ((width, 2), (2 * width, 1), (4 * width, 2), (4 * width, 2)):
            layers += [nn.Conv2d(c_in, c_out, 3, stride, 1, bias=False), nn.BatchNorm2d(c_out), nn.ReLU()]
            c_in = c_out
        self.net = nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.dim = c_in

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


def projector(h_dim: int, hidden: int, out: int) -> nn.Module:
    """z = W_2 ReLU(BN(W_1 h)) (SimCLR's two-layer head)."""
    return nn.Sequential(nn.Linear(h_dim, hidden, bias=False), nn.BatchNorm1d(hidden), nn.ReLU(),
                         nn.Linear(hidden, out))


class GateHead(nn.Module):
    """pi = clamp(sigmoid(V_2 ReLU(V_1 h) + b), eps, 1 - eps), with b initialised to logit(pi_init) (0 at pi_init =
    1/2: the centre of PyTorch's default bias init, which the released gate keeps)."""

    def __init__(self, h_dim: int, hidden: int, out: int, pi_init: float, eps: float) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(h_dim, hidden), nn.ReLU(), nn.Linear(hidden, out))
        nn.init.constant_(self.net[2].bias, float(torch.logit(torch.tensor(pi_init))))
        self.eps = eps

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(self.net(h)).clamp(self.eps, 1 - self.eps)


class Classifier(nn.Module):
    """The supervised upper bound: the same encoder with a linear head, logits = W h + b."""

    def __init__(self, width: int, n_classes: int) -> None:
        super().__init__()
        self.encoder = Encoder(width)
        self.head = nn.Linear(self.encoder.dim, n_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.encoder(x))


class ContrastiveNet(nn.Module):
    """Encoder + projector (+ gate for BayesNCL); ``features`` gives what the loss compares, per method."""

    def __init__(self, width: int, hidden: int, feat_dim: int, gated: bool, pi_init: float, eps: float) -> None:
        super().__init__()
        self.encoder = Encoder(width)
        self.projector = projector(self.encoder.dim, hidden, feat_dim)
        self.gate = GateHead(self.encoder.dim, hidden, feat_dim, pi_init, eps) if gated else None

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """(h, z, pi): h = encoder(x), z = projector(h), pi = gate(stopgrad(h)) (None without a gate)."""
        h = self.encoder(x)
        z = self.projector(h)
        return h, z, self.gate(h.detach()) if self.gate is not None else None
