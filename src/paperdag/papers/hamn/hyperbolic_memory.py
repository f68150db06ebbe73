"""HAMN: modern associative memory on the Poincare ball B_c = {x : c ||x||^2 < 1} (curvature -c).

Queries and memories are points of the ball (the Poincare embedding itself; queries.py draws a query as a wrapped
normal around a stored point). The energy is built on the Minkowski inner product
<X, Y>_L = -X_0 Y_0 + sum_k X_k Y_k of the hyperboloid images
    L(x) = (1 + c ||x||^2, 2 sqrt c x) / (sqrt c (1 - c ||x||^2)),   <L(x), L(x)>_L = -1/c,
for which c <L(x), L(y)>_L = -cosh(sqrt c d_c(x, y)). With O = L(0) the origin, the regularised energy is
    E(xi) = -(1/beta) log sum_i exp(beta c <L(p_i), L(xi)>_L) + lam (-c <L(0), L(xi)>_L - 1),
(the regulariser lam (cosh(sqrt c d_c(0, xi)) - 1) pulls towards the origin, as 1/2 ||xi||^2 does in the Euclidean
network). Retrieval is Riemannian gradient descent with exponential-map updates,
    xi <- exp_xi(-t grad_R E(xi)),   grad_R E = ((1 - c ||xi||^2)^2 / 4) grad E   (geoopt's egrad2rgrad),
with a curvature-aware step: on the hyperboloid Hess cosh(sqrt c d(., p)) = c cosh(sqrt c d(., p)) g, so the
energy's Hessian is about c (sum_i w_i cosh(sqrt c d_i) + lam cosh(sqrt c d_0)) g with w = softmax(beta c <P, Xi>_L),
and the step starts at t = step_size / that curvature (a Newton step for one memory: it moves by tanh(d) < 1
instead of sinh(d)). t is then halved per query until the Armijo condition
E(xi_new) <= E(xi) - armijo t ||grad_R E||_xi^2 holds (a query with no admissible step stays put), so every update
decreases the energy. The iterates are formed without geoopt's projection onto the ball, so that the on-manifold
check (sqrt c ||xi|| < 1 for every iterate) can fail. The retrieved memory is the one nearest to the
final state in the hyperbolic distance, i.e. the largest c <L(p_i), L(xi)>_L = -cosh(sqrt c d) (geoopt's dist clamps
artanh at 1 - 1e-7 and saturates near d = 16 / sqrt c, too close for leaves near the boundary). Each state stops
descending once it moves by no more than STILL in a step, max_k |xi_new,k - xi_k| <= STILL (every later step would
move it less: its readout is final); the others go on. Steps are per state (the energy, its gradient, the step and
its backtracking read only that state), so a stopped state is what running every state to the step at which all
have stopped would give, to within the STILL moves it would still make.
"""

from __future__ import annotations

from dataclasses import dataclass

import geoopt
import torch

STILL = 1e-12  # largest coordinate move of a state in a step at or below which that state's descent has converged


def poincare_ball(c: float) -> geoopt.PoincareBall:
    """geoopt's ball of curvature -c, with c held in float64 (geoopt's default float32 c loses ~1e-5 in log_0 near
    the boundary for c like 0.5)."""
    return geoopt.PoincareBall(c=torch.tensor(c, dtype=torch.float64))


def lorentz_lift(x: torch.Tensor, c: float) -> torch.Tensor:
    """L(x) = (1 + c ||x||^2, 2 sqrt c x) / (sqrt c (1 - c ||x||^2)): the Poincare ball onto the hyperboloid."""
    sq = c * (x**2).sum(dim=-1, keepdim=True)
    return torch.cat([1 + sq, 2 * c**0.5 * x], dim=-1) / (c**0.5 * (1 - sq))


def minkowski(X: torch.Tensor, Y: torch.Tensor) -> torch.Tensor:
    """<X_i, Y_j>_L = -X_i0 Y_j0 + sum_k X_ik Y_jk for all pairs (rows of X against rows of Y)."""
    return X[:, 1:] @ Y[:, 1:].T - X[:, :1] @ Y[:, :1].T


def energy_terms(xi: torch.Tensor, memories: torch.Tensor, c: float) -> tuple[torch.Tensor, torch.Tensor]:
    """(c <L(p_i), L(xi)>_L = -cosh(sqrt c d(p_i, xi)) for all pairs, -c <L(0), L(xi)>_L = cosh(sqrt c d(0, xi)))."""
    lifted = lorentz_lift(xi, c)
    return c * minkowski(lifted, lorentz_lift(memories, c)), c**0.5 * lifted[:, 0]


def hamn_energy(xi: torch.Tensor, memories: torch.Tensor, beta: float, lam: float, c: float) -> torch.Tensor:
    """E(xi) per state: -(1/beta) logsumexp_i(beta c <L(p_i), L(xi)>_L) + lam (-c <L(0), L(xi)>_L - 1)."""
    return _energy(*energy_terms(xi, memories, c), beta, lam)


def _energy(scores: torch.Tensor, cosh0: torch.Tensor, beta: float, lam: float) -> torch.Tensor:
    return -torch.logsumexp(beta * scores, dim=1) / beta + lam * (cosh0 - 1)


def curvature(scores: torch.Tensor, cosh0: torch.Tensor, beta: float, lam: float, c: float) -> torch.Tensor:
    """c (sum_i w_i cosh(sqrt c d_i) + lam cosh(sqrt c d_0)), w = softmax(beta c <P, Xi>_L): the energy's Hessian
    scale at xi, without the softmax-mixing term (which the Armijo backtracking accounts for)."""
    return c * (-(torch.softmax(beta * scores, dim=1) * scores).sum(dim=1) + lam * cosh0)


@dataclass(frozen=True)
class Retrieval:
    """Final states, the retrieved memory per query, the largest sqrt(c) ||xi|| over every iterate, and the number of
    steps each state took (the last one moved it by no more than STILL, or it is the step budget)."""

    states: torch.Tensor
    retrieved: torch.Tensor
    max_norm: torch.Tensor
    steps: torch.Tensor


def hamn_step(ball: geoopt.PoincareBall, xi: torch.Tensor, memories: torch.Tensor, beta: float, lam: float,
              step_size: float, armijo: float, backtracks: int) -> torch.Tensor:
    """One Riemannian gradient step exp_xi(-t grad_R E) per state, t backtracked (Armijo) from
    step_size / curvature(xi)."""
    c = float(ball.c)
    xi = xi.detach().requires_grad_(True)
    scores, cosh0 = energy_terms(xi, memories, c)
    energy = _energy(scores, cosh0, beta, lam)
    (egrad,) = torch.autograd.grad(energy.sum(), xi)
    xi, energy = xi.detach(), energy.detach()
    rgrad = ball.egrad2rgrad(xi, egrad)
    sq_norm = ball.inner(xi, rgrad, rgrad, keepdim=True).squeeze(-1)  # keepdim=False broadcasts wrongly
    t = step_size / curvature(scores.detach(), cosh0.detach(), beta, lam, c)
    new, pending = xi.clone(), torch.arange(len(xi), device=xi.device)
    with torch.no_grad():
        for _ in range(backtracks):  # only the queries still without an admissible step are re-evaluated
            cand = ball.expmap(xi[pending], -t[pending, None] * rgrad[pending], project=False)
            ok = hamn_energy(cand, memories, beta, lam, c) <= energy[pending] - armijo * t[pending] * sq_norm[pending]
            new[pending[ok]] = cand[ok]
            pending = pending[~ok]
            t[pending] /= 2
            if len(pending) == 0:
                break
    return new


def hamn_retrieve(queries: torch.Tensor, memories: torch.Tensor, beta: float, lam: float, c: float, steps: int,
                  step_size: float, armijo: float, backtracks: int) -> Retrieval:
    """Descend E from the queries (points of the ball) for at most ``steps`` steps, each state until its step moves
    it by no more than STILL (max_k |xi_new,k - xi_k|), then read out the nearest memory."""
    ball = poincare_ball(c)
    xi = queries.clone()
    max_norm = c**0.5 * xi.norm(dim=1)
    taken = torch.zeros(len(xi), dtype=torch.long, device=xi.device)
    active = torch.arange(len(xi), device=xi.device)
    for _ in range(steps):
        if len(active) == 0:
            break
        old = xi[active]
        new = hamn_step(ball, old, memories, beta, lam, step_size, armijo, backtracks)
        xi[active] = new
        max_norm[active] = torch.maximum(max_norm[active], c**0.5 * new.norm(dim=1))
        taken[active] += 1
        active = active[(new - old).abs().amax(dim=1) > STILL]
    return Retrieval(xi, energy_terms(xi, memories, c)[0].argmax(dim=1), max_norm, taken)
