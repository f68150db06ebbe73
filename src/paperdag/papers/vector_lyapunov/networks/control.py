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
* the ladder's bound: the LQR of the delay-augmented ring (``lqr``), the optimal linear state feedback of
  Z(k) = (X(k), ..., X(k - tau), u(k), ..., u(k + tau - 1)) deciding u(k + tau), i.e. a centralised controller with the
  same tau-step information delay as the local feedback; in expected cost it bounds every controller above.
Ladder: nominal -> tuned gains -> LQR bound; all are compared on the same held-out scenarios (i.i.d. disturbances, or
load steps for the systems named in network_control.load_steps: ``scenarios``).
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
from .model import Network, coefficients, degrees, make_network, simulate_network, step_network

GAINS = {"drones": ("kp", "kv"), "microgrid": ("damping",)}  # the controller's parameters among a system's draws
Gains = dict[str, np.ndarray]


def scenarios(net: Network, count: int, horizon: int, gen: torch.Generator,
              load_step_window: float | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """(x0 [S, N, 2], w [T, S, N]): initial states uniform on half the state box (drawn first, so they do not depend
    on the disturbance model), then the disturbances:

    * ``load_step_window`` None: i.i.d. uniform on |w| <= w_bar at every step;
    * else load steps: w_i(k) = P_i 1[k >= k_i], one step per subsystem and scenario, P_i uniform on
      [-w_bar, w_bar] (inside the certified disturbance bound), k_i uniform on the integers 0 .. floor(window T) - 1.
    """
    half_box = 0.5 * torch.tensor(net.box, dtype=torch.float64)
    x0 = (2 * torch.rand(count, net.n, 2, generator=gen, dtype=torch.float64) - 1) * half_box
    if load_step_window is None:
        w = (2 * torch.rand(horizon, count, net.n, generator=gen, dtype=torch.float64) - 1) * net.w_bound
        return x0, w
    size = (2 * torch.rand(count, net.n, generator=gen, dtype=torch.float64) - 1) * net.w_bound
    start = torch.randint(0, max(1, int(load_step_window * horizon)), (count, net.n), generator=gen)
    w = torch.where(torch.arange(horizon)[:, None, None] >= start, size, torch.zeros((), dtype=torch.float64))
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


# ---------------------------------------------------------------------------------------------------------------------
# The ladder's bound: the optimal linear state feedback of the delay-augmented ring (LQR).


def plant(net: Network, p: NetworkParams, draws: Mapping[str, Sequence[float]]) -> Network:
    """The ring without the controller: ``net`` with the controller's gains (``GAINS``) set to 0, so that the ring
    with any controller u is X(k+1) = plant step + dt e_v u(k) (``model.coefficients``: the gains enter a1, b1 only
    through the feedback term u = ``feedback``, the consensus coupling and the physics stay)."""
    draws = {k: np.asarray(v, dtype=np.float64)[:net.n] for k, v in draws.items()}
    zero = {k: np.zeros(net.n) for k in GAINS[net.system]}
    a0, a1, b1 = coefficients(p, net.system, draws | zero, degrees(net.n))
    return dataclasses.replace(net, a0=a0, a1=a1, b1=b1)


def ring_matrices(net: Network) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(Ax, Ad, B) [2N x 2N, 2N x 2N, 2N x N] of the ring step X(k+1) = Ax X(k) + Ad X(k - tau) + B (u(k) + w(k)),
    X = (q_1, v_1, ..., q_N, v_N), read column by column from ``model.step_network`` (linear in X, X^d, w)."""
    n = net.n
    eye = torch.eye(2 * n, dtype=torch.float64).reshape(2 * n, n, 2)
    zx, zw = torch.zeros(2 * n, n, 2, dtype=torch.float64), torch.zeros(2 * n, n, dtype=torch.float64)
    with torch.no_grad():
        Ax = step_network(net, eye, zx, zw).reshape(2 * n, 2 * n).T.numpy()
        Ad = step_network(net, zx, eye, zw).reshape(2 * n, 2 * n).T.numpy()
        B = step_network(net, zx[:n], zx[:n], torch.eye(n, dtype=torch.float64)).reshape(n, 2 * n).T.numpy()
    return Ax, Ad, B


@dataclasses.dataclass(frozen=True)
class Augmented:
    """The delay-augmented ring at decision time k: Z(k) = (X(k), X(k-1), ..., X(k-tau), u(k), ..., u(k+tau-1)),
    decision d(k) = u(k + tau) (the input a controller that reads states tau steps old applies tau steps later):

        Z(k+1) = A Z(k) + Bd d(k) + Bw w(k),
        X(k+1) = Ax X(k) + Ad X(k - tau) + B (u(k) + w(k)),  the X history and the pending inputs shift by one.

    ``nx`` = 2N, ``nu`` = N; Z has (tau + 1) nx + tau nu entries."""

    A: np.ndarray
    Bd: np.ndarray
    Bw: np.ndarray
    nx: int
    nu: int
    tau: int

    def x_slice(self, lag: int) -> slice:
        """X(k - lag) inside Z."""
        return slice(lag * self.nx, (lag + 1) * self.nx)

    def u_slice(self, ahead: int) -> slice:
        """u(k + ahead) inside Z (0 <= ahead < tau)."""
        start = (self.tau + 1) * self.nx + ahead * self.nu
        return slice(start, start + self.nu)


def augment(Ax: np.ndarray, Ad: np.ndarray, B: np.ndarray, tau: int) -> Augmented:
    """``Augmented`` of the ring X(k+1) = Ax X(k) + Ad X(k - tau) + B (u(k) + w(k)) (tau >= 1)."""
    nx, nu = B.shape
    aug = Augmented(np.zeros((0, 0)), np.zeros((0, 0)), np.zeros((0, 0)), nx, nu, tau)
    size = (tau + 1) * nx + tau * nu
    A, Bd, Bw = np.zeros((size, size)), np.zeros((size, nu)), np.zeros((size, nu))
    x0, xd = aug.x_slice(0), aug.x_slice(tau)
    A[x0, x0], A[x0, xd], A[x0, aug.u_slice(0)], Bw[x0] = Ax, Ad, B, B
    for lag in range(1, tau + 1):  # X(k+1-lag) <- X(k-(lag-1))
        A[aug.x_slice(lag), aug.x_slice(lag - 1)] = np.eye(nx)
    for ahead in range(tau - 1):  # u(k+1+ahead) <- pending u(k+ahead+1)
        A[aug.u_slice(ahead), aug.u_slice(ahead + 1)] = np.eye(nu)
    Bd[aug.u_slice(tau - 1)] = np.eye(nu)
    return dataclasses.replace(aug, A=A, Bd=Bd, Bw=Bw)


@dataclasses.dataclass(frozen=True)
class Lqr:
    """The LQR of the delay-augmented ring for J's weights: d(k) = -K Z(k), P the DARE solution. The infinite-horizon
    cost of the undisturbed loop from Z(0) is sum_k |X(k)|^2 + r |u(k)|^2 = Z0' P Z0 + r sum_{k < tau} |u(k)|^2
    (``cost_to_go``): the stage cost |X(k)|^2 + r |d(k)|^2 charges u(k + tau) at k, so the tau inputs pending at
    time 0 are charged apart."""

    aug: Augmented
    K: np.ndarray
    P: np.ndarray
    effort: float

    def cost_to_go(self, Z0: np.ndarray) -> np.ndarray:
        """Z0' P Z0 + r |pending inputs|^2 per row of Z0 [S, size]."""
        pend = Z0[:, (self.aug.tau + 1) * self.aug.nx:]
        return np.einsum("si,ij,sj->s", Z0, self.P, Z0) + self.effort * (pend ** 2).sum(-1)

    def initial(self, x0: np.ndarray) -> np.ndarray:
        """Z(0) [S, size] behind the constant pre-history x0 [S, 2N]: X history = x0, and the tau pending inputs
        u(0), ..., u(tau-1) the minimisers of ``cost_to_go`` given it (they are functions of x0, known from time
        -tau on, so a controller reading states tau steps old can apply them)."""
        aug, S = self.aug, x0.shape[0]
        Z = np.zeros((S, self.P.shape[0]))
        for lag in range(aug.tau + 1):
            Z[:, aug.x_slice(lag)] = x0
        m = slice((aug.tau + 1) * aug.nx, None)
        H = self.P[m, m] + self.effort * np.eye(aug.tau * aug.nu)
        Z[:, m] = -np.linalg.solve(H, self.P[m, :m.start] @ Z[:, :m.start].T).T
        return Z


def lqr(aug: Augmented, effort: float) -> Lqr:
    """The discrete LQR of ``aug`` with stage cost |X(k)|^2 + r |d(k)|^2 (r = ``effort`` > 0): P solves the DARE
    P = A'PA - A'PBd (r I + Bd'PBd)^{-1} Bd'PA + Q, Q = I on X(k) and 0 elsewhere (scipy.linalg.solve_discrete_are),
    K = (r I + Bd'PBd)^{-1} Bd'PA. Among all causal controllers whose u(k) reads the ring's states up to k - tau
    (centralised, any structure) it minimises the expected infinite-horizon cost under zero-mean i.i.d.
    disturbances: the local feedback of every controller of the study is one of them, so its cost bounds theirs
    from below (in expectation, not per scenario)."""
    from scipy.linalg import solve_discrete_are

    Q = np.zeros_like(aug.A)
    Q[aug.x_slice(0), aug.x_slice(0)] = np.eye(aug.nx)
    R = effort * np.eye(aug.nu)
    P = solve_discrete_are(aug.A, aug.Bd, Q, R)
    K = np.linalg.solve(R + aug.Bd.T @ P @ aug.Bd, aug.Bd.T @ P @ aug.A)
    return Lqr(aug, K, P, effort)


def lqr_of(net: Network, p: NetworkParams, draws: Mapping[str, Sequence[float]], effort: float) -> Lqr:
    """The LQR bound (``lqr``) of the ring ``net`` (its plant, ``plant``) for J's effort weight."""
    return lqr(augment(*ring_matrices(plant(net, p, draws)), net.tau), effort)


def simulate_augmented(aug: Augmented, Z0: np.ndarray, w: np.ndarray, K: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(X [T + 1, S, 2N], u [T + 1, S, N]) of the augmented loop Z(k+1) = A Z + Bd d + Bw w(k), d(k) = -K Z(k), from
    Z0 [S, size] under w [T, S, N]; u(k) is the first pending input of Z(k) (u(T) included, as ``cost`` counts it)."""
    Z, xs, us = Z0, [], []
    for k in range(w.shape[0] + 1):
        xs.append(Z[:, aug.x_slice(0)])
        us.append(Z[:, aug.u_slice(0)])
        if k < w.shape[0]:
            Z = Z @ (aug.A - aug.Bd @ K).T + w[k] @ aug.Bw.T
    return np.stack(xs), np.stack(us)


def lqr_cost(net: Network, p: NetworkParams, draws: Mapping[str, Sequence[float]], K: np.ndarray, x0: torch.Tensor,
             w: torch.Tensor, effort: float) -> dict[str, float]:
    """J, RMS q and RMS v (as ``cost``) of the ring under the LQR d = -K Z on the scenarios (x0 [S, N, 2],
    w [T, S, N]), from the constant pre-history x0 and the initial pending inputs of ``Lqr.initial``."""
    law = lqr_of(net, p, draws, effort)
    law = dataclasses.replace(law, K=np.asarray(K, dtype=np.float64))
    X, u = simulate_augmented(law.aug, law.initial(x0.reshape(x0.shape[0], -1).numpy()), w.numpy(), law.K)
    q2, v2 = float((X[..., 0::2] ** 2).mean()), float((X[..., 1::2] ** 2).mean())
    return {"J": q2 + v2 + effort * float((u ** 2).mean()), "rms_q": q2 ** 0.5, "rms_v": v2 ** 0.5}
