"""Parameters of the vector Lyapunov-Razumikhin reproduction (its block of params.yaml). No defaults: params.yaml is
the one source of values."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, Field, model_validator

from paperdag.common.plans import SamplePlan
from paperdag.params import ParamsModel


def _ordered(r: tuple[float, float]) -> tuple[float, float]:
    if r[0] > r[1]:
        raise ValueError(f"a range (lo, hi) needs lo <= hi, got {r}")
    return r


Positive = Annotated[float, Field(gt=0.0, le=1e3)]
Range = Annotated[tuple[Positive, Positive], AfterValidator(_ordered)]
Box = tuple[Positive, Positive]
Gain = Annotated[float, Field(ge=0.0, le=100.0)]
Sizes = Annotated[list[Annotated[int, Field(ge=1, le=1024)]], Field(min_length=1)]
RingSizes = Annotated[list[Annotated[int, Field(ge=3, le=1024)]], Field(min_length=1)]  # degree 2 at every node


class PlatoonParams(ParamsModel):
    """The procedural mixed-autonomy platoon (platoon/model.py): followers, delay, physics, verified box."""

    n_grid: Sizes = Field(description="platoon sizes N (the platoon of N is the first N of max(n_grid) followers)")
    tau: int = Field(ge=1, le=3, description="delay tau in steps of every vehicle's measurements")
    cav_period: int = Field(ge=1, le=100, description="follower i (1-based) is a CAV iff i % cav_period == 0")
    alpha_range: Range = Field(description="HDV optimal-velocity gain alpha_i ~ U(range)")
    beta_range: Range = Field(description="HDV relative-velocity gain beta_i ~ U(range)")
    v_max: Positive = Field(description="OVM maximum velocity [m/s]")
    s_go: Positive = Field(description="OVM spacing at which V(s) reaches v_max [m]")
    s_st: float = Field(ge=0.0, le=1e3, description="OVM standstill spacing (V(s) = 0 below) [m]")
    v_star: Positive = Field(description="leader cruise velocity v* [m/s]")
    s_bound: Positive = Field(description="state box half-width S of the spacing error [m]")
    v_bound: Positive = Field(description="state box half-width E of the velocity error [m/s]")
    w_bound: float = Field(ge=0.0, le=10.0, description="disturbance bound |w_i| <= w_bar [m/s^2]")
    cav_gains: tuple[Gain, Gain, Gain] = Field(description="nominal CAV law gains (k_s, k_v, k_d)")

    @model_validator(mode="after")
    def _linear_on_box(self) -> PlatoonParams:
        if self.s_go <= self.s_st:
            raise ValueError("s_go must exceed s_st")
        kappa = self.v_max / (self.s_go - self.s_st)
        if kappa * self.s_bound > min(self.v_star, self.v_max - self.v_star):
            raise ValueError("the optimal-velocity clip must be inactive on the spacing box (platoon/model.py): "
                             "kappa * s_bound <= min(v_star, v_max - v_star)")
        return self


class CertificateParams(ParamsModel):
    """The platoon's per-type certificate V (lyapunov.py) and comparison matrix (platoon/certificate.py)."""

    hidden: int = Field(ge=0, le=1024, description="ReLU hidden units of V (0: the polyhedral norm ||W y||_1)")
    feat: int = Field(ge=1, le=1024, description="features of V (rows of W)")
    eps: Positive = Field(description="weight of the eps ||y||_1 term that makes V positive definite")
    rho: float = Field(gt=0.0, lt=1.0, description="row sum c_ii + c_ij = rho < 1 of the comparison matrix")


class PolicyParams(ParamsModel):
    """The bias-free residual CAV controller pi(y) = u_scale W3 relu(W2 relu(W1 y))."""

    hidden: int = Field(ge=1, le=1024, description="hidden units of both ReLU layers")
    u_scale: Positive = Field(description="output scale of the residual acceleration [m/s^2]")


class LearnerParams(ParamsModel):
    """A sampled-loss Adam learner, L = mean over the level set of relu(G + m c_0) + lambda_gamma gamma + ...; the
    ``learner`` group is shared by the platoon's certificate (vector CEGIS) and controllers (the uncertified
    baseline uses its learning rate)."""

    lr: Positive = Field(description="Adam learning rate")
    batch: int = Field(ge=16, le=1_000_000, description="sampled queries per step")
    margin: float = Field(ge=0.0, le=1.0, description="margin m of the loss relu(G + m c_0)")
    lambda_gamma: float = Field(ge=0.0, le=100.0, description="weight of the ISS gains gamma in the loss")


class CegisParams(ParamsModel):
    """The platoon's CEGIS loop (platoon/cegis.py)."""

    rounds: int = Field(ge=1, le=1000, description="rounds of training followed by verifier calls")
    steps_per_round: int = Field(ge=1, le=100_000, description="Adam steps per round")
    lambda_imit: float = Field(ge=0.0, le=100.0, description="weight of the residual controller's squared output")
    lambda_shape: float = Field(ge=0.0, le=100.0, description="weight of the level-set shape term max V / min V")
    c0_safety: float = Field(gt=0.0, le=1.0, description="factor on the sampled boundary minimum of V (estimate c_0)")
    verify_per_round: int = Field(ge=1, le=1024, description="followers verified per round (round-robin)")
    cells: int = Field(ge=1, le=10_000_000, description="branch-and-bound cells per verifier call (its whole "
                       "budget: no MILP, no clock)")
    keep: int = Field(ge=1, le=100_000, description="counterexamples kept per verifier or falsifier call")


class UncertifiedParams(ParamsModel):
    """The uncertified neural controller baseline: performance-only BPTT through platoon rollouts."""

    steps: int = Field(ge=1, le=100_000, description="Adam steps")
    horizon: int = Field(ge=2, le=100_000, description="rollout length in steps")


class MonolithicParams(ParamsModel):
    """The monolithic baseline on the network rings (networks/monolithic.py): one certificate over the whole ring,
    trained with the networks' learner and verified by the same verifier and budget (N times the per-property one),
    up to the first cell the budget leaves undecided (the verdict is then the full budget's: not proved)."""

    n_grid: Annotated[list[Annotated[int, Field(ge=2, le=1024)]], Field(min_length=1)] = Field(
        description="ring sizes N (first N drawn nodes; N = 2: one neighbour each) at the first delay")
    steps: int = Field(ge=0, le=100_000, description="Adam steps per N (constants recomputed every "
                       "network_cegis.steps)")


class RingParams(ParamsModel):
    """The monolithic baselines that share the compositional certificate's function (networks/ring.py), on the rings
    of monolithic.n_grid at the first delay: (R) max_i V(x_i) as one ring-wide query (the verifier and network_budget,
    N times the per-property one) and (Q) a whole-ring quadratic Razumikhin LMI (Clarabel)."""

    lmi_multipliers: Annotated[list[Annotated[float, Field(ge=0.0, le=1.0)]], Field(min_length=1)] = Field(
        description="S-procedure multipliers l tried in turn for (Q) (the LMI is linear in P for a fixed l)")
    lmi_max_iter: int = Field(ge=1, le=100_000, description="Clarabel iterations per solve of (Q) (its budget: a "
                              "solve that stops without a decided status leaves the ring unknown)")


class BudgetParams(ParamsModel):
    """Deterministic budget of the verifier (verifier/bab.py) per verified property (a follower, or a subsystem's
    piece of the delay domain; a piece of a monolithic ring certificate gets N times the cells and MILPs, what the
    compositional certificate has for its N subsystems): counts only, never seconds, so a verdict is a function of
    the certificate and the budget; a spent budget leaves cells unknown."""

    max_cells: int = Field(ge=1, le=100_000_000, description="branch-and-bound cells before the rest go to the MILP")
    max_depth: int = Field(ge=0, le=200, description="bisections of one cell before it goes to the MILP")
    max_milp: int = Field(ge=0, le=100_000, description="MILPs per property (further open cells stay unknown)")
    milp_nodes: int = Field(ge=1, le=100_000_000, description="HiGHS branch-and-bound nodes of one MILP (one thread, "
                            "fixed seed, no time limit); its dual bound is used when they run out")
    stop_after_cex: int = Field(ge=0, le=100_000, description="stop a unit after this many counterexamples (0: never)")


class NetworkParams(ParamsModel):
    """The drone formation and droop microgrid rings (networks/model.py)."""

    n_grid: RingSizes = Field(description="ring sizes N verified at the first delay (prefixes of max(n_grid) nodes)")
    w_bound: float = Field(ge=0.0, le=10.0, description="disturbance bound |w_i| <= w_bar")
    drone_kp_range: Range = Field(description="drone position gain kp_i ~ U(range)")
    drone_kv_range: Range = Field(description="drone velocity gain kv_i ~ U(range)")
    drone_kc: Positive = Field(description="drone consensus gain kc of each neighbour")
    drone_box: Box = Field(description="drone state box (position error, velocity error)")
    grid_b0: Positive = Field(description="microgrid susceptance b0 of each inverter's local tie")
    grid_b: Positive = Field(description="microgrid line susceptance b between ring neighbours")
    grid_inertia_range: Range = Field(description="inverter inertia M_i ~ U(range)")
    grid_damping_range: Range = Field(description="inverter droop damping D_i ~ U(range)")
    grid_box: Box = Field(description="microgrid state box (angle error, frequency error)")


class DelayParams(ParamsModel):
    """Which delays the network certificates are trained and verified for."""

    taus: Annotated[list[Annotated[int, Field(ge=1, le=10)]], Field(min_length=1)] = Field(
        description="delays tau in steps; the first is verified for every N in networks.n_grid")
    tau_n: int = Field(ge=3, le=1024, description="ring size N of the delays after the first (and of the full-domain "
                                                 "baseline)")


class NetworkCertificateParams(ParamsModel):
    """The networks' shared polyhedral certificate V(x) = ||W y||_1 + eps ||y||_1 and comparison row."""

    feat: int = Field(ge=2, le=1024, description="features of V (rows of W)")
    feat_by_delay: dict[Annotated[int, Field(ge=1)], Annotated[int, Field(ge=2, le=1024)]] = Field(
        description="features of V at these delays tau (the others: feat); more features, a finer polygon")
    eps: Positive = Field(description="weight of the eps ||y||_1 term")
    rho: float = Field(gt=0.0, lt=1.0, description="row sum c_s + c_n = rho < 1")

    def at(self, tau: int) -> NetworkCertificateParams:
        """The architecture of the certificate at delay ``tau`` (its feat resolved, feat_by_delay empty)."""
        return self.model_copy(update={"feat": self.feat_by_delay.get(tau, self.feat), "feat_by_delay": {}})


class NetworkCegisParams(LearnerParams):
    """The networks' CEGIS loop (networks/cegis.py) and its own learner."""

    rounds: int = Field(ge=0, le=1000, description="training rounds (each checked by falsifier + MILP)")
    steps: int = Field(ge=1, le=100_000, description="Adam steps per round")
    milps: int = Field(ge=1, le=1024, description="most violated subsystems whose exact MILP worst case is solved")
    cex_weight: int = Field(ge=1, le=1000, description="copies of each counterexample in the training set")
    milp_nodes: int = Field(ge=1, le=100_000_000, description="HiGHS nodes of one worst-case MILP (deterministic "
                            "budget; its dual bound is used when they run out)")
    keep: int = Field(ge=1, le=100_000, description="falsifier counterexamples kept per round")


class NetworkControlParams(ParamsModel):
    """The networks' control study (networks/control.py): the uncertified controller tuned for the quadratic cost
    J = mean(q^2 + v^2 + effort u^2) on the ring of delays.tau_n at the first delay, and the path back to the nominal
    controller along which the certified one is sought."""

    effort: float = Field(ge=0.0, le=1e3, description="weight r of the control effort u^2 in J")
    steps: int = Field(ge=0, le=100_000, description="Adam steps on the log gains")
    lr: Positive = Field(description="Adam learning rate on the log gains")
    scenarios: int = Field(ge=1, le=10_000, description="fixed training scenarios (J is their sample average)")
    horizon: int = Field(ge=2, le=100_000, description="steps of each training scenario")
    alphas: Annotated[list[Annotated[float, Field(ge=0.0, le=1.0)]], Field(min_length=1)] = Field(
        description="path points g_nominal^(1 - alpha) g_tuned^alpha tried in this order (descending; 0: nominal)")
    load_steps: list[Literal["drones", "microgrid"]] = Field(
        description="systems whose training and held-out scenarios are load steps (control.scenarios) instead of "
        "i.i.d. disturbances")
    load_step_window: float = Field(gt=0.0, le=1.0, description="each load step starts at a uniform integer step "
                                    "in [0, window x horizon)")

    @model_validator(mode="after")
    def _descending(self) -> NetworkControlParams:
        if self.alphas != sorted(self.alphas, reverse=True):
            raise ValueError(f"network_control.alphas must be descending, got {self.alphas}")
        return self


class QuadraticParams(ParamsModel):
    """The quadratic baseline's second P (networks/quadratic.py ``invariance_certificate``): the S-procedure LMI of
    the invariance of V_P's rho-level under the bounded delay deviation and couplings, its level-set multiplier l
    searched on an even grid."""

    multiplier_step: float = Field(gt=0.0, lt=0.5, description="l runs over step, 2 step, ... below 1")


class EvaluationParams(ParamsModel):
    """Closed-loop simulations and the dense falsification of reported certificates."""

    sim_steps: int = Field(ge=10, le=100_000, description="steps of each closed-loop simulation")
    n_sims: int = Field(ge=1, le=10_000, description="simulations per controller or certificate")
    falsify_samples: int = Field(ge=1, le=10_000_000, description="uniform samples and gradient starts per follower "
                                                                "(a tenth of it per network subsystem)")
    falsify_steps: int = Field(ge=0, le=10_000, description="projected-gradient steps of the falsifier")


class LadderParams(ParamsModel):
    """The platoon's control ladder (platoon/ladder.py): the rung of the nominal law's gains retuned for the LQR's
    cost."""

    tune_steps: int = Field(ge=0, le=100_000, description="Adam steps of the retuned-gains rung")
    tune_lr: float = Field(gt=0, le=10.0, description="Adam's step size on the log gains of that rung")


class CascadeParams(ParamsModel):
    """The linear stability and gain analysis of the platoon's relative cascade (platoon/cascade.py), judged by
    ``platoon_cascade_admits_contraction``: its frequency grid and the two numerical tolerances."""

    freq_grid: int = Field(ge=16, le=1_000_000, description="uniform frequencies on [0, pi] of the H-infinity sweeps "
                           "(refined at the argmax by a bounded scalar search and certified by the exact crossing test)")
    collinear_tol: float = Field(gt=0.0, le=1e-3, description="relative distance |x_i - lambda x_j| / |x_j| below which "
                                 "two constant-acceleration states count as collinear (a DC cycle of the chain)")
    root_tol: float = Field(gt=0.0, le=1e-3, description="|1 - |r|| below which a root of the crossing polynomial "
                            "counts as lying on the unit circle")


class ClaimParams(ParamsModel):
    """Thresholds of the claims (claims.py): described, set in params.yaml, never tuned to make a claim pass."""

    slope_range: Range = Field(description="log-log slope of verification time against N counted as about linear")
    control_tol: float = Field(ge=0.0, le=10.0, description="allowed relative excess of the certified "
                               "controller's RMS spacing error and string ratio (platoon) or cost J (networks) over "
                               "the uncertified one; the nominal controller must exceed it for the comparison to "
                               "have headroom")


class Plans(ParamsModel):
    """Sample-size plans of the judged comparisons (paperdag.common.plans), declared before the run. Verification
    verdicts are exact (certificates, exact solvers under deterministic budgets) and need none."""

    scenarios: SamplePlan = Field(description="intervals over held-out closed-loop scenarios (evaluation.n_sims), "
                                  "paired across controllers")


class Params(ParamsModel):
    """Seed, the systems, the certificates and their learners, the verifier budgets, evaluation, claims and
    sample-size plans."""

    seed: int = Field(ge=0, description="root of every random draw (each stage's RNG is seeded from (seed, stage))")
    dt: float = Field(gt=0.0, le=0.5, description="Euler time step of every system [s]")
    platoon: PlatoonParams
    certificate: CertificateParams
    policy: PolicyParams
    learner: LearnerParams
    cegis: CegisParams
    uncertified: UncertifiedParams
    monolithic: MonolithicParams
    ring: RingParams
    quadratic: QuadraticParams
    budget: BudgetParams
    networks: NetworkParams
    delays: DelayParams
    network_certificate: NetworkCertificateParams
    network_cegis: NetworkCegisParams
    network_budget: BudgetParams
    network_control: NetworkControlParams
    evaluation: EvaluationParams
    ladder: LadderParams
    cascade: CascadeParams
    claims: ClaimParams
    plans: Plans

    @model_validator(mode="after")
    def _design(self) -> Params:
        if self.plans.scenarios.n != self.evaluation.n_sims:
            raise ValueError("plans.scenarios.n must be evaluation.n_sims (every held-out scenario is a unit)")
        if max(self.monolithic.n_grid) > max(self.networks.n_grid):
            raise ValueError("monolithic.n_grid must not exceed max(networks.n_grid): its rings use the drawn nodes")
        if self.delays.tau_n > max(self.networks.n_grid):
            raise ValueError("delays.tau_n must not exceed max(networks.n_grid): its ring uses the drawn nodes")
        return self
