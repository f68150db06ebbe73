"""Sound bounds of a ``MaskedNet`` over a batch of input boxes: interval bound propagation and CROWN.

IBP: ``[l', u'] = W^+ [l, u] + W^- [u, l] + b`` then the activation, layer by layer.
CROWN (Zhang et al. 2018): for an objective ``c^T z_L`` propagate a linear upper bound backwards,
``A_{l-1} = (A_l^+ S^u_l + A_l^- S^l_l) W_l`` with ReLU relaxations ``s^l z <= relu(z) <= s^u z + t^u`` on unstable
units (``s^u = u/(u-l)``, ``t^u = -l s^u``, adaptive lower slope ``s^l = 1[u > -l]``), and maximise the final linear
function over the box: ``max_z A z + d = A mid + |A| rad + d``. All arithmetic is float64.
"""

from __future__ import annotations

import torch

from .graph import MaskedNet

Tensor = torch.Tensor


def _tensors(net: MaskedNet, device: str = "cpu") -> list[tuple[Tensor, Tensor, Tensor]]:
    return [
        (torch.as_tensor(w, device=device), torch.as_tensor(b, device=device), torch.as_tensor(m, device=device))
        for w, b, m in zip(net.weights, net.biases, net.relu)
    ]


def ibp(net: MaskedNet, lo: Tensor, up: Tensor) -> list[tuple[Tensor, Tensor]]:
    """Pre-activation interval bounds of every layer for boxes ``[lo, up]`` (each [B, n_in])."""
    out = []
    for w, b, m in _tensors(net, lo.device.type):
        mid, rad = (up + lo) / 2, (up - lo) / 2
        c, r = mid @ w.T + b, rad @ w.abs().T
        pl, pu = c - r, c + r
        out.append((pl, pu))
        lo, up = torch.where(m, pl.clamp(min=0), pl), torch.where(m, pu.clamp(min=0), pu)
    return out


def _relaxation(pl: Tensor, pu: Tensor, m: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """Upper slope/intercept and lower slope of the activation (identity where mask is False)."""
    unstable = m & (pl < 0) & (pu > 0)
    dead = m & (pu <= 0)
    su = torch.where(unstable, pu / (pu - pl).clamp(min=1e-30), torch.where(dead, 0.0, 1.0))
    tu = torch.where(unstable, -pl * su, 0.0)
    sl = torch.where(unstable, (pu > -pl).double(), torch.where(dead, 0.0, 1.0))
    return su, tu, sl


def backward(
    layers: list[tuple[Tensor, Tensor, Tensor]],
    pre: list[tuple[Tensor, Tensor]],
    lo: Tensor,
    up: Tensor,
    top: int,
    C: Tensor,
) -> tuple[Tensor, Tensor, Tensor]:
    """CROWN upper bound of ``C z_top`` (C [B, k, n_top] on layer ``top``'s pre-activation) over ``[lo, up]``.

    Returns (upper [B, k], A [B, k, n_in], d [B, k]) with ``C z_top <= A z + d`` on the box.
    """
    A = C
    d = torch.zeros(C.shape[:2], dtype=C.dtype, device=C.device)
    for layer in range(top, -1, -1):
        w, b, m = layers[layer]
        if layer < top:
            su, tu, sl = _relaxation(*pre[layer], m)
            Ap, An = A.clamp(min=0), A.clamp(max=0)
            d = d + (Ap * tu[:, None, :]).sum(-1)
            A = Ap * su[:, None, :] + An * sl[:, None, :]
        d = d + A @ b
        A = A @ w
    mid, rad = (up + lo) / 2, (up - lo) / 2
    upper = d + (A @ mid[:, :, None]).squeeze(-1) + (A.abs() @ rad[:, :, None]).squeeze(-1)
    return upper, A, d


def layer_bounds(net: MaskedNet, lo: Tensor, up: Tensor, crown: bool = True) -> list[tuple[Tensor, Tensor]]:
    """Pre-activation bounds of all layers: IBP, tightened by CROWN on each layer's ReLU units."""
    pre = ibp(net, lo, up)
    if not crown:
        return pre
    layers = _tensors(net, lo.device.type)
    for layer, (_, _, m) in enumerate(layers[:-1]):
        idx = torch.nonzero(m).flatten()
        pl, pu = pre[layer]
        if len(idx) == 0:
            continue
        unstable = ((pl[:, idx] < 0) & (pu[:, idx] > 0)).any(0)
        idx = idx[unstable]
        if len(idx) == 0:
            continue
        k, n = len(idx), layers[layer][0].shape[0]
        E = torch.zeros(k, n, dtype=lo.dtype, device=lo.device)
        E[torch.arange(k), idx] = 1.0
        C = torch.cat([E, -E]).expand(lo.shape[0], 2 * k, n)
        ub, _, _ = backward(layers, pre, lo, up, layer, C)
        pl, pu = pl.clone(), pu.clone()
        pu[:, idx] = torch.minimum(pu[:, idx], ub[:, :k])
        pl[:, idx] = torch.maximum(pl[:, idx], -ub[:, k:])
        pre[layer] = (pl, pu)
    return pre


def box_layer_bounds(net: MaskedNet, lo, hi) -> list[tuple]:
    """``layer_bounds`` of one box given as numpy arrays, returned as numpy (what the MILP encoding needs)."""
    pre = layer_bounds(net, torch.as_tensor(lo[None]), torch.as_tensor(hi[None]))
    return [(pl[0].numpy(), pu[0].numpy()) for pl, pu in pre]


def output_bounds(
    net: MaskedNet, lo: Tensor, up: Tensor, C: Tensor, crown_layers: bool = True
) -> tuple[Tensor, Tensor, list[tuple[Tensor, Tensor]]]:
    """Upper bounds of ``C out`` (C [k, n_out]) over each box, their linear coefficients A [B, k, n_in], and the
    pre-activation bounds used (for the MILP)."""
    pre = layer_bounds(net, lo, up, crown_layers)
    layers = _tensors(net, lo.device.type)
    C = C.to(lo)
    Cb = C.expand(lo.shape[0], *C.shape)
    ub, A, _ = backward(layers, pre, lo, up, len(layers) - 1, Cb)
    last_l, last_u = pre[-1]
    ibp_ub = torch.where(C > 0, C, 0) @ last_u.T + torch.where(C < 0, C, 0) @ last_l.T
    return torch.minimum(ub, ibp_ub.T), A, pre
