"""The finite Markov chain driving Markovian noise w_k = phi(s_k), and its long-run covariance.

Stationary law pi: pi P = pi, sum pi = 1. With phi centred (pi^T Phi = 0) and D = diag(pi), the lag-k
autocovariance is C_k = E[phi(s_0) phi(s_k)^T] = Phi^T D P^k Phi, and the long-run covariance is
    Gamma_LR = sum_{k in Z} C_k = Phi^T D Z Phi + (Phi^T D Z Phi)^T - Phi^T D Phi,
with Z = (I - P + 1 pi^T)^-1 the fundamental matrix (sum_{k >= 0} P^k Phi = Z Phi for centred Phi; Kemeny & Snell
1960, "Finite Markov Chains"). This is the Poisson-equation solution's covariance: Z Phi solves (I - P) h = Phi.
"""

from __future__ import annotations

import numpy as np


def stationary_law(P: np.ndarray) -> np.ndarray:
    """pi with pi P = pi, sum pi = 1: the least-squares solution of [P^T - I; 1^T] pi = [0; 1]."""
    S = P.shape[0]
    M = np.vstack([P.T - np.eye(S), np.ones((1, S))])
    return np.linalg.lstsq(M, np.r_[np.zeros(S), 1.0], rcond=None)[0]


def long_run_covariance(P: np.ndarray, phi: np.ndarray) -> np.ndarray:
    """Gamma_LR = Phi^T D Z Phi + (Phi^T D Z Phi)^T - Phi^T D Phi for phi centred under pi (raises otherwise)."""
    pi = stationary_law(P)
    if np.abs(pi @ phi).max() > 1e-10:
        raise ValueError(f"the noise values must be centred under the stationary law, E phi = {pi @ phi}")
    D = np.diag(pi)
    Z = np.linalg.inv(np.eye(len(pi)) - P + np.outer(np.ones(len(pi)), pi))
    half = phi.T @ D @ Z @ phi
    return half + half.T - phi.T @ D @ phi
