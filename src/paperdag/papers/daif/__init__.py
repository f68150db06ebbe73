"""Distributional active inference (ICML 2026 submission, the active-inference paragraph of the abstracts).

Claim under test: active inference folded into distributional RL gives its sample-efficiency advantage without a
transition model. At our scale: on DeepSea (hard exploration) an agent choosing actions by expected free energy
computed from a Bayesian quantile critic alone has a higher area under the learning curve than QR-DQN, the gain
vanishes at lambda = 0, and on a dense-reward task (CartPole) it is on par with QR-DQN.

Method (free_energy.py, agents.py): QR-DQN critics (Dabney et al. 2018, AAAI) made Bayesian as an ensemble with
antithetic randomized prior functions (Osband et al. 2018, NeurIPS); a_t = argmin_a -E[Z(s,a)] - lambda IG(s,a), IG
the Gaussian information gain about the return quantiles (Friston et al. 2015 epistemic value). Baselines: DQN
(Mnih et al. 2015, Nature) and QR-DQN with epsilon-greedy, and the same agent with lambda = 0; same torso, optimiser,
replay, budget and environment seeds for all (training.py).

Data: no download. DeepSea is procedural (Osband et al. 2020, bsuite; envs.py, action mapping per seed);
CartPole-v1 comes with gymnasium. The prepare stage records the gymnasium version, the seeds, a
sha256 of the DeepSea mappings and the returns of the trivial (random, constant-action) policies.
"""
