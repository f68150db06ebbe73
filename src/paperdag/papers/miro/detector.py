"""The detector: a small CNN trained here on clean renders, reading the scene layout of an image.

Heads (softmax each): vertical (2), colour and shape of the first object (4, 3) and of the second (4, 3), where
"first" is the left (horizontal) or top (vertical) object (scenes.canonical). Trained by cross-entropy summed over
the heads with Adam. Two are trained on disjoint clean renders: the reward detector behind the alignment reward, and
the evaluator behind the GenEval-like checks and the diversity features (no reward is computed from it).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor, nn

from .scenes import COLOURS, SHAPES, canonical

HEADS = (2, len(COLOURS), len(SHAPES), len(COLOURS), len(SHAPES))


class Detector(nn.Module):
    """conv(3->16) -> conv(16->32, /2) -> conv(32->32, /2) -> 128 features -> the five heads."""

    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1), nn.SiLU(), nn.Conv2d(16, 32, 3, 2, 1), nn.SiLU(),
            nn.Conv2d(32, 32, 3, 2, 1), nn.SiLU(), nn.Flatten(), nn.Linear(32 * 16, 128), nn.SiLU())
        self.heads = nn.Linear(128, sum(HEADS))

    def features(self, x: Tensor) -> Tensor:
        """The 128 penultimate features of images x in [0, 1] (n x 3 x 16 x 16)."""
        return self.body(x * 2 - 1)

    def forward(self, x: Tensor) -> list[Tensor]:
        """Log-probabilities of each head."""
        return [z.log_softmax(-1) for z in self.heads(self.features(x)).split(HEADS, -1)]


def fit_detector(images: Tensor, tokens: np.ndarray, steps: int, batch: int, lr: float,
                 gen: torch.Generator) -> Detector:
    """Minimise sum_heads CE(head(x), canonical(tokens)) over clean renders by Adam with minibatches."""
    target = torch.as_tensor(canonical(tokens), device=images.device)
    net = Detector().to(images.device)
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    for _ in range(steps):
        idx = torch.randint(0, len(images), (batch,), generator=gen, device=gen.device).to(images.device)
        loss = sum(nn.functional.nll_loss(lp, target[idx, h]) for h, lp in enumerate(net(images[idx])))
        opt.zero_grad()
        loss.backward()
        opt.step()
    return net.eval()


@torch.no_grad()
def attribute_probs(net: Detector, images: Tensor, tokens: np.ndarray) -> Tensor:
    """p(attribute named by the caption | image) for the 5 canonical attributes (n x 5)."""
    target = torch.as_tensor(canonical(tokens), device=images.device)
    return torch.stack([lp.gather(1, target[:, h : h + 1])[:, 0].exp() for h, lp in enumerate(net(images))], 1)


@torch.no_grad()
def geneval(net: Detector, images: Tensor, tokens: np.ndarray) -> dict[str, Tensor]:
    """GenEval-like per-image checks by the detector's argmax (booleans, n each):
    object = both shapes right, colour = both colours right, position = layout axis and order right (the relation),
    overall = all three."""
    pred = torch.stack([lp.argmax(1) for lp in net(images)], 1).cpu().numpy()
    want = canonical(tokens)
    ok = pred == want
    # the relation is right when the axis is right and a slot holds its own colour (colours are distinct)
    order = (pred[:, 1] == want[:, 1]) | (pred[:, 3] == want[:, 3])
    checks = {"object": ok[:, 2] & ok[:, 4], "colour": ok[:, 1] & ok[:, 3], "position": ok[:, 0] & order}
    checks["overall"] = checks["object"] & checks["colour"] & checks["position"]
    return {k: torch.as_tensor(v) for k, v in checks.items()}
