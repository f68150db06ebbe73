"""The mixed-autonomy platoon (model.py) and its certificates: the vector certificate and condition (C)
(certificate.py) on the delay domains of domain.py, learned by CEGIS (cegis.py) and verified follower by follower
(certify.py); the baseline controller (uncertified.py); evaluation.py measures them. (The monolithic baseline runs
on the network rings, where certificates of this form exist: networks/monolithic.py.)

Why the certificate is stated in relative errors
-----------------------------------------------
With absolute velocity errors (e_s, e_v), a follower whose predecessor cruises at a constant error c has an
equilibrium x_i = (h_i c, c), h_i = 1 / kappa (HDV) or k_d / k_s (CAV, nominal law; any controller that holds a
steady spacing behind a constant-speed predecessor has one): x_i(k+1) = x_i(k) with constant histories (delta = 0,
inside every delay domain), so, scaling the query to level c_0, V_i(x_i) <= rho max(V_i(x_i), V_p(x_p)) forces
V_i(s_i(c)) <= rho min_e V_p(e, c) along the chain. An HDV-after-CAV row and a CAV-after-HDV row (present for
N >= 3 with cav_period 2) give V_CAV(s_C) <= rho min V_HDV(., c) <= rho V_HDV(s_H) <= rho^2 V_CAV(s_C), impossible
for c != 0 and any positive definite V with rho < 1 (velocity errors pass on with DC gain 1): every certificate of
that form was refuted (16/16 followers, ``evaluation.gain_one_equilibria``, reported beside).

The certificate therefore acts on the errors relative to the predecessor's equilibrium (``model.relative``):

    xr_i = (s~_i, v~_i) = (e_s,i - h_i e_v,i-1, e_v,i - e_v,i-1)

(the spacing error at the predecessor's speed, the relative speed), in which every constant-speed state of the
chain, at any speed, is the origin. Both control laws are functions of the delayed relative errors alone
(``model.relative_gain``: HDV alpha kappa s~ - (alpha + beta) v~, CAV k_s s~ - (k_v + k_d) v~, plus the CAV residual
pi(s~ / S, v~ / E)), so u_i = a_i(xr_i^d), and from e_s(k+1) = e_s + dt (e_vp - e_v), e_v(k+1) = e_v + dt (u + w)
of follower and predecessor (``model.relative_step``):

    s~_i(k+1) = s~_i - dt v~_i - h_i dt (u_p + w_p),     v~_i(k+1) = v~_i + dt (u_i + w_i - u_p - w_p),
    u_p = a_{i-1}(xr_{i-1}(k - tau))   (0 for follower 1, whose w_p is the leader's acceleration, |a_0| <= w_bar),

a cascade in which follower i sees its predecessor only through the predecessor's delayed relative errors and
disturbance: the query of follower i is z = (x, delta, x_p, delta_p, w_i, w_p), all in relative errors.
The verified law is the unclipped OVM: the certificate speaks for the platoon while every HDV's spacing stays in
the OVM's linear range (s_st, s_go) (at equilibrium: a speed in (0, v_max)); ``Platoon.ovm_linear_on_box`` states
this for the cruise speed v* and the spacing box.

What can still rule a strict certificate out (``platoon_certificate_can_exist``, ``evaluation.relative_equilibria``):
a nonzero constant-history equilibrium of the chain in relative errors (leader at constant speed, w = 0). At one,
take a follower i with maximal V_i(xr_i) = M > 0 at the level c_0 = M (homogeneity): (C) gives
V_i(xr_i) <= max(c_ii M + c_ij V_p(xr_p), rho M) <= rho M < M, a contradiction. Such an equilibrium needs
v~_i(k+1) = v~_i and s~_i(k+1) = s~_i, i.e. u_i = u_p and v~_i = -h_i u_p; from the leader (u_0 = 0) on, u_p = 0 by
induction, so v~_i = 0 and a_i(s~_i, 0) = 0 with s~_i != 0. a_i is positively homogeneous, so this happens iff
a_i(S, 0) = 0 or a_i(-S, 0) = 0: two exact evaluations per follower (the nominal laws never vanish there,
alpha kappa, k_s > 0; a residual can cancel k_s). The condition is necessary, not sufficient: whether (C) holds is
what the verifier decides.

A second, stronger necessary condition (``platoon_cascade_admits_contraction``, cascade.py): constant *accelerations*
pass on at DC gain 1 (every follower holding a constant relative state has u_i = u_p). Behind a leader at constant
acceleration a (|a| <= w_bar, the disturbance of follower 1) every follower holds a constant relative state x_i(a)
that depends only on its own law, a constant history inside both delay domains, and (C) of followers i >= 2 (w = 0)
forces V_i(x_i) <= rho V_{i-1}(x_{i-1}); two followers j < i with the same law (the CAVs share gains and residual)
have x_i = x_j, so V(x_j) <= rho^(i - j) V(x_j): impossible. The linear delayed loops' spectral radii and the
HDV-CAV string-stability loop gains are computed beside (cascade.py).

Implemented sufficient condition (per follower i, verified compositionally)
-------------------------------------------------------------------------
Notation: B = [-S, S] x [-E, E] box of the relative errors; V_i >= 0 bias-free ReLU certificate, positive definite and positively
homogeneous (certificate.py); c_0 <= min over the boundary of B of every V_type (exact MILP), so the level set
Omega(c) = {V <= c} lies in (c / c_0) B; rows (c_ii, c_ij) >= 0 with c_ii + c_ij = rho < 1 (comparison matrix
I - A with ||.||_inf = rho); Delta_i = exact bound of |xr_i(k+1) - xr_i(k)| over the full delay domain.
For all z = (x, x^d, x_p, x_p^d, w, w_p) (relative errors) with x, x^d, x_p, x_p^d in B, |x - x^d| <= tau Delta_i,
|x_p - x_p^d| <= tau Delta_{i-1} (reachability-constrained delay domain), |w|, |w_p| <= w_bar, and
level(z) = max(V_i(x), V_i(x^d), V_p(x_p), V_p(x_p^d)) <= c_0:

    (C)  V_i(f_i(z)) <= max( c_ii max(V_i(x), V_i(x^d)) + c_ij max(V_p(x_p), V_p(x_p^d))
                             + gamma_i (|w| + |w_p|) ,  rho c_0 )

Why (C) implies sISS of the relative errors with N-independent constants (w_true bounds every disturbance and
the leader's acceleration; each gamma below stands for 2 gamma, the two channels). Let M(k) = max over followers i and theta in [0, 2 tau] of
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
