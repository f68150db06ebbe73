"""Neural vector Lyapunov-Razumikhin certificates for delayed interconnected systems (ICML 2026 submission).

Claim under test: neural vector Lyapunov-Razumikhin certificates, learned and soundly verified subsystem by subsystem
on reachability-constrained delay domains, give scalable input-to-state stability (sISS) of discrete-time delayed
interconnected systems, with verification time about linear in N where a monolithic certificate times out.

Methods: CEGIS of a vector certificate (per-type polyhedral/ReLU V and a comparison matrix with row sums rho < 1)
and a certified residual controller (platoon/cegis.py, networks/cegis.py); sound verification by CROWN/IBP bounds
(Zhang et al. 2018) with input branch and bound and the exact big-M MILP (Tjeng et al. 2019) on HiGHS (verifier/);
the sISS argument is in platoon/__init__.py. Baselines: the same certificate on the full delay domain, a monolithic
scalar certificate (platoon/monolithic.py), the LMI quadratic certificate (networks/lmi.py), the nominal linear and
an uncertified neural controller (platoon/uncertified.py).

Data: procedural, no download (stages/prepare.py): a mixed-autonomy platoon (optimal-velocity HDVs, CAVs) and two
rings of heterogeneous 2-state subsystems with delayed feedback, a drone formation and a droop-controlled microgrid,
dt = 0.1, parameters drawn from the ranges in params.yaml.
"""
