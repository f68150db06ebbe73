"""Scripted controllers of the competence ladder: hand-written policies that use the simulator's equations (envs.py)
and learn nothing. Each maps observations [..., obs_dim] to actions in [-1, 1]^act_dim.

- reacher (velocity control): Cartesian P control through the Jacobian transpose, a = clip(k J(q)^T (target - tip)),
  J = d tip / d q of the 2-link arm; a PD controller's D term has nothing to act on (the action is the joint velocity,
  the arm has no velocity state), so this is the PD controller of this simulator.
- pendulum: energy-based swing-up with a PD catch (Astrom & Furuta 2000, "Swinging up a pendulum by energy control").
  With thddot = c sin th + b u (c = 3 g / 2 l, b = 3 / m l^2) the energy E = thdot^2 / 2 + c cos th obeys
  dE/dt = b u thdot, and the upright rest has E* = c. Outside the catch region the torque pumps energy at full
  strength, u = u_max sign((E* - E) thdot) (thdot = 0 counts as positive); inside it, |wrap(th)| < asin(b u_max / c)
  (where full torque outweighs gravity), u = -(k_p wrap(th) + k_d thdot) with k_p = s c / b (``stiffness`` s times
  the gravity stiffness) and k_d the critical damping of the linearised closed loop, 2 sqrt(b k_p - c) / b.
- detour: the scripted split of prepare's route check from any start: the first half of each batch heads for the
  waypoint (+w, 0), the rest for (-w, 0), at full speed while below the obstacle's centre (y < 0), then for the goal.

``returns`` scores a controller like the methods: the mean return over ``episodes`` episodes per seed whose initial
states come from the methods' evaluation generators (a deterministic controller draws nothing else, so seed i's
episodes start where every method's seed-i evaluation starts).
"""

from __future__ import annotations

import math

import torch

from .envs import SPECS, Detour, Pendulum, Reacher, make_env
from .nets import Generators


def reacher_action(obs: torch.Tensor, gain: float) -> torch.Tensor:
    """clip(gain J(q)^T (target - tip)) from obs = (cos q, sin q, target, tip - target)."""
    cos, sin, err = obs[..., 0:2], obs[..., 2:4], -obs[..., 6:8]
    (l1, l2), c12, s12 = Reacher.links, cos[..., 0] * cos[..., 1] - sin[..., 0] * sin[..., 1], \
        sin[..., 0] * cos[..., 1] + cos[..., 0] * sin[..., 1]
    # J = [[-l1 s1 - l2 s12, -l2 s12], [l1 c1 + l2 c12, l2 c12]]; a = J^T err
    a1 = (-l1 * sin[..., 0] - l2 * s12) * err[..., 0] + (l1 * cos[..., 0] + l2 * c12) * err[..., 1]
    a2 = -l2 * s12 * err[..., 0] + l2 * c12 * err[..., 1]
    return (gain * torch.stack([a1, a2], -1)).clamp(-1.0, 1.0)


def pendulum_action(obs: torch.Tensor, stiffness: float) -> torch.Tensor:
    """Energy pumping outside the catch region, PD inside (module docstring), from obs = (cos th, sin th, thdot / 8),
    as the action u / u_max."""
    e = Pendulum
    c, b, u_max = 3 * e.g / (2 * e.length), 3.0 / (e.m * e.length**2), e.max_torque
    th, thdot = torch.atan2(obs[..., 1], obs[..., 0]), obs[..., 2] * e.max_speed
    k_p = stiffness * c / b
    k_d = 2 * math.sqrt(b * k_p - c) / b
    energy = thdot**2 / 2 + c * th.cos()
    direction = torch.where(thdot >= 0, 1.0, -1.0)
    pump = u_max * torch.where(energy < c, direction, -direction)
    catch = -(k_p * th + k_d * thdot)
    u = torch.where(th.abs() < math.asin(b * u_max / c), catch, pump)
    return (u / u_max).clamp(-1.0, 1.0)[..., None]


def detour_action(env: Detour, waypoint: float) -> torch.Tensor:
    """Full-speed steps of the scripted split from the batch's current positions env.p [..., n, 2]."""
    n = env.p.shape[-2]
    side = torch.where(torch.arange(n, device=env.p.device) < n // 2, 1.0, -1.0)
    point = torch.stack([waypoint * side, torch.zeros_like(side)], -1).expand_as(env.p)
    target = torch.where((env.p[..., 1] < 0)[..., None], point, env.goal)
    step = target - env.p
    return step / step.norm(dim=-1, keepdim=True).clamp_min(env.speed * env.dt)


@torch.no_grad()
def returns(env_name: str, episodes: int, gens: Generators, device: str, reacher_gain: float,
            pendulum_stiffness: float, detour_waypoint: float) -> torch.Tensor:
    """Mean undiscounted return [S] of the simulator's scripted controller over ``episodes`` episodes per seed,
    initial states drawn from gens[s]."""
    env = make_env(env_name, episodes, device)
    obs, total = env.reset(gens), 0.0
    for _ in range(SPECS[env_name].horizon):
        if env_name == "reacher":
            a = reacher_action(obs, reacher_gain)
        elif env_name == "pendulum":
            a = pendulum_action(obs, pendulum_stiffness)
        else:
            a = detour_action(env, detour_waypoint)
        obs, reward = env.step(a)
        total = total + reward
    return total.mean(-1)
