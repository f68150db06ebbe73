"""The mixed-autonomy platoon (model.py) and its certificates: the vector certificate and condition (C)
(certificate.py) on the delay domains of domain.py, learned by CEGIS (cegis.py) and verified follower by follower
(certify.py); the baseline controller (uncertified.py); evaluation.py measures them. (The monolithic baseline runs
on the network rings, where certificates of this form exist: networks/monolithic.py.)

Why the platoon cannot be certified in this form (and the networks can)
----------------------------------------------------------------------
With absolute velocity errors, a follower whose predecessor cruises at a constant error c has an equilibrium
x_i = (c / kappa, c) (HDV) or (k_d c / k_s, c) (CAV, nominal law; any controller that holds a steady spacing
behind a constant-speed predecessor has one): x_i(k+1) = x_i(k) with constant histories (delta = 0, inside every
delay domain), so, scaling the query to level c_0, V_i(x_i) <= rho max(V_i(x_i), V_p(x_p))
forces V_i(s_i(c)) <= rho min_e V_p(e, c) along the chain. An HDV-after-CAV row and a CAV-after-HDV row (present
for N >= 3 with cav_period 2) give V_CAV(s_C) <= rho min V_HDV(., c) <= rho V_HDV(s_H) <= rho^2 V_CAV(s_C), which is
impossible for c != 0 and any positive definite V with rho < 1 (velocity errors propagate with DC gain 1).
Every platoon certificate is therefore refuted, as measured. The network systems have absolute feedback
(formation anchor, grid tie), so no such equilibrium family exists and the strict condition can hold; there the
certificates are proved.

Implemented sufficient condition (per follower i, verified compositionally)
-------------------------------------------------------------------------
Notation: B = [-S, S] x [-E, E] state box; V_i >= 0 bias-free ReLU certificate, positive definite and positively
homogeneous (certificate.py); c_0 <= min over the boundary of B of every V_type (exact MILP), so the level set
Omega(c) = {V <= c} lies in (c / c_0) B; rows (c_ii, c_ij) >= 0 with c_ii + c_ij = rho < 1 (comparison matrix
I - A with ||.||_inf = rho); Delta_i = exact bound of |x_i(k+1) - x_i(k)| over the full delay domain.
For all z = (x, x^d, x_p, x_p^d, w) with x, x^d, x_p, x_p^d in B, |x - x^d| <= tau Delta_i,
|x_p - x_p^d| <= tau Delta_{i-1} (reachability-constrained delay domain), |w| <= w_bar, and
level(z) = max(V_i(x), V_i(x^d), V_p(x_p), V_p(x_p^d)) <= c_0:

    (C)  V_i(f_i(z)) <= max( c_ii max(V_i(x), V_i(x^d)) + c_ij max(V_p(x_p), V_p(x_p^d)) + gamma_i |w| ,  rho c_0 )

Why (C) implies sISS with N-independent constants. Let M(k) = max over followers i and theta in [0, 2 tau] of
V_i(x_i(k - theta)) and lambda = max(M(k) / c_0, w_true / w_bar) <= 1 (w_true = actual disturbance bound).
All states in the window lie in Omega(lambda c_0), inside lambda B, so every one-step increment is at most
lambda Delta (the closed loop and all nets are positively homogeneous, and the OVM clip is inactive on B), hence
the query at time k lies in lambda * (verified domain) with level <= lambda c_0. Scaling (C) by lambda
(G_i(lambda z; lambda c_0) = lambda G_i(z; c_0)) gives, because max_{theta<=tau} V >= max over {0, tau},
    V_i(x_i(k+1)) <= rho max(M(k), c_0 w_true / w_bar) + gamma w_true,
a discrete Halanay inequality over windows of length 2 tau + 1, so for all k
    M(k) <= rho^floor(k / (2 tau + 1)) M(0) + (rho c_0 / w_bar + gamma) w_true / (1 - rho),
and Omega(c_0) is forward invariant when rho c_0 + gamma w_true <= c_0. With c_0 |x|_B <= V(x) <= c_1 |x|_B
(|x|_B = max(|e_s| / S, |e_v| / E)) this is ISS of sup_i |x_i|_B with decay rho^(1/(2 tau + 1)) per step, overshoot
c_1 / c_0 and gain (rho c_0 / w_bar + gamma) / (c_0 (1 - rho)): every constant is a per-type (or max over a fixed
family of follower parameters) quantity, independent of N. The issue's condition (current V_i on the own term) is
recovered with the own history max; the floor rho c_0 covers queries whose own level is far below the window max.

Certificate class used by default: certificate.hidden = 0, i.e. V(x) = ||W y||_1 + eps ||y||_1 (a one-hidden-layer
ReLU net with tied weights, |t| = relu(t) + relu(-t): a polyhedral norm). With a ReLU hidden layer
(certificate.hidden > 0) the learned certificates kept violating (C) on sampled points in our runs; the polyhedral
one reached zero sampled violations, but tends to very flat level sets (c_1 / c_0 large), which makes the
level-set-restricted domain hard for branch and bound (see the claims).
"""
