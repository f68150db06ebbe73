"""Distributional active inference (ICML 2026 submission, the active-inference paragraph of the abstracts).

Claim under test: active inference folded into distributional RL gives its sample-efficiency advantage without a
transition model. At our scale: on DeepSea (hard exploration, bsuite's protocol) an agent choosing actions by expected
free energy computed from a Bayesian quantile critic alone has a higher area under the learning curve than QR-DQN and
than the same critic at lambda = 0 exploring by dithering or by posterior sampling, and on a dense-reward task
(CartPole) it is on par with QR-DQN. The abstract's "organising sensory state" half is out of scope (no observation
model is learnt) and is reported as an inconclusive claim. Two critics carry the same free-energy agent: the paper's
Normal-Inverse-Gamma quantile head (``daif_nig``, nig.py) and an ensemble variant (``daif``, below); each is held to
the same claims.

Method (nig.py): per action and quantile a NIG posterior (gamma, nu, alpha, beta) (deep evidential regression, Amini
et al. 2020, NeurIPS), gamma trained by the quantile loss, the evidence by the evidential NLL and regulariser on a
posterior draw of the Bellman target; its epistemic variance beta / (nu (alpha - 1)) enters the same IG; the
regulariser weight is picked from a declared grid by whether that variance still separates never-taken from taken
(s, a) (nig_grid.py), the precondition of its claims.
Ensemble variant (free_energy.py, agents.py): QR-DQN critics (Dabney et al. 2018, AAAI) made Bayesian as an ensemble with
antithetic randomized prior functions (Osband et al. 2018, NeurIPS); a_t = argmin_a -E[Z(s,a)] - lambda IG(s,a), IG
the Gaussian information gain about the return quantiles (Friston et al. 2015 epistemic value). Baselines: QR-DQN
with epsilon-greedy, and the same ensemble at lambda = 0 with epsilon-greedy or per-episode posterior sampling
(bootstrapped DQN, Osband et al. 2016); same torso, optimiser, replay, budget and environment seeds for all; lambda and
sigma_0^2 are per the task's return scale, its optimal return (training.free_energy_weights). Ladders (ladder.py):
competence against the uniform random policy and random search over a simple controller class (Mania et al. 2018);
exploration against the uniform random policy and explore-then-commit (random for E episodes, E from the reach
formula, then greedy on visit-count Q).

Data: no download. DeepSea is procedural (Osband et al. 2020, bsuite's deep_sea.py: +1 only for "right" at
(N - 1, N - 1); envs.py, bsuite's action-mapping draw per seed; sizes and
episode budget from bsuite's deep_sea sweep and score, params.yaml); CartPole-v1 comes with gymnasium. The prepare
stage records the gymnasium version, the seeds, sha256 of the DeepSea mappings and the trivial policies' returns.
"""
