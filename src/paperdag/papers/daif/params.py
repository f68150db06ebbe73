"""Parameters of daif (its block of params.yaml). No defaults: params.yaml is the one source of values."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from paperdag.common.plans import SamplePlan
from paperdag.params import ParamsModel


class TaskBudget(ParamsModel):
    """Interaction budget of the dense-reward task (the same for every agent)."""

    steps: int = Field(ge=50, le=1_000_000, description="environment steps per seed")
    max_episode_steps: int = Field(ge=1, le=10_000, description="episode cap (TimeLimit)")
    reward_scale: float = Field(gt=0.0, le=1.0, description="rewards the agents learn from are r * scale (every "
                                                            "agent alike; returns are reported unscaled)")


class DeepSeaParams(ParamsModel):
    """DeepSea sizes and budget from bsuite's deep_sea protocol (Osband et al. 2020; bsuite/experiments/deep_sea:
    sweep.py runs 10000 episodes at each size N in 5-10, 12, 14, 17, 20, 25, 30-50; analysis.py calls a size solved
    at the first episode e where the running fraction of bad episodes drops below 0.8, and scores it only if
    e < 2^N + 100, the horizon that beats dithering). Every DeepSea task runs min(bsuite_episodes, 2^size + forgiveness)
    episodes: the horizon of the larger size, beyond which bsuite's score of that size cannot change."""

    size: int = Field(ge=4, le=50, description="N of the hard-exploration task (a bsuite deep_sea sweep size)")
    small_size: int = Field(ge=4, le=50, description="N of the competence task (a bsuite sweep size where dithering "
                            "meets the reward many times within the budget)")
    bsuite_episodes: int = Field(ge=10, le=10_000, description="episodes per size in bsuite's protocol (sweep.py "
                                 "NUM_EPISODES = 10000); smaller only in the smoke profile")
    forgiveness: int = Field(ge=0, le=10_000, description="bsuite deep_sea score: solved counts only before 2^N + "
                             "forgiveness episodes (analysis.py score, 100)")
    solve_bad_fraction: float = Field(gt=0.0, lt=1.0, description="bsuite find_solution thresh: solved at the first "
                                      "episode where (bad episodes so far) / episodes < this (0.8)")
    reward_scale: float = Field(gt=0.0, le=1.0, description="rewards the agents learn from are r * scale")

    def episodes(self) -> int:
        """Episodes per seed at every DeepSea size: min(bsuite_episodes, 2^size + forgiveness)."""
        return min(self.bsuite_episodes, 2**self.size + self.forgiveness)


class TaskParams(ParamsModel):
    """The exploration tasks (DeepSea at the competence and the hard size) and the dense-reward task."""

    deepsea: DeepSeaParams
    cartpole: TaskBudget


class LearningParams(ParamsModel):
    """Shared by every agent: network, optimiser, replay, target network, TD loss, epsilon schedule."""

    hidden: int = Field(ge=4, le=1024, description="width of both hidden layers of every critic")
    lr: float = Field(gt=0.0, le=0.1, description="Adam learning rate")
    gamma: float = Field(gt=0.0, lt=1.0, description="discount factor")
    batch: int = Field(ge=1, le=4096, description="minibatch size per critic per update")
    buffer: int = Field(ge=100, le=10_000_000, description="replay capacity per seed")
    learning_starts: int = Field(ge=1, description="steps of pure acting before the first update")
    train_every: int = Field(ge=1, le=100, description="environment steps per gradient update")
    target_every: int = Field(ge=1, description="steps between hard target-network syncs")
    kappa: float = Field(ge=0.0, le=100.0, description="Huber threshold of the TD and quantile losses")
    eps_start: float = Field(ge=0.0, le=1.0, description="initial epsilon of the epsilon-greedy baselines")
    eps_end: float = Field(ge=0.0, le=1.0, description="final epsilon of the epsilon-greedy baselines")
    eps_decay_frac: float = Field(gt=0.0, le=1.0, description="fraction of the budget over which epsilon decays")


class BayesParams(ParamsModel):
    """The distributional critics and the free-energy agent."""

    quantiles: int = Field(ge=2, le=256, description="quantiles K per action (QR-DQN and DAIF)")
    members: int = Field(ge=2, le=64, description="ensemble members M of the Bayesian critic (even: antithetic priors)")
    prior_scale: float = Field(gt=0.0, le=100.0, description="beta of the randomized prior functions")
    lam: float = Field(gt=0.0, le=100.0, description="lambda: weight of the information gain in G (return per nat, in "
                       "units of the task's return scale R, its optimal return)")
    noise_floor: float = Field(gt=0.0, le=10.0, description="sigma_0^2 added to the aleatoric variance in IG (in units "
                               "of R^2)")


class NIGParams(ParamsModel):
    """The NIG (evidential) quantile critic of ``daif_nig`` (nig.py); its quantiles, lambda and sigma_0^2 are
    ``bayes``'s. Its regulariser weight is picked from ``reg_grid`` by the information-gain precondition alone
    (nig_grid.py)."""

    reg_grid: list[float] = Field(min_length=1, max_length=8, description="weights of the evidence regulariser "
                                  "|y - gamma| (2 nu + alpha) in the evidential loss to pick from (Amini et al. 2020, "
                                  "deep evidential regression: 0.01 in their benchmarks)")
    grid_seeds: int = Field(ge=2, le=64, description="seeds per grid weight (their own, disjoint from every judged "
                            "seed: nig_grid.grid_seeds)")
    variance_factor: float = Field(gt=1.0, le=1000.0, description="information-gain precondition: the critic's "
                                   "epistemic variance at never-taken (s, a) over taken ones must exceed this factor "
                                   "(interval of the mean log ratio over seeds above its log)")

    @model_validator(mode="after")
    def _grid(self) -> NIGParams:
        if any(not 0.0 <= r <= 10.0 for r in self.reg_grid) or len(set(self.reg_grid)) != len(self.reg_grid):
            raise ValueError("nig.reg_grid: distinct weights in [0, 10]")
        return self


class EvalParams(ParamsModel):
    """Learning curves and evaluation."""

    eval_episodes: int = Field(ge=1, le=1000, description="greedy evaluation episodes per seed after training")
    random_episodes: int = Field(ge=10, le=100_000, description="episodes of the uniform random policy per task")
    curve_bins: int = Field(ge=2, le=1000, description="step bins of a learning curve (its AULC is their mean)")


class ClaimParams(ParamsModel):
    """Thresholds of the claims (claims.py): described, set in params.yaml, never tuned to make a claim pass."""

    confidence: float = Field(gt=0.5, lt=1.0, description="level of the t confidence bands of the figures (the claims "
                              "are judged at their plan's level)")
    par_margin: float = Field(gt=0.0, le=1.0, description="on par: normalised-AULC deficit vs QR-DQN allowed "
                                                          "(non-inferiority margin on the CI's lower end)")
    gain_margin: float = Field(ge=0.0, le=1.0, description="a sample-efficiency gain worth the name: the normalised-"
                               "AULC difference must exceed this (superiority margin: an interval wholly below it "
                               "fails)")
    gain_margins_shown: list[float] = Field(min_length=1, max_length=6, description="gain_margin has no published "
                                            "source: each exploration claim also reports its verdict at each of "
                                            "these margins (declared before the run), beside the one judged")
    learned_min: float = Field(gt=0.0, le=1.0, description="competence precondition: the fraction of the way from the "
                               "strongest baseline rung r to the optimum that an agent's normalised greedy score s must "
                               "close, per seed s - r - learned_min (1 - r) > 0 (with r = 0, the best state-ignoring "
                               "policy: s > learned_min)")
    match_fraction: float = Field(gt=0.0, lt=1.0, description="competence where the strongest rung is optimal on every "
                                  "seed (nothing can beat it): the fraction of seeds on which the agent matches it "
                                  "within 1 - learned_min must exceed this (Clopper-Pearson interval)")


class Plans(ParamsModel):
    """Sample-size plans of the judged comparisons (paperdag.common.plans), declared before the run."""

    seeds: SamplePlan = Field(description="intervals over the shared environment seeds: every paired comparison and "
                              "every competence precondition but the NIG agent's on the small DeepSea")
    nig_competence: SamplePlan = Field(description="the NIG agent's small-DeepSea competence over "
                                       "nig_competence_seeds seeds")


class TrendParams(ParamsModel):
    """The CartPole competence trend (trend.py, a diagnostic no stage reads): each agent at each step budget."""

    root: int = Field(ge=0, description="root seed of the trend's environment seeds (1000 root + i): neither the "
                      "judged root (seed), nor the replicate's, nor the pilot's 0")
    seeds: int = Field(ge=2, le=64, description="environment seeds per run, batched as in a train stage")
    agents: tuple[Literal["daif", "daif_lam0_eps", "daif_lam0_ps", "qrdqn"], ...] = Field(
        min_length=1, description="the ensemble agents (agents.AGENT_NAMES) to train")
    steps: tuple[int, ...] = Field(min_length=1, description="CartPole step budgets, ascending: one run of each (the "
                                   "epsilon schedule scales with the budget, so a checkpoint is not a shorter run)")


class Params(ParamsModel):
    """Seeds, tasks, learning, Bayesian critic, evaluation, claim thresholds and the CartPole trend's sizes."""

    seed: int = Field(ge=0, description="root of every random draw (environment seeds derive from it)")
    seeds: int = Field(ge=2, le=64, description="independent seeds per (agent, task), batched in one stage")
    nig_competence_seeds: int = Field(ge=2, le=256, description="seeds of the NIG agent's small-DeepSea competence "
                                      "stage alone (competence.py): the shared seeds, then fresh ones; as many as "
                                      "the power argument in params.yaml asks for")
    tasks: TaskParams
    learning: LearningParams
    bayes: BayesParams
    nig: NIGParams
    evaluation: EvalParams
    claims: ClaimParams
    plans: Plans
    trend: TrendParams

    @model_validator(mode="after")
    def _design(self) -> Params:
        if self.trend.root in (0, self.seed):
            raise ValueError("trend.root must differ from the judged root (seed) and the pilot's 0")
        if self.plans.seeds.n != self.seeds or self.plans.nig_competence.n != self.nig_competence_seeds:
            raise ValueError("plans.seeds.n must be seeds and plans.nig_competence.n nig_competence_seeds (each "
                             "judged interval has the units its plan declares)")
        if self.bayes.members % 2:
            raise ValueError("bayes.members must be even (antithetic prior pairs)")
        if self.nig_competence_seeds > 500:
            raise ValueError("nig_competence_seeds must stay below the grid's seed offset (500: nig_grid.py)")
        if self.nig_competence_seeds < self.seeds:
            raise ValueError("nig_competence_seeds must not be below seeds (it extends the shared seeds)")
        if self.learning.eps_end > self.learning.eps_start:
            raise ValueError("learning.eps_end must not exceed learning.eps_start")
        sea = self.tasks.deepsea
        if sea.small_size >= sea.size:
            raise ValueError("tasks.deepsea.small_size must be below tasks.deepsea.size")
        for name, steps in (("deepsea", sea.small_size * sea.episodes()), ("cartpole", self.tasks.cartpole.steps)):
            if steps <= self.learning.learning_starts:
                raise ValueError(f"the {name} budget ({steps} steps) must exceed learning.learning_starts")
        return self
