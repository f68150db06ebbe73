"""Parameters of trudi (its block of params.yaml). No defaults: params.yaml is the one source of values."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, model_validator

from paperdag.common.plans import SamplePlan
from paperdag.params import ParamsModel

ENVS = ("detour", "pendulum", "reacher")  # the simulators of envs.py

Positive = Annotated[float, Field(gt=0.0)]


class PolicyParams(ParamsModel):
    """Both policy classes (policies.py): same width; the Gaussian starts with std init_std, the chain's prior too."""

    hidden: int = Field(ge=4, le=1024, description="width of the two hidden layers of every network")
    steps: int = Field(ge=1, le=50, description="denoising steps K of the diffusion policy")
    sigma_max: float = Field(gt=0.0, le=2.0, description="noise std sigma_K of the first denoising step")
    sigma_min: float = Field(gt=0.0, le=2.0, description="noise std sigma_1 of the last denoising step")
    init_std: float = Field(gt=0.0, le=2.0, description="Gaussian policy's initial std = the chain prior's std")


class DPPOParams(ParamsModel):
    """DPPO's loss as published (ppo.py ``dppo``; Ren et al. 2024, cfg/gym/finetune/hopper-v2/ft_ppo_diffusion_mlp.yaml)."""

    clip: float = Field(gt=0.0, le=1.0, description="per-denoising-step ratio clip (clip_ploss_coef = _base)")
    logp_min: float = Field(description="lower clamp of each per-dimension step log-probability")
    logp_max: float = Field(description="upper clamp of each per-dimension step log-probability")
    gamma_denoising: float = Field(gt=0.0, le=1.0, description="denoising discount: step k's advantage x "
                                   "gamma_denoising^(K - k - 1)")
    target_kl: float = Field(gt=0.0, description="a seed's update of an iteration stops after the minibatch whose "
                             "approx_kl = mean((r - 1) - log r) exceeds this")


class PPOParams(ParamsModel):
    """The on-policy loop (ppo.py), shared by every method."""

    n_envs: int = Field(ge=2, le=65536, description="parallel environments per rollout (one episode each)")
    iterations: dict[str, Annotated[int, Field(ge=1, le=10000)]] = Field(
        description="per environment: rollout + update iterations per training run (until the curves plateau)")
    epochs: int = Field(ge=1, le=50, description="passes over each rollout batch")
    minibatches: int = Field(ge=1, le=1024, description="minibatches per pass")
    gamma: float = Field(gt=0.0, le=1.0, description="discount factor")
    lam: float = Field(ge=0.0, le=1.0, description="GAE lambda")
    clip: float = Field(gt=0.0, le=1.0, description="PPO ratio clipping range c (gauss, and the clip ablation)")
    dppo: DPPOParams
    tr_reg: float = Field(ge=0.0, le=100.0, description="weight alpha of the projection regression (trudi, final)")
    max_grad_norm: float = Field(gt=0.0, description="global gradient-norm clip of every Adam step")
    reward_scale: dict[str, Positive] = Field(description="per environment: factor on rewards for the critic")


class ClaimParams(ParamsModel):
    """Thresholds of the claims (claims.py): described, set in params.yaml, never tuned to make a claim pass."""

    kl_factor: float = Field(gt=1.0, description="per-update KLs that differ by this factor are different step "
                             "sizes: the stress test needs the unconstrained baselines' max KL above this x TruDi's; "
                             "the on-par comparison needs TruDi's mean KL within this factor of Gaussian PPO's")
    par_tol: float = Field(gt=0.0, le=1.0, description="on par: allowed shortfall vs Gaussian PPO, as a fraction of "
                           "Gaussian PPO's gain over the trivial policy (zero action on every simulator here), judged "
                           "per seed as (TruDi - Gaussian) + par_tol (Gaussian - trivial) > 0")
    min_coverage: float = Field(gt=0.0, le=0.5, description="multimodal: minority-side share of episodes to count "
                                "as capturing both modes")
    plateau_window: float = Field(gt=0.0, le=0.5, description="plateau: the fraction of a curve's last iterations "
                                  "whose fitted slope is judged (at least plateau_min_iterations of them)")
    plateau_min_iterations: int = Field(ge=3, le=1000, description="plateau: the fewest iterations of the judged "
                                        "window (a slope interval needs >= 3 points)")
    plateau_sweep: dict[str, list[Annotated[int, Field(ge=1, le=10000)]]] = Field(
        description="per simulator: the declared budgets (iterations) of the plateau sweep, increasing; a simulator's "
                    "budget is the first one at which both compared curves pass the plateau rule. Budgets up to the "
                    "run's are judged on the curves' prefixes (seed i's first T iterations are its T-iteration run); "
                    "larger ones need a run at that budget")


class ScriptedParams(ParamsModel):
    """The scripted controllers of the competence ladder (scripted.py): no learning, the simulators' equations."""

    reacher_gain: float = Field(gt=0.0, le=100.0, description="k of the Jacobian-transpose P controller a = clip(k J^T "
                                "(target - tip))")
    pendulum_stiffness: float = Field(gt=1.0, le=20.0, description="the catch's PD stiffness as a multiple of the "
                                      "gravity stiffness 3 g / 2 l / (3 / m l^2) (> 1 holds the pendulum up)")
    detour_waypoint: float = Field(gt=0.5, le=2.0, description="|x| of the waypoints beside the obstacle (radius 0.5)")


class ControllerParams(ParamsModel):
    """The tuned simple controller of the competence ladder (controller.py): a static linear policy found by basic
    random search (ARS V1, Mania et al. 2018) within the RL methods' episode budget (ppo.iterations x ppo.n_envs)."""

    directions: int = Field(ge=1, le=1024, description="N: random directions per iteration (2 N candidates share the "
                            "iteration's n_envs episodes)")
    step: float = Field(gt=0.0, le=10.0, description="alpha: ARS step size (the update is scaled by the returns' spread)")
    noise: float = Field(gt=0.0, le=10.0, description="nu: scale of the weight perturbations")


class Plans(ParamsModel):
    """Sample-size plans of the judged comparisons (paperdag.common.plans), declared before the run."""

    seeds: SamplePlan = Field(description="intervals over the training seeds of every configuration (paired across "
                              "methods)")
    stress_seeds: SamplePlan = Field(description="TruDi's competence at the large learning rate, over stress_seeds")
    plateau: SamplePlan = Field(description="the plateau rule's slope intervals, over the iterations of each curve's "
                                "judged window (n: the fewest, plateau_min_iterations)")


class Params(ParamsModel):
    """Seeds, simulators, policies, the PPO loop, the stress and epsilon-sweep settings, the ladder's controller, claim
    thresholds and sample-size plans."""

    seed: int = Field(ge=0, description="root of every random draw")
    seeds: int = Field(ge=1, le=100, description="training seeds per configuration")
    stress_seeds: int = Field(ge=1, le=100, description="training seeds of TruDi at the large learning rate (its "
                              "competence precondition); its first ``seeds`` are paired with the baselines' seeds")
    stress_seed_offset: int = Field(ge=0, le=100000, description="the stress runs' seed i (every method) is torch seed "
                                    "1000 seed + stress_seed_offset + i: fresh seeds, none of them run before the "
                                    "stress plan was declared")
    lr: float = Field(gt=0.0, le=1.0, description="Adam learning rate of every method in the main comparison")
    epsilon: float = Field(gt=0.0, le=10.0, description="trust-region bound on the per-state chain KL of the "
                           "stability test (trudi, final); TruDi's main runs take Gaussian PPO's measured KL instead")
    policy: PolicyParams
    ppo: PPOParams
    stress_env: str = Field(description="environment of the large-learning-rate stability test")
    stress_lr: float = Field(gt=0.0, le=1.0, description="the large learning rate of the stability test")
    sweep_env: str = Field(description="environment of the epsilon sweep")
    sweep_epsilons: list[Positive] = Field(min_length=2, description="trust-region bounds of the epsilon sweep")
    eval_episodes: int = Field(ge=2, le=100000, description="episodes per evaluation of a trained policy")
    throughput_envs: list[Annotated[int, Field(ge=1)]] = Field(min_length=1, description="batch sizes whose kernels "
                                                                "per step call are counted")
    controller: ControllerParams
    scripted: ScriptedParams
    claims: ClaimParams
    plans: Plans

    @model_validator(mode="after")
    def _design(self) -> Params:
        if self.plans.seeds.n != self.seeds or self.plans.stress_seeds.n != self.stress_seeds:
            raise ValueError("plans.seeds.n must be seeds and plans.stress_seeds.n stress_seeds (each judged interval "
                             "has the units its plan declares)")
        if self.ppo.n_envs < 2 * self.controller.directions:
            raise ValueError("ppo.n_envs must give each of the controller's 2 x directions candidates an episode")
        if ({self.stress_env, self.sweep_env} - set(ENVS) or set(self.ppo.reward_scale) != set(ENVS)
                or set(self.ppo.iterations) != set(ENVS)):
            raise ValueError(f"stress_env, sweep_env, reward_scale and iterations keys must be among {ENVS}")
        if self.stress_seeds < self.seeds:
            raise ValueError("stress_seeds must be at least seeds (its first seeds are the paired ones)")
        if self.ppo.dppo.logp_min >= self.ppo.dppo.logp_max:
            raise ValueError("ppo.dppo.logp_min must be below logp_max")
        if self.policy.sigma_min > self.policy.sigma_max:
            raise ValueError("policy.sigma_min must not exceed policy.sigma_max")
        sweep = self.claims.plateau_sweep
        if set(sweep) != set(ENVS) or any(sorted(set(v)) != v for v in sweep.values()):
            raise ValueError(f"claims.plateau_sweep needs an increasing list of budgets for each of {ENVS}")
        if self.plans.plateau.n != self.claims.plateau_min_iterations or self.plans.plateau.unit != "iteration":
            raise ValueError("plans.plateau is over iterations, n = claims.plateau_min_iterations")
        if sorted(self.sweep_epsilons) != self.sweep_epsilons:
            raise ValueError("sweep_epsilons must be increasing")
        return self
