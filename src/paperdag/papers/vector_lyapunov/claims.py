"""The paper's claims restated for our scale: pure functions from measured results to ``Claim``s."""

from __future__ import annotations

import numpy as np

from paperdag.claims import Claim

from .networks.evaluation import NetworkResults
from .params import ClaimParams
from .platoon.evaluation import PlatoonResults


def _linear(slope: float, p: ClaimParams) -> bool:
    return bool(p.slope_range[0] <= slope <= p.slope_range[1])


def _band(p: ClaimParams) -> str:
    return f"log-log slope in [{p.slope_range[0]:g}, {p.slope_range[1]:g}]"


def platoon_claims(r: PlatoonResults, p: ClaimParams) -> list[Claim]:
    """Verified for every N, time about linear in N, monolithic baseline slower and failing, reachability helps,
    the certified controller competitive, and no falsified verified certificate."""
    scal, full, mono = r.reach, r.full, r.monolithic
    ns = scal["n"]
    mono_fail_n = min([m["n"] for m in mono if not m["verified"]], default=None)
    vec_at = dict(zip(ns, scal["seconds"]))
    sims = r.control
    perf_ratio = sims["certified"]["rms_spacing"] / sims["uncertified"]["rms_spacing"]
    string_ratio = sims["certified"]["string_ratio"] / sims["uncertified"]["string_ratio"]
    n_viol = sum(f["violations"] for f in r.falsified_verified.values())
    reach_ok, full_ok = r.reach_summary["verified"], r.full_summary["verified"]
    return [
        Claim("platoon_verified_all_n",
              f"platoon: the vector certificate is soundly verified for every N in {ns} (reachability-constrained "
              "domain)",
              "verified for all N", {"verified": scal["verified"]}, all(scal["verified"])),
        Claim("platoon_time_linear",
              f"platoon: compositional verification time grows about linearly in N ({_band(p)})",
              "about linear", {"slope": r.slope, "seconds": scal["seconds"]}, _linear(r.slope, p)),
        Claim("platoon_monolithic_fails_beyond_small_n",
              "platoon: the monolithic certificate is not verified within its timeout beyond small N, while the vector "
              "one is",
              "times out beyond small N",
              {"mono_verified_n": [m["n"] for m in mono if m["verified"]], "mono_first_failing_n": mono_fail_n,
               "mono_seconds": [m["seconds"] for m in mono]},
              bool(mono_fail_n is not None and mono_fail_n <= max(ns) and all(scal["verified"]))),
        Claim("platoon_monolithic_slower",
              "platoon: at every N the monolithic verification costs more time than the compositional one",
              "much faster growth", {"mono": [m["seconds"] for m in mono],
                                     "vector": [vec_at.get(m["n"]) for m in mono]},
              all(m["seconds"] > vec_at.get(m["n"], np.inf) for m in mono if m["n"] in vec_at)),
        Claim("platoon_reachability_improves_verification",
              "platoon: the reachability-constrained domain is verified while the full delay domain baseline is not, "
              "or with fewer cells",
              "improved verification efficiency",
              {"reach_verified": reach_ok, "full_verified": full_ok,
               "reach_cells": scal["cells"][-1], "full_cells": full["cells"][-1]},
              bool(reach_ok and (not full_ok or scal["cells"][-1] < full["cells"][-1]))),
        Claim("platoon_competitive_control",
              "platoon: certified controller's RMS spacing error and string-stability ratio within "
              f"{p.control_tol:.0%} of the uncertified one",
              "competitive control performance", {"rms_ratio": perf_ratio, "string_ratio_ratio": string_ratio},
              bool(perf_ratio <= 1 + p.control_tol and string_ratio <= 1 + p.control_tol)),
        Claim("platoon_verified_certificates_hold",
              "platoon: dense random + gradient falsification finds no violation of any certificate reported verified",
              "sound", {"searched": list(r.falsified_verified), "violations": n_viol},
              bool(r.falsified_verified) and n_viol == 0),
    ]


def network_claims(r: NetworkResults, n_grid: list[int], taus: list[int], tau_n: int, p: ClaimParams) -> list[Claim]:
    """Per system: verified for every N and time about linear in N; then every delay verified, reachability
    needed, neural at least as good as LMI, and verified certificates neither falsified nor violated in simulation."""
    claims = []
    for system, scal in r.scaling.items():
        claims.append(Claim(
            f"{system}_verified_all_n",
            f"{system}: the vector certificate (tau={taus[0]}) is soundly verified for every N in {n_grid}",
            "verified for all N", {"verified": scal["verified"], "seconds": scal["seconds"]}, all(scal["verified"])))
        claims.append(Claim(
            f"{system}_time_linear", f"{system}: compositional verification time grows about linearly in N "
            f"({_band(p)})", "about linear", {"slope": r.slopes[system], "seconds": scal["seconds"]},
            _linear(r.slopes[system], p)))
    claims.append(Claim("network_delays_verified", f"the vector certificates are verified for every delay tau in "
                        f"{taus} (N={tau_n} for tau > {taus[0]})", "tau in {1, 2, 3}", r.neural,
                        all(r.neural.values())))
    claims.append(Claim("network_reachability_needed", "with the reachability-constrained delay domain the "
                        "certificate is verified, on the full delay domain it is refuted (drones and microgrid)",
                        "improved verification efficiency", {"full_refuted_and_reach_verified": r.full_refuted},
                        all(r.full_refuted)))
    n_neural, n_lmi = sum(r.neural.values()), sum(r.lmi.values())
    claims.append(Claim("neural_beats_lmi", "the neural (polyhedral) certificate is verified in at least as many "
                        "(system, tau) cases as the LMI quadratic one, and in every case the LMI one is",
                        "neural more expressive than quadratic", {"neural": r.neural, "lmi": r.lmi},
                        n_neural >= n_lmi and all(r.neural[k] for k, v in r.lmi.items() if v)))
    n_viol = sum(v["violations"] for v in r.falsified.values())
    worst_sim = max([max(s["decay_ratio"], s["invariance_ratio"]) for s in r.simulated.values()], default=None)
    claims.append(Claim("network_certificates_hold", "dense random + gradient falsification finds no violation of "
                        "any verified network certificate, and closed-loop simulations respect its decay envelope "
                        "and level-set invariance", "sound",
                        {"searched": list(r.falsified), "violations": n_viol, "max_simulated_ratio": worst_sim},
                        bool(r.falsified) and n_viol == 0 and worst_sim is not None and worst_sim <= 1.0))
    return claims
