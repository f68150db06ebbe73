"""``paperdag verify vector_lyapunov [PATH]``: re-verify a certificate folder (verifier/folder.py) from its weights
and problem data alone, under the verifier budget stored in its meta.json (verifier/record.py: what is audited).

A network folder (meta.kind == "network", e.g. verify_drones' certificates/drones_tau1_reach) or a platoon folder
(the ``verify`` stage's output). The outcome (paperdag.verification):

* REFUSED, naming the fields, when the problem data (meta.json) no longer match the digest summary.json records;
* REFUTED when a stored constant is less conservative than its re-derivation (naming it), when the fresh branch
  and bound finds a counterexample or a stored counterexample is confirmed a violation, or when the stored record
  disagrees with the decided fresh verification (verdict, contraction of the comparison rows, stored counterexamples
  that are not violations);
* UNDECIDED when the stored verifier budget leaves cells unknown and nothing is refuted (naming the budget: a proof
  that a smaller budget, e.g. ``milp_nodes: 1``, cannot re-prove is undecided, not refuted), or ``--budget``
  subsystems or followers are spent first;
* VERIFIED otherwise: freshly proved on the re-derived domain, in agreement with the record.

Before re-proving, ``show`` gets the stored-vs-re-derived table of the constants.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from paperdag.io import read_json, read_table
from paperdag.verification import Outcome, Refused, Result, Work, require_files

from .networks.certify import constant_audit, constants, load_certificate_folder, verify_network
from .networks.certify import problem_data as network_problem
from .networks.certify import summary_constants as network_constants
from .networks.certificate import network_decrease
from .params import BudgetParams
from .platoon.certificate import decrease
from .platoon.certify import SOUND_AS, load_certificate, summary_constants, verify_vector
from .platoon.certify import problem_data as platoon_problem
from .verifier.folder import COUNTEREXAMPLES_FILE, META_FILE, SUMMARY_FILE, WEIGHTS_FILE
from .verifier.record import DIGEST_KEY, Constant, audit, failures, problem_changes, table

Show = Callable[[str], None]


def reverify(cert_dir: Path, work: Work, show: Show = print) -> Result:
    """The outcome of re-verifying a network or a platoon certificate folder (module docstring)."""
    cert_dir = Path(cert_dir)
    require_files(cert_dir, META_FILE, SUMMARY_FILE, WEIGHTS_FILE, COUNTEREXAMPLES_FILE)
    if read_json(cert_dir / META_FILE).get("kind") == "network":
        return _network(cert_dir, work, show)
    return _platoon(cert_dir, work, show)


def _refuse_changed(changed: list[str]) -> None:
    if changed:
        raise Refused(", ".join(changed), f"the problem data (meta.json) no longer match the certificate's record "
                                          f"({DIGEST_KEY} in summary.json)")


def _audited(constants_: list[Constant], show: Show, work: Work) -> int | Result:
    """How many stored constants were audited (after ``show`` got their table), or REFUTED naming those stored less
    conservatively than re-derived."""
    rows = audit(constants_)
    if failures(rows):
        return Result(Outcome.REFUTED, failures(rows))
    for line in table(rows):
        show(line)
    work.doing("re-proving")
    return len(rows)


@dataclass(frozen=True)
class Fresh:
    """What the fresh branch and bound found, beside what the folder records."""

    verified: bool
    stored_verified: bool
    contracts: bool  # the comparison rows contract (row sums < 1)
    refuted_cells: int
    unknown_cells: int
    confirmed: int  # stored counterexamples that are violations of the re-derived condition
    stored_cex: int


def _judge(message: str, fresh: Fresh, budget: BudgetParams) -> Result:
    """REFUTED when the record disagrees with a decided fresh verification (proved, or a counterexample found), the
    rows do not contract, a stored counterexample is no violation, or a counterexample was found; UNDECIDED when the
    fresh verification is undecided (cells left unknown under the stored budget, none refuted), whatever the stored
    verdict: a budget too small to re-prove a proof contradicts nothing; else VERIFIED."""
    problems = []
    refuted = fresh.refuted_cells > 0 or fresh.confirmed > 0
    decided = fresh.verified or refuted
    if decided and fresh.verified != fresh.stored_verified:
        problems.append(f"verdict differs from the stored one ({fresh.stored_verified})")
    if not fresh.contracts:
        problems.append("comparison rows do not contract")
    if fresh.confirmed != fresh.stored_cex:
        problems.append(f"{fresh.stored_cex - fresh.confirmed} stored counterexamples are not violations")
    message += f"; {fresh.confirmed}/{fresh.stored_cex} stored counterexamples confirmed"
    if problems:
        return Result(Outcome.REFUTED, message + "; " + "; ".join(problems))
    if refuted:
        return Result(Outcome.REFUTED, message)
    if not fresh.verified:
        stored = " (the stored proof is neither re-proved nor contradicted)" if fresh.stored_verified else ""
        return Result(Outcome.UNDECIDED, f"{message}; the verifier budget stored in meta.json (max_cells "
                                         f"{budget.max_cells}, max_depth {budget.max_depth}, max_milp "
                                         f"{budget.max_milp}, milp_nodes {budget.milp_nodes}) leaves "
                                         f"{fresh.unknown_cells} cells unknown{stored}")
    return Result(Outcome.VERIFIED, message)


def _network(cert_dir: Path, work: Work, show: Show) -> Result:
    """Branch and bound + MILP re-run for every subsystem on the domain re-derived from the problem data, every
    stored counterexample re-evaluated with the torch model; VERIFIED needs c_s + c_n < 1."""
    nc, net, meta = load_certificate_folder(cert_dir)
    stored = read_json(cert_dir / SUMMARY_FILE)
    own = {"system": net.system, "n": net.n, "tau": net.tau, "reach": meta["reach"]}
    _refuse_changed(problem_changes(stored, network_problem(net, meta["reach"]), own))
    work.doing("re-deriving the constants")
    k = constants(nc, net)
    audited = _audited(constant_audit(stored, network_constants(nc, net, k)), show, work)
    if isinstance(audited, Result):
        return audited
    budget = BudgetParams(**meta["budget"])
    fresh = verify_network(nc, net, meta["reach"], budget, k,
                           progress=lambda r: work.each(r, "subsystems"))["summary"]
    cex = read_table(cert_dir / COUNTEREXAMPLES_FILE).to_pylist()
    real = 0
    for c in cex:
        with torch.no_grad():
            hist = np.array([c["piece"]]) if meta["reach"] else None
            G, vx, vxd = network_decrease(nc, net, np.array([c["subsystem"]]), hist,
                                          torch.tensor([c["z"]], dtype=torch.float64), fresh["c_0"], fresh["kappa"])
        real += bool(float(G[0]) > 0 and max(float(vx[0]), float(vxd[0])) <= fresh["c_0"] + 1e-9)
    per = fresh["per_subsystem"]
    refuted, unknown = sum(q["refuted_cells"] for q in per), sum(q["unknown_cells"] for q in per)
    msg = (f"{net.system} N={net.n} tau={net.tau}: {sum(q['verified'] for q in per)}/{len(per)} subsystems proved "
           f"({refuted} refuted cells, {unknown} unknown) on the "
           f"{'reachability-constrained' if meta['reach'] else 'full'} delay domain re-derived from the problem "
           f"data; {audited} stored constants at least as conservative as re-derived; "
           f"row (c_s, c_n)=({fresh['c_s']:.4f}, {fresh['c_n']:.4f}), c_0={fresh['c_0']:.4g}")
    return _judge(msg, Fresh(fresh["verified"], stored["verified"], fresh["c_s"] + fresh["c_n"] < 1.0, refuted,
                             unknown, real, len(cex)), budget)


def _platoon(cert_dir: Path, work: Work, show: Show) -> Result:
    """Branch and bound + MILP re-run for every follower, every stored counterexample re-evaluated with the torch
    model; VERIFIED needs rho < 1 for every follower."""
    cert = load_certificate(cert_dir / META_FILE, cert_dir / WEIGHTS_FILE, cert_dir / SUMMARY_FILE)
    _refuse_changed(problem_changes(cert.summary, platoon_problem(cert.pl, cert.reach), {"reach": cert.reach}))
    work.doing("re-deriving the constants")
    consts = summary_constants(cert.vc, cert.policy, cert.pl)
    audited = _audited([Constant(name, cert.summary.get(name), consts[name], sense)
                        for name, sense in SOUND_AS.items()], show, work)
    if isinstance(audited, Result):
        return audited
    fresh = verify_vector(cert.vc, cert.policy, cert.pl, cert.reach, cert.budget,
                          progress=lambda r: work.each(r, "followers"), consts=consts)["summary"]
    cex = read_table(cert_dir / COUNTEREXAMPLES_FILE).to_pylist()
    real = 0
    for c in cex:
        G, level = decrease(cert.vc, cert.policy, cert.pl, np.array([c["vehicle"]]),
                            torch.tensor([c["z"]], dtype=torch.float64), fresh["c_0"])
        # a level within rounding of c_0 (the compiled net, which found the point, and torch differ in the last
        # bit) is on the level set: the points are homogeneous, so scaling by 1 - 1e-12 keeps G > 0 strictly inside
        real += bool(float(G.detach()[0]) > 0 and float(level.detach()[0]) <= fresh["c_0"] * (1 + 1e-12))
    per = fresh["per_vehicle"]
    refuted, unknown = sum(p["refuted_cells"] for p in per), sum(p["unknown_cells"] for p in per)
    msg = (f"{sum(p['verified'] for p in per)}/{len(per)} followers proved ({refuted} refuted cells, {unknown} "
           f"unknown) on the {'reachability-constrained' if cert.reach else 'full'} delay domain; {audited} stored "
           f"constants at least as conservative as re-derived; rho={fresh['rho']}, c_0={fresh['c_0']:.4g}")
    return _judge(msg, Fresh(fresh["verified"], cert.summary["verified"], fresh["rows_sum_max"] < 1.0, refuted,
                             unknown, real, len(cex)), cert.budget)
