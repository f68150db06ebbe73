"""The platoon's control ladder above the nominal CAV law: its gains retuned for the LQR's cost (``tune_gains``) and,
on top, the LQR of the delay-augmented platoon (the networks' bound, networks/control.py, with the CAVs'
accelerations as the inputs and the HDVs' delayed OVM laws inside the plant). The uncertified neural controller
(uncertified.py) sits between them. Every rung is rolled out through ``model.step`` (``rollout``).

Plant (``model.step`` with the CAV law set to 0 and the OVM unclipped; X = (e_s1, e_v1, ..., e_sN, e_vN), c the CAVs'
acceleration commands):

    X(k+1) = Ax X(k) + Ad X(k - tau) + B c(k) + (the disturbances w and the leader's velocity error)      (``plant``)

A centralised controller with the CAVs' own tau-step information delay decides c(k + tau) from X up to time k (the
delay-augmented state Z of ``networks.control.Augmented``). Weights by Bryson's rule (Bryson & Ho, Applied Optimal
Control, 1975, Sec. 5.4: each weight the inverse square of the largest acceptable value): the state box for the
errors, the nominal CAV law's largest command on that box for the accelerations,

    stage cost  sum_i (e_s,i / S)^2 + (e_v,i / E)^2 + sum_CAV (c_j / c_max)^2,   c_max = k_s S + (k_v + k_d) E,

i.e. the uncertified controller's training objective (``uncertified.train_uncertified``) plus an effort term that lets
the LQR command no more than the nominal law would at the box's corner. Solved in the scaled coordinates
X~ = X / (S, E), c~ = c / c_max, where the stage cost is |X~|^2 + |c~|^2 (``networks.control.lqr`` with effort 1).
Among causal controllers with this information it minimises the expected cost under zero-mean i.i.d. disturbances;
the leader's speed dip of the closed-loop scenarios is a deterministic input it does not see, so on those scenarios
it is the strongest rung of the ladder, not a per-scenario bound. The retuned gains keep the nominal law's
decentralised structure (own spacing, own and predecessor velocity, read tau steps old) and minimise the same cost as
a sample average over training scenarios drawn apart from the held-out ones.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np
import torch

from ..networks.control import Lqr, augment, lqr
from .model import Platoon, cav_nominal, step


def c_max(pl: Platoon) -> float:
    """The nominal CAV law's largest |command| on the state box: |k_s| S + |k_v + k_d| E."""
    ks, kv, kd = pl.gains
    return abs(ks) * pl.box[0] + abs(kv + kd) * pl.box[1]


def without_cav_law(pl: Platoon) -> Platoon:
    """The platoon with the CAV gains set to 0: ``model.step`` then accelerates a CAV by exactly the command added to
    its w (no residual is passed), the HDVs by their OVM."""
    return dataclasses.replace(pl, gains=(0.0, 0.0, 0.0))


def plant(pl: Platoon) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(Ax, Ad, B) [2N x 2N, 2N x 2N, 2N x n_cav] of X(k+1) = Ax X(k) + Ad X(k - tau) + B c(k) (leader at its
    cruise speed, w = 0), read column by column off ``model.step`` of the platoon with the CAV gains set to 0 (the
    unclipped OVM is linear, and with zero gains a CAV's acceleration is exactly the command added to its w)."""
    n, cav = pl.n, np.flatnonzero(pl.is_cav)
    free = without_cav_law(pl)
    idx = np.arange(n)
    unit = torch.eye(2 * n, dtype=torch.float64).reshape(2 * n, n, 2)
    zero = torch.zeros_like(unit)

    def pred(x: torch.Tensor) -> torch.Tensor:  # the predecessor's state of every follower (the leader's is 0)
        return torch.cat([torch.zeros_like(x[:, :1]), x[:, :-1]], 1)

    no_w = torch.zeros(2 * n, n, dtype=torch.float64)
    with torch.no_grad():
        Ax = step(free, idx, unit, zero, pred(unit), zero, no_w, None).reshape(2 * n, 2 * n).T.numpy()
        Ad = step(free, idx, zero, unit, zero, pred(unit), no_w, None).reshape(2 * n, 2 * n).T.numpy()
        c = torch.zeros(len(cav), n, dtype=torch.float64)
        c[np.arange(len(cav)), cav] = 1.0
        z = torch.zeros(len(cav), n, 2, dtype=torch.float64)
        B = step(free, idx, z, z, z, z, c, None).reshape(len(cav), 2 * n).T.numpy()
    return Ax, Ad, B


def scale(pl: Platoon) -> np.ndarray:
    """[2N] the state's Bryson scale (S, E) per follower."""
    return np.tile(np.asarray(pl.box, dtype=np.float64), pl.n)


def platoon_lqr(pl: Platoon) -> Lqr:
    """The LQR (``networks.control.lqr``, effort 1) of the delay-augmented platoon in Bryson's scaled coordinates:
    Ax~ = D Ax D^-1, Ad~ = D Ad D^-1, B~ = D B c_max with D = diag(1 / scale)."""
    Ax, Ad, B = plant(pl)
    d = 1.0 / scale(pl)
    return lqr(augment(d[:, None] * Ax / d[None, :], d[:, None] * Ad / d[None, :], d[:, None] * B * c_max(pl), pl.tau),
               1.0)


Command = Callable[[int, list[torch.Tensor]], torch.Tensor]  # (k, histories X(k - tau), ..., X(k)) -> c(k)


def rollout(pl: Platoon, command: Command, x0: torch.Tensor, w: torch.Tensor, lead_v: torch.Tensor,
            clip: bool = True) -> torch.Tensor:
    """``model.simulate`` (same arguments, trajectory [T + 1, ..., N, 2]; x0 [..., N, 2] and w [T, ..., N] may carry
    a batch of scenarios) with the CAVs driven by ``command``: the HDVs follow their delayed OVM, each CAV
    accelerates by its entry of command(k, hist) [..., n_cav], hist[0] = X(k - tau), ..., hist[-1] = X(k)."""
    T, tau = w.shape[0], pl.tau
    idx, cav = np.arange(pl.n), torch.as_tensor(np.flatnonzero(pl.is_cav))
    free = without_cav_law(pl)
    lead = torch.cat([lead_v[:1].expand(tau), lead_v])
    hist = [x0.clone() for _ in range(tau + 1)]
    traj = [x0.clone()]
    zero = torch.zeros_like(x0[..., :1, 0])
    for k in range(T):
        x, xd = hist[-1], hist[0]
        u = torch.zeros_like(x0[..., 0]).index_add(-1, cav, command(k, hist))
        xp = torch.cat([torch.stack([zero, lead[k + tau].expand_as(zero)], -1), x[..., :-1, :]], -2)
        xpd = torch.cat([torch.stack([zero, lead[k].expand_as(zero)], -1), xd[..., :-1, :]], -2)
        hist.append(step(free, idx, x, xd, xp, xpd, w[k] + u, None, clip))
        hist.pop(0)
        traj.append(hist[-1])
    return torch.stack(traj)


def lqr_command(pl: Platoon, law: Lqr, x0: torch.Tensor) -> Command:
    """The LQR's commands for one scenario from the constant pre-history x0 [N, 2]: at step k it decides
    d(k) = -K Z~(k) = c~(k + tau), Z~(k) the scaled X(k), ..., X(k - tau) and the pending commands, and applies the
    one decided tau steps earlier; the commands pending at time 0 are ``Lqr.initial``'s."""
    aug, d, top = law.aug, torch.as_tensor(1.0 / scale(pl)), c_max(pl)
    K = torch.as_tensor(law.K)
    Z0 = law.initial((x0.reshape(1, -1) * d).numpy())[0]
    pending = [torch.as_tensor(Z0[aug.u_slice(a)]) * top for a in range(pl.tau)]  # c(k), ..., c(k + tau - 1)

    def command(k: int, hist: list[torch.Tensor]) -> torch.Tensor:
        Z = torch.cat([h.reshape(-1) * d for h in reversed(hist)] + [c / top for c in pending])
        pending.append(-(K @ Z) * top)
        return pending.pop(0)

    return command


def simulate_lqr(pl: Platoon, law: Lqr, x0: torch.Tensor, w: torch.Tensor, lead_v: torch.Tensor,
                 clip: bool = True) -> torch.Tensor:
    """``rollout`` of one scenario under the LQR (``lqr_command``)."""
    return rollout(pl, lqr_command(pl, law, x0), x0, w, lead_v, clip)


def gains_command(pl: Platoon, gains: torch.Tensor) -> Command:
    """The nominal CAV law (``model.cav_nominal``) with the gains (k_s, k_v, k_d) = ``gains`` (differentiable),
    from the delayed states."""
    cav, law = np.flatnonzero(pl.is_cav), dataclasses.replace(pl, gains=tuple(gains))

    def command(k: int, hist: list[torch.Tensor]) -> torch.Tensor:
        xd = hist[0]  # a CAV is never the first follower (cav_period >= 2): its predecessor is follower cav - 1
        return cav_nominal(law, xd[..., cav, :], xd[..., cav - 1, 1])

    return command


def bryson_cost(pl: Platoon, traj: torch.Tensor, command: torch.Tensor) -> torch.Tensor:
    """mean over steps (and scenarios) of sum_i (e_s,i / S)^2 + (e_v,i / E)^2 + sum_CAV (c_j / c_max)^2: the LQR's
    stage cost (``platoon_lqr``) as a sample average."""
    box = torch.tensor(pl.box, dtype=traj.dtype)
    return ((traj / box) ** 2).sum((-1, -2)).mean() + ((command / c_max(pl)) ** 2).sum(-1).mean()


def tune_gains(pl: Platoon, steps: int, lr: float, lead: torch.Tensor, w: torch.Tensor) -> tuple[float, ...]:
    """The retuned-gains rung: Adam on log (k_s, k_v, k_d), from the nominal gains, minimising ``bryson_cost`` of
    the (clipped) closed loop from rest on the training scenarios (leader dip ``lead`` [T], disturbances w [T, S, N]),
    one batched rollout per step. Returns the tuned gains."""
    logs = torch.log(torch.tensor(pl.gains, dtype=torch.float64)).requires_grad_(True)
    opt = torch.optim.Adam([logs], lr=lr)
    x0 = torch.zeros(w.shape[1], pl.n, 2, dtype=torch.float64)
    for _ in range(steps):
        commands: list[torch.Tensor] = []
        law = gains_command(pl, logs.exp())

        def record(k: int, hist: list[torch.Tensor], law: Command = law) -> torch.Tensor:
            commands.append(law(k, hist))
            return commands[-1]

        cost = bryson_cost(pl, rollout(pl, record, x0, w, lead), torch.stack(commands))
        opt.zero_grad()
        cost.backward()
        opt.step()
    return tuple(float(g) for g in logs.detach().exp())
