"""Dataset distillation for two-layer ReLU networks on multi-index models (ICML 2026 submission).

Claim under test: gradient-based distillation of the two-phase training of a width-L two-layer network on a
multi-index task y = g(U^T x) (x in R^d, U in R^{d x r}) yields a small synthetic set that (i) trains the network to
the full-data test error, (ii) encodes span(U), and (iii) needs memory ~Theta(r^2 d + L) numbers (the size of the
paper's algorithm's output: tested as an upper bound on the memory an inferred distiller needs, per phase, at a
target near the reference error).

Methods: the one-step feature-learning algorithm (Damian, Lee & Soltanolkotabi 2022; Ba et al. 2022; network.py);
distillation by phase-1 gradient matching (Zhao, Mopuri & Bilen 2021) and phase-2 kernel-ridge performance matching
(Nguyen, Chen & Lee 2021) (distill.py). Real-data baselines compared by the memory each needs to reach the same
error (baselines.py): a random subset of real data (both phases, ridge lam chosen on validation) and the phase-1
step on random real points, beside a k-center coreset of equal memory (Sener & Savarese 2018); sanity baselines: the
zero predictor and random features (no phase 1).

Data: procedural, nothing downloaded (task.py): x ~ N(0, I_d), y = z^T C z - tr C with z = U^T x (second Hermite
polynomials plus a nearest-neighbour interaction), U Haar-random; every draw from SeedSequence([seed, d, r, stream]).
The prepare stage stores U and C per task and the sha256 of the tasks and of the test inputs in provenance.json.
"""
