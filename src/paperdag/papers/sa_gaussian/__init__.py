"""Constant-stepsize SA: the Gaussian approximation of the steady state (Wang, Wang, Narang, Wang, Wang, Maguluri,
arXiv:2602.13960, ICML 2026).

Claim under test: for fixed alpha the centred-scaled steady state y = (x - x*)/sqrt(alpha) of
x_{k+1} = x_k - alpha (g(x_k) + w_k) is within an explicit W1 <= C alpha^(1/2) log(1/alpha) of N(0, Sigma),
A Sigma + Sigma A^T = Gamma, with tails close to the Gaussian's, for SGD on strongly convex objectives, linear SA and
contractive nonlinear SA, i.i.d. or Markovian noise (long-run Gamma); for SGD on x^4/4 the limit under alpha^(1/4)
scaling is non-Gaussian (Gibbs exp(-y^4 / (2 sigma^2))).

Method: vectorised simulation of 2e5-1e6 independent chains per stepsize to stationarity (dynamics.py), exact limits
by Lyapunov equations (problems.py, scipy; Markov long-run covariance by the fundamental matrix, markov.py, Kemeny &
Snell 1960), W1 / sliced W1 with Monte-Carlo floors and bootstrap CIs (distance.py), exact 2-D W1 on quantized groups
of the chains (transport.py, POT), the explicit Stein bound with each setting's constants (bound.py), the two-term rate
model c_h alpha^(1/2) + c_1 alpha (rates.py), Mahalanobis tails against chi^2 (tails.py). Baselines: the naive limit
with the one-step noise covariance (Markovian noise), the W1-optimal and moment-matched Gaussians (x^4), the coupling
bound.

Data: procedural only (no download): mean fields and noise laws from params.yaml, chains seeded per stage; prepare
writes settings.json (x*, Jacobians, Gamma, Sigma) and provenance.json with its sha256.
"""
