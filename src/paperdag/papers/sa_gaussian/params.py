"""Parameters of sa_gaussian (its block of params.yaml). No defaults: params.yaml is the one source of values."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, model_validator

from paperdag.common.plans import SamplePlan
from paperdag.params import ParamsModel

Positive = Annotated[float, Field(gt=0.0, le=1.0)]
Alphas = Annotated[list[Positive], Field(min_length=3, description="constant stepsizes alpha, decreasing")]
Matrix2 = Annotated[list[Annotated[list[float], Field(min_length=2, max_length=2)]], Field(min_length=2, max_length=2)]


class ProblemParams(ParamsModel):
    """The SA problems: 1-D SGD objectives, a 2-D linear SA, a 2-D contractive nonlinear SA, the Markov chain."""

    curvature: float = Field(gt=0.0, le=50.0, description="a of the quadratic f(x) = a x^2 / 2 (1-D SGD)")
    logcosh_curvature: float = Field(gt=0.0, le=50.0, description="a of f(x) = a x^2/2 + b log cosh(x - c)")
    logcosh_weight: float = Field(gt=0.0, le=50.0, description="b of f(x) = a x^2/2 + b log cosh(x - c)")
    logcosh_shift: float = Field(ge=-5.0, le=5.0, description="c of f(x) = a x^2/2 + b log cosh(x - c)")
    logcosh_noise: float = Field(gt=0.0, le=10.0, description="noise standard deviation sigma of the log cosh SGD")
    noise_scale: float = Field(gt=0.0, le=10.0, description="noise standard deviation sigma of the quadratic and "
                                                            "quartic SGD")
    linear_A: Matrix2 = Field(description="the non-symmetric Hurwitz matrix A of the linear SA g(x) = A x - b")
    linear_b: list[float] = Field(min_length=2, max_length=2, description="b of the linear SA g(x) = A x - b")
    noise_cov: Matrix2 = Field(description="covariance Gamma of the 2-D i.i.d. noise (Gaussian or skewed)")
    contraction: float = Field(gt=0.0, lt=1.0, description="gamma of F(x) = gamma R tanh(x) + c (a contraction)")
    rotation: float = Field(ge=-3.2, le=3.2, description="angle (rad) of the rotation R in F")
    offset: list[float] = Field(min_length=2, max_length=2, description="c of F(x) = gamma R tanh(x) + c")
    nonlinear_noise: float = Field(gt=0.0, le=10.0, description="s: the nonlinear SA's noise covariance is s^2 Gamma")
    drift_scale: float = Field(gt=0.0, le=20.0, description="kappa of the nonlinear mean field g(x) = kappa (x - F(x))")
    markov_P: list[list[float]] = Field(min_length=2, description="transition matrix of the finite noise chain")
    markov_values: list[list[float]] = Field(min_length=2, description="noise value phi(s) in R^2 per chain state "
                                                                       "(centred under the stationary law)")

    @model_validator(mode="after")
    def _chain(self) -> ProblemParams:
        S = len(self.markov_P)
        if any(len(r) != S for r in self.markov_P) or len(self.markov_values) != S:
            raise ValueError("markov_P must be S x S and markov_values S x 2")
        if any(abs(sum(r) - 1.0) > 1e-9 or min(r) < 0 for r in self.markov_P):
            raise ValueError("rows of markov_P must be probability vectors")
        return self


class SimParams(ParamsModel):
    """The vectorised simulation to stationarity."""

    alphas: Alphas = Field(description="constant stepsizes alpha of the 2-D settings, decreasing")
    alphas_1d: Alphas = Field(description="constant stepsizes alpha of the 1-D Gaussian-limit settings, decreasing "
                              "(a 1-D step is cheap: the sweep reaches lower)")
    quartic_alphas: Alphas
    chains_1d: int = Field(ge=1000, le=10_000_000, description="independent chains per stepsize, 1-D settings")
    chains_2d: int = Field(ge=1000, le=100_000_000, description="independent chains per stepsize, 2-D settings")
    chains_quartic: int = Field(ge=1000, le=10_000_000, description="independent chains per stepsize, x^4 setting")
    burn_in_nats: float = Field(ge=1.0, le=50.0, description="burn-in T = nats / (alpha mu), mu the contraction rate")
    start_offset: float = Field(ge=0.0, le=10.0, description="chains start at x* + offset (1, ..., 1)")


class AnalysisParams(ParamsModel):
    """Distances, bootstrap and tails (verify)."""

    bootstrap: int = Field(ge=5, le=2000, description="bootstrap resamples of chains (and Gaussian draws) per alpha")
    projections: int = Field(ge=2, le=256, description="equally spaced directions of the sliced W1 in 2-D")
    tail_levels: list[float] = Field(min_length=1, description="deviation levels t (in sigma) of the tail check")
    floor_ratio: float = Field(ge=1.0, le=100.0, description="a W1 enters a slope fit only if >= ratio x MC floor")


class TransportParams(ParamsModel):
    """Exact W1 in 2-D on disjoint groups of the chains, quantized on a fixed grid (exact and probe stages,
    transport.py)."""

    subsample: int = Field(ge=50, le=100_000_000, description="points per group of the steady state and per draw of "
                                                            "the limit law (capped at chains // repeats)")
    repeats: int = Field(ge=3, le=100, description="disjoint groups of the chains per stepsize (their t-interval), "
                                                   "and as many pairs of limit draws for the floor")
    bins: int = Field(ge=4, le=256, description="cells per axis of the quantization grid (the LP has <= bins^2 "
                                                "points a side)")
    span: float = Field(gt=0.0, le=20.0, description="the grid covers [-span, span]^2 in the limit law's whitened "
                                                     "coordinates (points beyond join its boundary cells)")


class ProbeParams(ParamsModel):
    """The probe stages (probe.py): chains simulated at the stepsize where the explicit bound gains content."""

    chains: int = Field(ge=1000, le=10_000_000, description="independent chains at the probe stepsize (the bound is "
                                                            "far above W1: the exact subsample W1 needs few)")


class FitParams(ParamsModel):
    """The rate fits (rates.py): every fit uses its declared window, every resolved stepsize of the sweep."""

    min_points: int = Field(ge=3, le=20, description="fewest resolved stepsizes a fit needs (the two-term model: 2 "
                            "coefficients + min_points - 2 degrees of freedom for its lack-of-fit test)")


class ClaimParams(ParamsModel):
    """Thresholds of the claims (claims.py): described, set in params.yaml, never tuned to make a claim pass."""

    slope_tol: float = Field(ge=0.0, le=1.0, description="a slope claim holds if its 95% CI lies inside the predicted "
                             "slope +- tol (trend; allowance for higher-order terms over the fitted stepsizes); also "
                             "the largest deviation of the closed-form slope counted as asymptotic")
    baseline_ratio: float = Field(ge=1.0, description="a wrong limit must be this many times farther than the right "
                                  "(the 95% CI of the W1 ratio above it)")
    stationarity_tol: float = Field(gt=0.0, le=1.0, description="allowed relative drift of E|y|^2 over the last "
                                                                "quarter of burn-in, and covariance error")
    ratio_slope_margin: float = Field(gt=0.0, le=1.0, description="W1 / bound is non-increasing as alpha falls if "
                                      "the 95% fit interval of its log-log slope lies above -margin (noninferiority)")
    tail_low: list[float] = Field(min_length=1, description="the low deviation levels t of the decay-in-t claim")
    tail_high: list[float] = Field(min_length=1, description="the high levels t: their tail error lies below every "
                                   "low level's at the smallest stepsize")


class Plans(ParamsModel):
    """Sample-size plans of the judged comparisons (paperdag.common.plans), declared before the run."""

    chains_1d: SamplePlan = Field(description="intervals over the chains of a 1-D setting at one stepsize, in "
                                  "kilochains (1,000 chains)")
    chains_2d: SamplePlan = Field(description="intervals over the chains of a 2-D setting at one stepsize, in "
                                  "kilochains")
    chains_quartic: SamplePlan = Field(description="intervals over the chains of the x^4 setting at one stepsize, "
                                       "in kilochains")
    probe_chains: SamplePlan = Field(description="intervals over the chains of a bound probe, in kilochains")
    subsamples: SamplePlan = Field(description="t-intervals over the subsample pairs of the exact 2-D W1")
    stepsizes: SamplePlan = Field(description="fits over the 2-D sweep's stepsizes (rates, two-term model)")
    stepsizes_1d: SamplePlan = Field(description="fits over the 1-D sweep's stepsizes (rates, two-term model)")
    quartic_stepsizes: SamplePlan = Field(description="fits over the x^4 setting's stepsizes")
    floor_draws: SamplePlan = Field(description="t-intervals over the MC floor's draws, one per stepsize")


class Params(ParamsModel):
    """Seed, problems, simulation, analysis, exact W1, bound probes, rate model, claim thresholds and plans."""

    seed: int = Field(ge=0, description="root of every random draw")
    problems: ProblemParams
    sim: SimParams
    analysis: AnalysisParams
    transport: TransportParams
    probe: ProbeParams
    fit: FitParams
    claims: ClaimParams
    plans: Plans

    @model_validator(mode="after")
    def _design(self) -> Params:
        for name in ("alphas", "alphas_1d", "quartic_alphas"):
            a = getattr(self.sim, name)
            if any(x <= y for x, y in zip(a, a[1:])):
                raise ValueError(f"sim.{name} must be strictly decreasing")
        if max(self.sim.alphas[0], self.sim.alphas_1d[0]) * (self.problems.curvature + 1e-12) >= 2.0:
            raise ValueError("alpha * a must stay below 2 (stability of SGD on the quadratic)")
        # x^4 SGD, x+ = x - alpha (x^3 + xi), |xi| = sigma: on [-R, R] with 3 alpha R^2 <= 1 the map x - alpha x^3 is
        # increasing, so |x+| <= R - alpha R^3 + alpha sigma <= R once R^3 >= sigma: [-R, R] with
        # R = max(offset, sigma^(1/3)) holds every chain from the start (past sqrt(2 / alpha) a chain overshoots -x)
        radius = max(self.sim.start_offset, self.problems.noise_scale ** (1 / 3))
        if 3 * self.sim.quartic_alphas[0] * radius ** 2 > 1:
            raise ValueError(f"sim.start_offset {self.sim.start_offset} with quartic alpha {self.sim.quartic_alphas[0]}"
                             f": the x^4 chains need 3 alpha R^2 <= 1, R = max(offset, noise_scale^(1/3)) = "
                             f"{radius:.3g}, or they can diverge")
        chains = (self.sim.chains_1d, self.sim.chains_2d, self.sim.chains_quartic, self.probe.chains)
        if any(n % 1000 for n in chains):
            raise ValueError("chain counts must be whole kilochains (multiples of 1,000: the unit of their intervals)")
        design = {"chains_1d": self.sim.chains_1d // 1000, "chains_2d": self.sim.chains_2d // 1000,
                  "chains_quartic": self.sim.chains_quartic // 1000, "probe_chains": self.probe.chains // 1000,
                  "subsamples": self.transport.repeats, "stepsizes": len(self.sim.alphas),
                  "stepsizes_1d": len(self.sim.alphas_1d),
                  "quartic_stepsizes": len(self.sim.quartic_alphas), "floor_draws": len(self.sim.alphas)}
        drift = {k: (getattr(self.plans, k).n, n) for k, n in design.items() if getattr(self.plans, k).n != n}
        if drift:
            raise ValueError(f"plans.<name>.n must be the design's count (planned, design): {drift}")
        if self.fit.min_points > min(len(self.sim.alphas), len(self.sim.alphas_1d)):
            raise ValueError("fit.min_points exceeds a sweep's stepsizes: no fit could ever be made")
        levels = set(self.analysis.tail_levels)
        if not set(self.claims.tail_low) | set(self.claims.tail_high) <= levels or \
                max(self.claims.tail_low) >= min(self.claims.tail_high):
            raise ValueError("claims.tail_low and tail_high must be analysis.tail_levels, every low below every high")
        return self
