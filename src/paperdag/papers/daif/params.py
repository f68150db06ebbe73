"""Parameters of daif (its block of params.yaml). No defaults: params.yaml is the one source of values."""

from __future__ import annotations

from pydantic import Field, model_validator

from paperdag.params import ParamsModel


class TaskBudget(ParamsModel):
    """Interaction budget of one task (the same for every agent)."""

    steps: int = Field(ge=50, le=1_000_000, description="environment steps per seed")
    max_episode_steps: int = Field(ge=1, le=10_000, description="episode cap (TimeLimit); DeepSea ignores it (N)")
    reward_scale: float = Field(gt=0.0, le=1.0, description="rewards the agents learn from are r * scale (every "
                                                            "agent alike; returns are reported unscaled)")


class TaskParams(ParamsModel):
    """The exploration task and the dense-reward task."""

    deepsea_size: int = Field(ge=4, le=30, description="DeepSea size N (grid N x N, episodes of N steps)")
    deepsea: TaskBudget
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
    lam: float = Field(gt=0.0, le=100.0, description="lambda: weight of the information gain in G (reward per nat)")
    noise_floor: float = Field(gt=0.0, le=10.0, description="sigma_0^2 added to the aleatoric variance in IG")


class EvalParams(ParamsModel):
    """Learning curves and evaluation."""

    eval_episodes: int = Field(ge=1, le=1000, description="greedy evaluation episodes per seed after training")
    random_episodes: int = Field(ge=10, le=100_000, description="episodes of the uniform random policy per task")
    curve_bins: int = Field(ge=2, le=1000, description="step bins of a learning curve (its AULC is their mean)")


class ClaimParams(ParamsModel):
    """Thresholds of the claims (claims.py): described, set in params.yaml, never tuned to make a claim pass."""

    confidence: float = Field(gt=0.5, lt=1.0, description="level of the paired t confidence intervals over seeds")
    par_margin: float = Field(gt=0.0, le=1.0, description="on par: normalised-AULC deficit vs QR-DQN allowed "
                                                          "(non-inferiority margin on the CI's lower end)")
    learned_min: float = Field(gt=0.0, le=1.0, description="competence precondition on a dense task: the normalised "
                               "greedy score's interval must lie above this (0 = best state-ignoring policy, "
                               "1 = optimal)")


class Params(ParamsModel):
    """Seeds, tasks, learning, Bayesian critic, evaluation and claim thresholds."""

    seed: int = Field(ge=0, description="root of every random draw (environment seeds derive from it)")
    seeds: int = Field(ge=2, le=64, description="independent seeds per (agent, task)")
    tasks: TaskParams
    learning: LearningParams
    bayes: BayesParams
    evaluation: EvalParams
    claims: ClaimParams

    @model_validator(mode="after")
    def _design(self) -> Params:
        if self.bayes.members % 2:
            raise ValueError("bayes.members must be even (antithetic prior pairs)")
        if self.learning.eps_end > self.learning.eps_start:
            raise ValueError("learning.eps_end must not exceed learning.eps_start")
        for name in ("deepsea", "cartpole"):
            if getattr(self.tasks, name).steps <= self.learning.learning_starts:
                raise ValueError(f"tasks.{name}.steps must exceed learning.learning_starts")
        return self
