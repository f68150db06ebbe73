"""Per-run measurements of trained networks (probe accuracies, the dimension report, the gate's kept share), the
supervised upper bound's probe, and the encoder-free trivial baseline (the same linear probe on raw pixels)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from .interpret import background_share, dimension_report
from .networks import ContrastiveNet
from .probe import embed, linear_probe


@dataclass(frozen=True)
class Split:
    """Images and their class and background labels."""

    x: torch.Tensor
    label: np.ndarray
    background: np.ndarray


def measure(net: ContrastiveNet, method: str, train: Split, test: Split, counter: torch.Tensor, top_m: int,
            tau: float, eps: float, probe_c: float, max_iter: int, batch: int) -> tuple[dict[str, float], np.ndarray]:
    """Probe accuracies on the frozen encoder output h (class and background), the dimension report of the method's
    features f on the test split, the share of gate-kept (sample, dimension) entries, the background share of f on
    the counterfactual composites ``counter`` (n_test, K, 3, s, s: test object i over background b; its mean over
    dimensions, interpret.background_share); and the test activation matrix f."""
    a, b = embed(net, method, train.x, batch), embed(net, method, test.x, batch)
    n, k = counter.shape[:2]
    f_cf = embed(net, method, counter.reshape(n * k, *counter.shape[2:]), batch)["f"].reshape(n, k, -1)
    share = background_share(f_cf, test.label)
    row = {"probe_acc": linear_probe(a["h"], train.label, b["h"], test.label, probe_c, max_iter),
           "background_probe_acc": linear_probe(a["h"], train.background, b["h"], test.background, probe_c, max_iter),
           "kept": float((b["pi"] > 0.5).mean()),
           "background_share": float(share.mean()) if len(share) else float("nan")}
    return row | dimension_report(b["f"], test.label, test.background, top_m, tau, eps), b["f"]


@torch.no_grad()
def encoder_probe(encoder: torch.nn.Module, train: Split, test: Split, probe_c: float, max_iter: int,
                  batch: int) -> float:
    """Class accuracy of the linear probe on the frozen output h of ``encoder`` (eval mode): the supervised upper
    bound's reading, the same probe as ``measure``'s."""
    encoder.eval()

    def h(split: Split) -> np.ndarray:
        return torch.cat([encoder(c).cpu() for c in split.x.split(batch)]).numpy().astype(np.float64)

    return linear_probe(h(train), train.label, h(test), test.label, probe_c, max_iter)


def pixel_probe(train: Split, test: Split, probe_c: float, max_iter: int) -> float:
    """Class accuracy of the same linear probe on the raw pixels (flattened RGB images): the encoder-free trivial
    baseline every encoder has to beat."""
    def flat(split: Split) -> np.ndarray:
        return split.x.reshape(len(split.x), -1).cpu().numpy().astype(np.float64)

    return linear_probe(flat(train), train.label, flat(test), test.label, probe_c, max_iter)
