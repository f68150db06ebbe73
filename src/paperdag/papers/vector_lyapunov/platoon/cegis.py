"""CEGIS synthesis of the platoon's vector certificate (+ certified residual controller).

Learner loss on sampled queries z of random followers (x in B, delta within the delay domain, w in the bound),
restricted to the level set {level_i(z) <= c_0}:
    L = mean relu(G_i(z) + m c_0) + lambda_imit mean pi_theta(y)^2 + lambda_gamma sum gamma
        + lambda_shape sum_type (max_dB V / min_dB V)
(margin m; the imitation term keeps the controller close to the nominal one; the shape term keeps the level sets
from degenerating into thin slabs, i.e. keeps the overshoot constant c_1 / c_0 of the sISS bound small), with
c_0 = min of V on boundary samples. After every round the verifier (``bab.verify`` with a small budget, on
followers taken round-robin) and a projected-gradient falsifier return counterexamples, which join the training set
for the following rounds."""

from __future__ import annotations

import numpy as np
import torch

from ..lyapunov import Cert
from ..params import CegisParams, LearnerParams
from ..runtime import Log
from ..verifier import bab
from .certificate import Q_DIM, Policy, VectorCert, decrease, split_query
from .domain import query_box, reach_bounds, vector_property
from .model import Platoon, policy_input


def sample_box(pl: Platoon, idx: np.ndarray, delta: np.ndarray | None, gen: torch.Generator) -> torch.Tensor:
    """Queries z [B, Q_DIM] uniform on each follower's query box, projected onto the couplings x + delta in B."""
    boxes = [query_box(pl, i, delta) for i in range(pl.n)]
    lo = torch.as_tensor(np.stack([boxes[i][0] for i in idx]))
    hi = torch.as_tensor(np.stack([boxes[i][1] for i in idx]))
    z = lo + (hi - lo) * torch.rand(lo.shape, generator=gen, dtype=torch.float64)
    return project(pl, z, hi)


def project(pl: Platoon, z: torch.Tensor, hi: torch.Tensor) -> torch.Tensor:
    """Clamp into the query box and move delta so that x + delta stays in B (x_p likewise)."""
    z = torch.maximum(torch.minimum(z, hi), -hi)
    b = torch.tensor(pl.box, dtype=z.dtype)
    z = z.clone()
    for a in (0, 4):
        z[:, a + 2:a + 4] = torch.clamp(z[:, a:a + 2] + z[:, a + 2:a + 4], -b, b) - z[:, a:a + 2]
    return z


def boundary_values(V: Cert, box: tuple[float, ...], n: int, gen: torch.Generator) -> torch.Tensor:
    """V on n uniform samples of the boundary of the box (min: estimate of c_0, max: of c_1)."""
    b = torch.tensor(box, dtype=torch.float64)
    x = (2 * torch.rand(n, len(box), generator=gen, dtype=torch.float64) - 1) * b
    face = torch.randint(len(box), (n,), generator=gen)
    x[torch.arange(n), face] = b[face] * torch.sign(torch.randn(n, generator=gen, dtype=torch.float64))
    return V(x)


def falsify(vc: VectorCert, policy: Policy | None, pl: Platoon, delta, c_0: float, n: int, steps: int,
            gen: torch.Generator) -> tuple[np.ndarray, torch.Tensor, torch.Tensor]:
    """Projected gradient ascent on G_i from random starts inside the level set; returns (idx, z, G) of the final
    points (G = -inf where a point left the level set {level <= c_0})."""
    idx = torch.randint(pl.n, (n,), generator=gen).numpy()
    hi = torch.as_tensor(np.stack([query_box(pl, i, delta)[1] for i in idx]))
    z = sample_box(pl, idx, delta, gen)
    for _ in range(steps):
        z.requires_grad_(True)
        G, level = decrease(vc, policy, pl, idx, z, c_0)
        obj = G - 10.0 * torch.relu(level - c_0)
        (g,) = torch.autograd.grad(obj.sum(), z)
        z = project(pl, z.detach() + 0.02 * hi * torch.sign(g), hi)
    G, level = decrease(vc, policy, pl, idx, z, c_0)
    return idx, z.detach(), torch.where(level <= c_0, G, torch.full_like(G, -np.inf)).detach()


def train_vector(pl: Platoon, vc: VectorCert, policy: Policy, learner: LearnerParams, p: CegisParams, reach: bool,
                 gen: torch.Generator, log: Log) -> dict[str, float]:
    """CEGIS on the reachability-constrained (``reach``) or full delay domain, training ``vc`` and ``policy`` in
    place: ``p.rounds`` rounds of ``p.steps_per_round`` Adam steps on L, each followed by verifier calls."""
    opt = torch.optim.Adam([*vc.parameters(), *policy.parameters()], lr=learner.lr)
    cex_idx, cex_z = np.zeros(0, int), torch.zeros(0, Q_DIM, dtype=torch.float64)
    n_cex, step_no, c_0 = [], 0, 1.0
    for rnd in range(p.rounds):
        delta = reach_bounds(policy, pl) if reach else None
        for _ in range(p.steps_per_round):
            vb = [boundary_values(V, pl.box, 2048, gen) for V in vc.V]
            c_0 = p.c0_safety * min(float(v.detach().min()) for v in vb)  # sampled min overestimates c_0
            loss_shape = sum(v.max() / v.min() for v in vb)
            idx = torch.randint(pl.n, (learner.batch,), generator=gen).numpy()
            z = sample_box(pl, idx, delta, gen)
            if len(cex_idx):
                idx, z = np.concatenate([idx, cex_idx]), torch.cat([z, cex_z])
            G, level = decrease(vc, policy, pl, idx, z, c_0)
            inside = level.detach() <= c_0
            loss_dec = (torch.relu(G + learner.margin * c_0) * inside).sum() / inside.sum().clamp(min=1)
            cav = torch.as_tensor(pl.is_cav[idx])
            _, xd, _, _, _ = split_query(z)
            loss_imit = (policy(policy_input(pl, xd)).squeeze(-1) ** 2 * cav).mean()
            loss = (loss_dec + p.lambda_imit * loss_imit + learner.lambda_gamma * vc.gamma().sum()
                    + p.lambda_shape * loss_shape)
            opt.zero_grad()
            loss.backward()
            opt.step()
            log("loss", float(loss.detach()), step_no)
            log("violation_rate", float(((G > 0) & inside).float().sum() / inside.sum().clamp(min=1)), step_no)
            step_no += 1
        # verifier + falsifier: counterexamples join the training set
        delta = reach_bounds(policy, pl) if reach else None
        new = []
        for i in range(rnd % pl.n, pl.n, max(1, pl.n // p.verify_per_round)):
            prop = vector_property(vc, policy, pl, i, delta, c_0)
            res = bab.verify(prop, max_cells=p.cells, max_milp=0)
            new += [(i, z) for z in res.counterexamples[: p.keep]]
        fi, fz, fG = falsify(vc, policy, pl, delta, c_0, 512, 20, gen)
        bad = torch.nonzero(fG > 0).flatten()[: p.keep]
        new += [(int(fi[k]), fz[k].numpy()) for k in bad]
        n_cex.append(len(new))
        log("cegis_counterexamples", len(new), rnd)
        if new:
            cex_idx = np.concatenate([cex_idx, [i for i, _ in new]])
            cex_z = torch.cat([cex_z, torch.as_tensor(np.stack([z for _, z in new]))])
    return {"final_loss": float(loss.detach()), "cegis_counterexamples_last": n_cex[-1],
            "cegis_counterexamples_total": int(sum(n_cex)), "c0_estimate": c_0}
