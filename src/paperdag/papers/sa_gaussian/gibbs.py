"""The non-Gaussian limit of SGD on f(x) = x^4 / 4 with noise of variance sigma^2.

The Langevin approximation dx = -x^3 dt' + sqrt(alpha) sigma dB of the iterates has the Gibbs law
exp(-2 f(x) / (alpha sigma^2)) = exp(-x^4 / (2 alpha sigma^2)); under the scaling y = x / alpha^(1/4) this is
    p(y) proportional to exp(-y^4 / (2 sigma^2)),
independent of alpha. Sampling: with t = y^4 / (2 sigma^2), |y| = (2 sigma^2 t)^(1/4) and t ~ Gamma(1/4, 1); a
random sign. Second moment: E[y^2] = sqrt(2 sigma^2) Gamma(3/4) / Gamma(1/4).
"""

from __future__ import annotations

import math

import numpy as np


def gibbs_second_moment(sigma: float) -> float:
    """E[y^2] = sqrt(2) sigma Gamma(3/4) / Gamma(1/4) under p(y) ~ exp(-y^4 / (2 sigma^2))."""
    return math.sqrt(2.0) * sigma * math.gamma(0.75) / math.gamma(0.25)


def sample_gibbs(rng: np.random.Generator, n: int, sigma: float) -> np.ndarray:
    """n draws of p(y) ~ exp(-y^4 / (2 sigma^2)): +-(2 sigma^2 t)^(1/4), t ~ Gamma(1/4, 1)."""
    t = rng.gamma(0.25, 1.0, size=n)
    return rng.choice([-1.0, 1.0], size=n) * (2 * sigma**2 * t) ** 0.25
