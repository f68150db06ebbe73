"""Control performance on the network rings: the certified controller against an uncertified one tuned for
performance alone (the platoon's comparison, for the drones and the microgrid).

The controller is each subsystem's local feedback on its delayed state, the structure the certificates are verified
for (``GAINS``, ``model.coefficients``): drones u_i = -kp_i q_i^d - kv_i v_i^d, microgrid droop u_i = -(D_i / M_i)
w_i^d. Its performance is the quadratic cost of closed-loop scenarios (``scenarios``: initial states uniform on half
the state box with a constant pre-history, disturbances uniform in |w| <= w_bar):

    J = mean over scenarios, steps k = 0 .. T and subsystems i of  q_i(k)^2 + v_i(k)^2 + r u_i(k)^2      (``cost``)

* uncertified: the gains that minimise the sample average of J over fixed training scenarios, by Adam on the log
  gains through the differentiable simulation, from the nominal gains (``tune``); nothing is certified;
* certified: on the geometric path g(alpha) = g_nominal^(1 - alpha) g_tuned^alpha (``path``), the first alpha of a
  descending list whose vector certificate is proved (CEGIS and the verifier of train_/verify_<system>,
  ``certify_path``); alpha = 0 is the nominal controller.
The three are compared on held-out scenarios.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence

import numpy as np
import torch

from ..params import BudgetParams, NetworkCegisParams, NetworkCertificateParams, NetworkParams
from .cegis import train_network_cert
from .certificate import NetworkCert
from .certify import verify_network
from .model import Network, coefficients, degrees, make_network, simulate_network

GAINS = {"drones": ("kp", "kv"), "microgrid": ("damping",)}  # the controller's parameters among a system's draws
Gains = dict[str, np.ndarray]


def scenarios(net: Network, count: int, horizon: int, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """(x0 [S, N, 2], w [T, S, N]): initial states uniform on half the state box, disturbances uniform on
    |w| <= w_bar."""
    half_box = 0.5 * torch.tensor(net.box, dtype=torch.float64)
    x0 = (2 * torch.rand(count, net.n, 2, generator=gen, dtype=torch.float64) - 1) * half_box
    w = (2 * torch.rand(horizon, count, net.n, generator=gen, dtype=torch.float64) - 1) * net.w_bound
    return x0, w


def feedback(system: str, params: Mapping[str, torch.Tensor], xd: torch.Tensor) -> torch.Tensor:
    """u [..., N], the local feedback's term of v's derivative from the delayed states xd [..., N, 2]."""
    if system == "drones":
        return -(params["kp"] * xd[..., 0] + params["kv"] * xd[..., 1])
    return -params["damping"] / params["inertia"] * xd[..., 1]


def cost(net: Network, p: NetworkParams, draws: Mapping[str, Sequence[float]], gains: Mapping[str, torch.Tensor],
         x0: torch.Tensor, w: torch.Tensor, effort: float) -> dict[str, torch.Tensor]:
    """J (above), RMS q and RMS v of the ring ``net`` with the controller ``gains`` ([N] each, differentiable) in
    place of its own, over the scenarios (x0, w) from a constant pre-history."""
    n, tau = net.n, net.tau
    params = {k: torch.as_tensor(np.asarray(v)[:n], dtype=torch.float64) for k, v in draws.items()} | dict(gains)
    a0, a1, b1 = coefficients(p, net.system, params, torch.as_tensor(degrees(n)))
    traj = simulate_network(dataclasses.replace(net, a0=a0, a1=a1, b1=b1), x0, w)  # [T + 1, S, N, 2]
    delayed = torch.cat([traj[:1].expand(tau, *traj.shape[1:]), traj[:-tau]])
    u = feedback(net.system, params, delayed)
    q2, v2 = traj[..., 0].pow(2).mean(), traj[..., 1].pow(2).mean()
    return {"J": q2 + v2 + effort * u.pow(2).mean(), "rms_q": q2.sqrt(), "rms_v": v2.sqrt()}


def tune(net: Network, p: NetworkParams, draws: Mapping[str, Sequence[float]], x0: torch.Tensor, w: torch.Tensor,
         effort: float, steps: int, lr: float, log: Callable[[float, int], None]) -> Gains:
    """The uncertified controller: Adam on the log gains minimising ``cost``'s J on the scenarios (x0, w), from the
    nominal gains of ``draws``."""
    logs = {k: torch.log(torch.as_tensor(np.asarray(draws[k])[:net.n], dtype=torch.float64)).requires_grad_(True)
            for k in GAINS[net.system]}
    opt = torch.optim.Adam(list(logs.values()), lr=lr)
    for step in range(steps):
        J = cost(net, p, draws, {k: v.exp() for k, v in logs.items()}, x0, w, effort)["J"]
        opt.zero_grad()
        J.backward()
        opt.step()
        log(float(J.detach()), step)
    return {k: v.detach().exp().numpy() for k, v in logs.items()}


def path(nominal: Gains, tuned: Gains, alpha: float) -> Gains:
    """g(alpha) = g_nominal^(1 - alpha) g_tuned^alpha, gain by gain."""
    return {k: nominal[k] ** (1 - alpha) * tuned[k] ** alpha for k in nominal}


@dataclasses.dataclass(frozen=True)
class Certified:
    """The first controller on the path that is proved: its alpha, gains, certificate, ring and verification
    result (None where no alpha is proved), and one row per alpha tried."""

    alpha: float | None
    gains: Gains | None
    cert: NetworkCert | None
    net: Network | None
    result: dict | None
    attempts: list[dict]


def certify_path(p: NetworkParams, dt: float, system: str, n: int, tau: int, draws: Mapping[str, Sequence[float]],
                 nominal: Gains, tuned: Gains, alphas: Sequence[float], arch: NetworkCertificateParams,
                 cegis: NetworkCegisParams, budget: BudgetParams, gen: torch.Generator,
                 log: Callable[[str, float, int], None]) -> Certified:
    """Train (CEGIS) and verify the vector certificate of g(alpha) on the ring of n subsystems at delay tau, alpha by
    alpha in the given (descending) order, until one is proved."""
    attempts = []
    for alpha in alphas:
        gains = path(nominal, tuned, alpha)
        net = make_network(p, dt, system, n, tau, dict(draws) | gains)
        nc, res = train_network_cert(net, arch, cegis, True, gen, log, f"{system}_control_alpha{alpha:g}")
        result = verify_network(nc, net, True, budget)
        per = result["summary"]["per_subsystem"]
        attempts.append({"alpha": alpha, "verified": result["summary"]["verified"], "n": n,
                         "refuted": sum(q["refuted_cells"] > 0 for q in per),
                         "unknown": sum(q["unknown_cells"] > 0 and q["refuted_cells"] == 0 for q in per),
                         "cegis_rounds_run": res["cegis_rounds_run"]})
        if result["summary"]["verified"]:
            return Certified(alpha, gains, nc, net, result, attempts)
    return Certified(None, None, None, None, None, attempts)
