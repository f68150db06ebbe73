"""Many independent MLP critics evaluated at once (seeds x ensemble members), with randomized prior functions.

Member b computes f_b(x) = W3_b relu(W2_b relu(W1_b x + b1_b) + b2_b) + b3_b, all members in one ``baddbmm`` per
layer. A critic's output is Z_b(x) = f_b(x) + beta p_b(x), with p_b a frozen, independently initialised copy of
the architecture (randomized prior functions, Osband, Aslanides & Cassirer 2018, NeurIPS): members disagree where
data has not pinned them down, which is the posterior spread the free-energy term reads. The prior shifts all
quantiles of an action together (p_b has one output per action): it is uncertainty about where the return
distribution lies, and adds no spurious spread among one member's quantiles (the aleatoric part). Priors come in
antithetic pairs (members 2j and 2j + 1 get +p_j and -p_j), so the ensemble mean carries no prior bias: the
pragmatic value is the data's, and only the disagreement (the epistemic part) is the prior's.

On a finite state space (DeepSea) the observation is the one-hot vector e_s of a state s, and a network with
``one_hot`` inputs takes s itself: its first layer reads the row W1[s] + b1 (= W1^T e_s + b1, the same value, and
the same gradient, now a scatter of rows instead of a product). A fixed function of s is a table: ``tabulate``
evaluates it once at every state and ``lookup`` reads its rows, the values of evaluating it on the batch itself (bit
for bit wherever the matrix kernel sums a row the same way for any row count, as MKL does from 8 rows on; the tests
check it to round-off), for one row read instead of three layers.
"""

from __future__ import annotations

import math
from itertools import pairwise

import torch
from torch import nn


class BatchedMLP(nn.Module):
    """``members`` independent two-hidden-layer ReLU MLPs d_in -> hidden -> hidden -> d_out (nn.Linear init); with
    ``one_hot`` the input is the state index s of the one-hot vector e_s (d_in states)."""

    def __init__(self, members: int, d_in: int, hidden: int, d_out: int, generator: torch.Generator,
                 one_hot: bool = False) -> None:
        super().__init__()
        self.one_hot = one_hot
        sizes = [d_in, hidden, hidden, d_out]
        self.weights = nn.ParameterList()
        self.biases = nn.ParameterList()
        for fan_in, fan_out in pairwise(sizes):
            bound = 1.0 / math.sqrt(fan_in)
            self.weights.append(
                nn.Parameter((torch.rand(members, fan_in, fan_out, generator=generator) * 2 - 1) * bound))
            self.biases.append(nn.Parameter((torch.rand(members, 1, fan_out, generator=generator) * 2 - 1) * bound))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x: [members, n, d_in] (or long states [members, n] with ``one_hot``) -> [members, n, d_out]."""
        last = len(self.weights) - 1
        for i, (w, b) in enumerate(zip(self.weights, self.biases, strict=True)):
            if i == 0 and self.one_hot:
                x = b + w.gather(1, x.unsqueeze(-1).expand(-1, -1, w.shape[-1]))
            else:
                x = torch.baddbmm(b, x, w)
            if i < last:
                x = torch.relu(x)
        return x


class Critic(nn.Module):
    """Z(x)[a, k] = f(x)[a, k] + beta p(x)[a]: [members, n, actions, atoms] (atoms: the K return quantiles)."""

    def __init__(self, members: int, d_in: int, hidden: int, actions: int, atoms: int, prior_scale: float,
                 generator: torch.Generator, one_hot: bool = False) -> None:
        super().__init__()
        self.actions, self.atoms, self.prior_scale = actions, atoms, prior_scale
        self.net = BatchedMLP(members, d_in, hidden, actions * atoms, generator, one_hot)
        self.prior = BatchedMLP(members, d_in, hidden, actions, generator, one_hot).requires_grad_(False)
        if members % 2 == 0:  # antithetic pairs: member 2j + 1 uses -p_{2j}
            for w in (*self.prior.weights, *self.prior.biases):
                w[1::2] = w[0::2]
        sign = torch.tensor([1.0, -1.0] * (members // 2) + [1.0] * (members % 2))
        self.register_buffer("prior_sign", sign.view(members, 1, 1, 1))

    def forward(self, x: torch.Tensor, prior: torch.Tensor | None = None) -> torch.Tensor:
        """x: [members, n, d_in] (states [members, n] with ``one_hot``) -> Z: [members, n, actions, atoms]; ``prior``:
        p(x) [members, n, actions] where it is already known (a ``lookup`` of the frozen prior's table)."""
        z = self.net(x).view(*x.shape[:2], self.actions, self.atoms)
        if self.prior_scale > 0:
            z = z + self.prior_scale * self.prior_sign * (self.prior(x) if prior is None else prior).unsqueeze(-1)
        return z


def tabulate(f: nn.Module, members: int, states: int) -> torch.Tensor:
    """T[m, s] = f_m(s) for every state s of a network f with ``one_hot`` inputs: [members, states, ...]."""
    device = next(f.parameters()).device
    with torch.no_grad():
        return f(torch.arange(states, device=device).expand(members, states))


def lookup(s: torch.Tensor, table: torch.Tensor) -> torch.Tensor:
    """f(s) for states s [members, n] from T = tabulate(f): the rows T[m, s], [members, n, ...]."""
    rows = table.flatten(2)
    return rows.gather(1, s.unsqueeze(-1).expand(-1, -1, rows.shape[-1])).view(*s.shape, *table.shape[2:])
