"""Science tests of the vector Lyapunov-Razumikhin paper: compiler, bounds, verifier (prove / refute), certificates
against their torch models, the delay-domain bounds against simulation, the LMI baseline, re-verification of
certificate folders, and the claims. The platform contract (smoke run, outputs, claims file) is
tests/test_paper_contract.py."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from dataclasses import replace
from functools import partial
from pathlib import Path

import numpy as np
import pytest
import torch

from paperdag.common.plans import SamplePlan
from paperdag.common.stats import mean_ci
from paperdag.common.verdicts import resolve, superiority
from paperdag.io import read_json
from paperdag.papers.vector_lyapunov.claims import _any_of, network_claims, platoon_claims
from paperdag.papers.vector_lyapunov.lyapunov import level_constants, norm_rows
from paperdag.papers.vector_lyapunov.networks.cegis import quadratic_init
from paperdag.papers.vector_lyapunov.networks.certificate import (NetworkCert, compile_network_query,
                                                                  network_decrease)
from paperdag.papers.vector_lyapunov.networks.certify import constants, verify_network, write_network_certificate
from paperdag.papers.vector_lyapunov.networks.control import (GAINS, augment, certify_path, cost, lqr_cost, lqr_of,
                                                              path, plant, ring_matrices, scenarios, simulate_augmented,
                                                              tune)
from paperdag.papers.vector_lyapunov.networks.domain import (HISTORY, delay_matrix, history, history_bound,
                                                             piece_starts, pieces, subsystem_loop)
from paperdag.papers.vector_lyapunov.networks.evaluation import NetworkResults, held_out_costs
from paperdag.papers.vector_lyapunov.networks.lmi import check_quadratic, history_eps_quadratic, lmi_certificate
from paperdag.papers.vector_lyapunov.networks.model import (draw_parameters, make_network, ring, simulate_network,
                                                            step_network, subsystem_step)
from paperdag.papers.vector_lyapunov.networks.quadratic import (check_class, check_exact, check_unit,
                                                                 invariance_certificate, units)
from paperdag.papers.vector_lyapunov.networks.ring import compile_ring, razumikhin_lmi_matrices, ring_decrease
from paperdag.papers.vector_lyapunov.networks.monolithic import (MonoNetCert, block_init, compile_mono, dynamics,
                                                                 mono_constants, mono_decrease)
from paperdag.papers.vector_lyapunov.params import (BudgetParams, ClaimParams, NetworkCegisParams,
                                                    NetworkCertificateParams, NetworkParams, Params, Plans,
                                                    PlatoonParams)
from paperdag.papers.vector_lyapunov.platoon.cascade import (accel_transfer, cascade_analysis,
                                                             constant_acceleration_states, delayed_loop, exceeds, hinf,
                                                             response, spectral_radius)
from paperdag.papers.vector_lyapunov.platoon.certificate import (Q_DIM, Policy, VectorCert, compile_increment,
                                                                 compile_query, decrease)
from paperdag.papers.vector_lyapunov.platoon.evaluation import (PlatoonResults, closed_loop, gain_one_equilibria,
                                                                relative_equilibria)
from paperdag.papers.vector_lyapunov.platoon.evaluation import scenarios as platoon_scenarios
from paperdag.papers.vector_lyapunov.platoon.ladder import (bryson_cost, c_max, gains_command, platoon_lqr, rollout,
                                                           simulate_lqr, tune_gains)
from paperdag.papers.vector_lyapunov.platoon.ladder import plant as platoon_plant
from paperdag.papers.vector_lyapunov.platoon.model import (headway, make_platoon, relative, relative_gain,
                                                          relative_step, simulate)
from paperdag.papers.vector_lyapunov.reverify import reverify
from paperdag.papers.vector_lyapunov.stages.verify_network import VERIFIED_DIR
from paperdag.papers.vector_lyapunov.verifier import bab, lp
from paperdag.papers.vector_lyapunov.verifier.bounds import ibp, layer_bounds, output_bounds
from paperdag.papers.vector_lyapunov.verifier.folder import META_FILE, SUMMARY_FILE
from paperdag.papers.vector_lyapunov.verifier.graph import Builder
from paperdag.papers.vector_lyapunov.verifier.milp import maximize, mirrored_pairs, solve_on_box
from paperdag.papers.vector_lyapunov.verifier.record import REL_TOL, Constant, audit, failures
from paperdag.params import load_params, read_params_file
from paperdag.testing import run_stages
from paperdag.verification import Outcome, Work
from paperdag.verification import reverify as verify_folder

PLATOON = PlatoonParams(n_grid=[4], tau=1, cav_period=2, alpha_range=(0.5, 0.9), beta_range=(0.6, 1.0), v_max=30.0,
                        s_go=35.0, s_st=5.0, v_star=15.0, s_bound=2.0, v_bound=1.5, w_bound=0.3,
                        cav_gains=(0.5, 1.0, 0.3))
NETWORKS = NetworkParams(n_grid=[3], w_bound=0.05, drone_kp_range=(0.3, 0.5), drone_kv_range=(0.8, 1.2),
                         drone_kc=0.02, drone_box=(1.0, 1.0), grid_b0=0.5, grid_b=0.05, grid_inertia_range=(0.8, 1.2),
                         grid_damping_range=(1.0, 1.4), grid_box=(0.5, 0.5))
BUDGET = BudgetParams(max_cells=1, max_depth=40, max_milp=10, milp_nodes=5000, stop_after_cex=5)


def norm_net(k: float):
    """out = |z0| + |z1| - k max(|z0|, |z1|): <= 0 on any box iff k >= 2 (for boxes containing (1, 1))."""
    b = Builder(2)
    a0, a1 = b.abs(b.input([0])), b.abs(b.input([1]))
    return b.build(b.add(a0, a1, b.max2(a0, a1), weights=(1.0, 1.0, -k)))


def random_net(seed: int):
    rng = np.random.default_rng(seed)
    b = Builder(3)
    x = b.input([0, 1, 2])
    h = b.mlp(x, [rng.normal(size=(8, 3)), rng.normal(size=(8, 8)), rng.normal(size=(2, 8))])
    out = b.cat(b.max2(b.linear(h, [[1, 0]]), b.linear(h, [[0, 1]])), b.abs(b.linear(x, [[1, -1, 0]])),
                b.add(b.linear(h, [[1, 0]]), b.linear(x, [[0, 0, 1]])))
    return b.build(out)


def test_builder_matches_direct_computation():
    net = norm_net(2.0)
    z = np.random.default_rng(0).uniform(-3, 3, size=(500, 2))
    expect = np.abs(z).sum(1) - 2 * np.abs(z).max(1)
    assert np.allclose(net(z)[:, 0], expect, atol=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_bounds_are_sound_against_sampling(seed):
    net = random_net(seed)
    rng = np.random.default_rng(seed)
    lo = rng.uniform(-1.0, 0.0, size=(4, 3))
    hi = lo + rng.uniform(0.1, 1.5, size=(4, 3))
    tlo, thi = torch.as_tensor(lo), torch.as_tensor(hi)
    C = torch.eye(3, dtype=torch.float64)
    ub, _, _ = output_bounds(net, tlo, thi, C)
    lb = -output_bounds(net, tlo, thi, -C)[0]
    ib_l, ib_u = ibp(net, tlo, thi)[-1]
    for c in range(4):
        z = rng.uniform(lo[c], hi[c], size=(4000, 3))
        y = net(z)
        assert np.all(y <= ub[c].numpy() + 1e-9) and np.all(y >= lb[c].numpy() - 1e-9)
        assert np.all(ub[c].numpy() <= ib_u[c].numpy() + 1e-9)  # CROWN is never looser than IBP here
        assert np.all(y <= ib_u[c].numpy() + 1e-9)
    pre = layer_bounds(net, tlo[:1], thi[:1])
    for k in range(3):
        r = maximize(net, lo[0], hi[0], [(a[0].numpy(), b[0].numpy()) for a, b in pre], np.eye(3)[k])
        y = net(rng.uniform(lo[0], hi[0], size=(4000, 3)))[:, k]
        assert y.max() <= r.bound + 1e-6 and r.bound <= ub[0, k].numpy() + 1e-6
        assert abs(net(r.z[None])[0, k] - r.value) < 1e-6


def test_verifier_proves_known_true_property():
    # |z0| + |z1| - 2.2 max(|z0|, |z1|) <= -0.2 |z0| < 0 on [0.5, 1] x [-1, 1]: needs splitting, then provable
    prop = bab.Property(norm_net(2.2), np.array([1.0]), 0.0, np.array([0.5, -1.0]), np.ones(2))
    res = bab.verify(prop, max_cells=5000, max_milp=5)
    assert res.verified and not res.counterexamples, {k: res.count(k) for k in ("proved", "unknown", "refuted")}
    assert res.count("proved") + res.count("proved_milp") == len(res.rows)


def test_verifier_refutes_known_false_property_with_valid_counterexample():
    prop = bab.Property(norm_net(1.5), np.array([1.0]), 0.0, -np.ones(2), np.ones(2),
                        couplings=((0, 1, -1.5, 1.5),))
    res = bab.verify(prop, max_cells=5000, max_milp=5)
    assert not res.verified and res.counterexamples
    for z in res.counterexamples:
        assert prop.net(z[None])[0, 0] > 0 and bab.feasible(prop, z[None])[0]
        assert -1.5 <= z[0] + z[1] <= 1.5


def test_milp_settles_cells_that_bounds_cannot():
    prop = bab.Property(norm_net(2.0), np.array([1.0]), 0.0, -np.ones(2), np.ones(2))
    res = bab.verify(prop, max_cells=5000, max_depth=0, max_milp=5)  # no splitting: the root goes to the MILP
    assert res.verified and res.count("proved_milp") == 1
    false = bab.Property(norm_net(1.5), np.array([1.0]), 0.0, -np.ones(2), np.ones(2))
    res = bab.verify(false, max_cells=5000, max_depth=0, max_milp=5)
    assert res.count("refuted") == 1 and false.net(res.counterexamples[0][None])[0, 0] > 0


def test_stop_at_unknown_keeps_the_verdict_and_skips_the_rest():
    true = bab.Property(norm_net(2.2), np.array([1.0]), 0.0, np.array([0.5, -1.0]), np.ones(2))
    full, stopped = (bab.verify(true, max_cells=5000, max_milp=5, stop_at_unknown=s) for s in (False, True))
    assert full.verified and stopped.verified and full.rows == stopped.rows
    # one bounded cell, its two halves to the MILP, no MILP left: the first half is unknown, the second not searched
    full, stopped = (bab.verify(true, max_cells=1, max_milp=0, stop_at_unknown=s) for s in (False, True))
    assert not full.verified and not stopped.verified
    assert full.count("unknown") == 2 and (stopped.count("unknown"), stopped.count("unexplored")) == (1, 1)


def test_compiled_query_equals_torch_decrease():
    torch.manual_seed(0)
    pl = make_platoon(PLATOON, 0.1, 4, np.random.default_rng(0))
    vc, pol = VectorCert(pl.box, 8, 4, 0.05, 0.99), Policy(8, 1.0)
    torch.nn.init.normal_(pol.net[-1].weight)
    z = torch.as_tensor(np.random.default_rng(1).uniform(-1, 1, size=(300, Q_DIM)))
    for i in range(4):
        G, level = decrease(vc, pol, pl, np.full(300, i), z, 0.3)
        y = compile_query(vc, pol, pl, i, 0.3)(z.numpy())
        assert np.allclose(y[:, 0], G.detach().numpy(), atol=1e-12)
        assert np.allclose(y[:, 1], level.detach().numpy(), atol=1e-12)


def test_certificate_is_positive_definite_and_homogeneous():
    vc = VectorCert((2.0, 1.5), 8, 4, 0.05, 0.99)
    x = torch.as_tensor(np.random.default_rng(0).normal(size=(200, 2)))
    for V in vc.V:
        v = V(x).detach()
        assert torch.all(v > 0) and float(V(torch.zeros(1, 2, dtype=torch.float64)).detach()) == 0.0
        assert torch.allclose(V(3.0 * x).detach(), 3.0 * v)


@pytest.mark.slow
def test_smoke_certificates_reverify_to_their_stored_verdicts(smoke_runs, tmp_path):
    """One smoke certificate folder of each kind, the platoon's (``verify``) and a network one (verify_drones' full
    delay domain folder, the smallest ring: the reach folders take the same path, and the network folders' outcomes
    are tested on their own below), re-verifies to its stored verdict (VERIFIED where it is proved; REFUTED or, when
    the smoke budget leaves cells unknown, UNDECIDED where it is not); the platoon folder with a scaled w_bound or a
    changed tau is REFUSED naming it."""
    runs = smoke_runs("vector_lyapunov")
    network = sorted((runs["verify_drones"] / VERIFIED_DIR).iterdir())
    assert [f.name for f in network] == ["drones_tau1_full", "drones_tau1_reach"], network
    for folder in (runs["verify"], network[0]):
        result = verify_folder("vector_lyapunov", folder)
        proved = read_json(folder / SUMMARY_FILE)["verified"]
        expected = {Outcome.VERIFIED} if proved else {Outcome.REFUTED, Outcome.UNDECIDED}
        assert result.outcome in expected and "differs" not in result.message, (folder.name, result)
        assert "not violations" not in result.message, result
    for field, change in (("w_bound", lambda p: p.update(w_bound=10 * p["w_bound"])),
                          ("tau", lambda p: p.update(tau=p["tau"] + 1))):
        shutil.copytree(runs["verify"], tmp_path / field)
        _tamper(tmp_path / field, META_FILE, lambda m: change(m["platoon"]))
        result = verify_folder("vector_lyapunov", tmp_path / field)
        assert result.outcome is Outcome.REFUSED and result.message.startswith(field), result


def _drones(n: int = 3, tau: int = 1):
    return make_network(NETWORKS, 0.1, "drones", n, tau, draw_parameters(NETWORKS, "drones", n,
                                                                        np.random.default_rng(0)))


def _arch(feat: int, rho: float) -> NetworkCertificateParams:
    return NetworkCertificateParams(feat=feat, feat_by_delay={}, eps=0.05, rho=rho)


def test_certificate_features_resolve_per_delay_and_survive_json():
    arch = NetworkCertificateParams(feat=8, feat_by_delay={3: 16}, eps=0.05, rho=0.99)
    assert arch.at(1).feat == 8 and arch.at(3).feat == 16 and arch.at(3).feat_by_delay == {}
    assert NetworkCertificateParams(**json.loads(json.dumps(arch.model_dump()))) == arch  # train.json's "arch"


def test_network_query_compiles_exactly_and_step_matches_simulation():
    net = _drones(tau=2)
    nc = NetworkCert(net.box, _arch(6, 0.99))
    torch.nn.init.normal_(nc.V.skip.weight)
    z = torch.as_tensor(np.random.default_rng(2).uniform(-1, 1, size=(400, 6)))
    for j in pieces(net, True) + pieces(net, False):
        hist = None if j is None else np.full(400, j)
        for i in range(net.n):
            G, vx, vxd = network_decrease(nc, net, np.full(400, i), hist, z, 0.4, 1.7)
            y = compile_network_query(nc, net, i, j, 0.4, 1.7)(z.numpy())
            assert np.allclose(y, torch.stack([G, vx, vxd], 1).detach().numpy(), atol=1e-12)
    # the per-subsystem step (channel s = sum_j g_ij k . x_j^d) is the whole-network step
    X, Xd = torch.randn(net.n, 2, dtype=torch.float64), torch.randn(net.n, 2, dtype=torch.float64)
    w = torch.randn(net.n, dtype=torch.float64)
    s = (Xd @ torch.tensor(net.channel, dtype=torch.float64)) @ torch.as_tensor(net.gain).T
    assert torch.allclose(step_network(net, X, Xd, w), subsystem_step(net, np.arange(net.n), X, Xd, s, w))


def _assert_in_delay_domain(net, traj, eps) -> None:
    """Every step k of a trajectory from a constant pre-history (the first tau steps included) has its delayed state
    in piece j = min(k, tau) of the domain: |x(k - tau) - D_ij x(k)| <= eps[i][j]."""
    for step in range(len(traj)):
        j = min(step, net.tau)
        for i in range(net.n):
            res = traj[max(step - net.tau, 0), i] - torch.as_tensor(delay_matrix(net, i, j)) @ traj[step, i]
            assert np.all(res.abs().numpy() <= eps[i][j] + 1e-12), (step, i)


@pytest.mark.parametrize("system", ["drones", "microgrid"])
def test_delay_domain_contains_simulated_histories_from_a_constant_pre_history(system):
    """Every state of closed-loop runs that start from a constant pre-history and stay in the level set: the
    increments are within Delta and, at every step k (the first tau steps included), the delayed state lies in
    piece j = min(k, tau) of the certified domain, |x(k - tau) - D_ij x(k)| <= eps_ij; the dual norms (exact MILPs)
    against sampling."""
    net = make_network(NETWORKS, 0.1, system, 4, 3, draw_parameters(NETWORKS, system, 4, np.random.default_rng(0)))
    nc = NetworkCert(net.box, _arch(8, 0.995))
    quadratic_init(nc, net)
    k = constants(nc, net)
    y = torch.as_tensor(np.random.default_rng(0).normal(size=(5000, 2)))
    ratio = (y @ torch.tensor(net.channel, dtype=torch.float64)).abs() / nc.V(y).detach()
    assert float(ratio.max()) <= k.kappa + 1e-9 and float(ratio.max()) > 0.97 * k.kappa
    with torch.no_grad():
        g, checked = torch.Generator().manual_seed(0), 0
        for _ in range(20):
            x0 = torch.randn(net.n, 2, generator=g, dtype=torch.float64)
            x0 *= (0.9 * k.c_0 / nc.V(x0))[:, None]
            w = (2 * torch.rand(60, net.n, generator=g, dtype=torch.float64) - 1) * net.w_bound
            traj = simulate_network(net, x0, w)
            if not bool((nc.V(traj) <= k.c_0).all()):
                continue  # the bounds assume the window stays in the level set
            checked += 1
            inc = (traj[1:] - traj[:-1]).abs().amax(0).numpy()
            assert np.all(inc <= k.delta + 1e-12)
            _assert_in_delay_domain(net, traj, k.eps)
    assert checked >= 10


DEFAULT = load_params(read_params_file(Path(__file__).parents[2] / "params.yaml"), "vector_lyapunov", Params, "default",
                      Path("params.yaml"))


def _level_set_vertices(K: np.ndarray, c_0: float) -> np.ndarray:
    """The vertices of the polygon {||K x||_1 <= c_0}: on the directions where some row K_r . x = 0."""
    d = np.stack([-K[:, 1], K[:, 0]], 1)
    v = c_0 * d / np.abs(d @ K.T).sum(1)[:, None]
    return np.concatenate([v, -v])


def _worst_constant_pre_history(net, nc, k, i: int = 0) -> tuple[float, float, set[int]]:
    """The worst-case constant pre-history of subsystem i, realised by ``simulate_network``: x_i(0) at each vertex of
    the level set, its neighbours at the vertex that maximises the channel k . y (either sign), w_i = +-w_bar in
    every step. Returns the largest |x_i(k - tau) - D_ij x_i(k)| / eps_ij (piece j = min(k, tau)) over k = 1 ..
    4 tau, counted while subsystem i and its neighbours stay in the level set, against the certified eps and against
    the steady-state history alone (the domain before the constant pre-histories at tau <= k < 4 tau were added),
    and the steps k that were counted."""
    K, tau = norm_rows(nc.V), net.tau
    Ax, Ad, B = subsystem_loop(net, i)
    u_bound = np.array([net.coupling(i) * k.kappa * k.c_0, net.w_bound])
    steady, _ = history_bound([history(Ax, Ad, B, u_bound, delay_matrix(net, i, tau), tau, None)], K, k.c_0)
    verts = _level_set_vertices(K, k.c_0)
    neighbour = verts[np.argmax(verts @ np.asarray(net.channel))]
    watched = [i, *ring(net.n)[i]]
    worst, worst_steady, counted = 0.0, 0.0, set()
    for v in verts:
        for sn in (1.0, -1.0):
            for sw in (1.0, -1.0):
                x0 = np.tile(sn * neighbour, (net.n, 1))
                x0[i] = v
                w = torch.zeros((HISTORY + 1) * tau, net.n, dtype=torch.float64)
                w[:, i] = sw * net.w_bound
                traj = simulate_network(net, torch.as_tensor(x0), w).numpy()
                level = np.abs(traj[:, watched] @ K.T).sum(-1).max(1)
                for step in range(1, len(traj)):
                    if level[:step + 1].max() > k.c_0 * (1 + 1e-12):  # x(0) on the boundary, up to rounding
                        break  # the domain is claimed for windows in the level set only
                    counted.add(step)
                    j = min(step, tau)
                    res = np.abs(traj[max(step - tau, 0), i] - delay_matrix(net, i, j) @ traj[step, i])
                    worst = max(worst, float((res / k.eps[i, j]).max()))
                    if j == tau:
                        worst_steady = max(worst_steady, float((res / steady).max()))
    return worst, worst_steady, counted


@pytest.mark.parametrize("system", ["drones", "microgrid"])
def test_worst_constant_pre_history_lies_in_the_certified_domain_for_every_default_delay(system):
    """Issue 56's hole: at tau <= k < 4 tau part of the 3 tau steps behind x(k) is the constant pre-history, no
    closed-loop step. For every tau of the default profile (default ring parameters, the LMI-initialised
    certificate, N = 4: every node has degree 2 as on the default rings), the worst-case constant pre-history (x_0 on
    the level-set boundary, neighbours at the channel's maximising vertex, w_0 = w_bar) lies in the certified
    domain (ratio <= 1: eps is a sound bound, the LP safety margin is on its side) at every step k = 1 .. 4 tau,
    all of which it reaches with its window in the level set (so the steps tau <= k < 4 tau of the hole are
    exercised). For the drones at tau >= 2 it lies outside the steady-state domain alone, the domain before the
    fix (ratio > 1 + 1e-6: beyond the simulation's rounding); the pieces hold exactly the k they claim."""
    p = DEFAULT
    draws = draw_parameters(p.networks, system, 4, np.random.default_rng(0))
    for tau in p.delays.taus:
        assert piece_starts(tau, tau) == [None, *range(tau, 4 * tau)] and piece_starts(tau, 0) == [0]
        net = make_network(p.networks, p.dt, system, 4, tau, draws)
        nc = NetworkCert(net.box, p.network_certificate.at(tau))
        quadratic_init(nc, net)
        k = constants(nc, net)
        worst, worst_steady, counted = _worst_constant_pre_history(net, nc, k)
        assert counted == set(range(1, 4 * tau + 1)), (tau, counted)
        assert worst <= 1.0, (tau, worst)
        if system == "drones" and tau >= 2:
            assert worst_steady > 1 + 1e-6, (tau, worst_steady)


@pytest.fixture(scope="module")
def drone_folders(tmp_path_factory):
    """A proved (reachability-constrained) and a refuted (full domain) certificate folder of the LMI-initialised
    drone ring (N = 3, tau = 1), with their verification results."""
    root = tmp_path_factory.mktemp("drone_certificates")
    net = _drones()
    arch = _arch(8, 0.995)
    nc = NetworkCert(net.box, arch)
    quadratic_init(nc, net)  # the LMI's quadratic norm, polyhedrally approximated: valid at tau = 1 here
    results = {"reach": verify_network(nc, net, True, BUDGET), "full": verify_network(nc, net, False, BUDGET)}
    for name, result in results.items():
        write_network_certificate(root / name, nc, net, arch, BUDGET, result)
    return root, results


def test_network_verifier_proves_reach_domain_refutes_full_domain_and_reverifies_from_the_folder(drone_folders,
                                                                                                 tmp_path):
    root, results = drone_folders
    proved, refuted = results["reach"], results["full"]
    assert proved["summary"]["verified"], proved["summary"]["per_subsystem"]
    # full delay domain: x^d = -x on an unstable direction of I + dt [[0, 1], [-a1, -b1]] breaks (N) for any V
    assert not refuted["summary"]["verified"] and refuted["counterexamples"]
    for c in refuted["counterexamples"]:
        assert c["G_torch"] > 0 and abs(c["G_torch"] - c["G_compiled"]) < 1e-9
    # the proved folder's re-verification (VERIFIED, the table all ok) is the untouched folder's `paperdag verify`
    for name, expect in (("full", Outcome.REFUTED),):
        shown = []
        result = reverify(root / name, Work("test"), shown.append)
        assert result.outcome is expect, result
        assert "differs" not in result.message and "not violations" not in result.message, result
        assert shown[0].startswith("constant") and any(line.startswith("eps piece 1") for line in shown), shown
        assert all(line.endswith("ok") for line in shown[1:]), shown
    # a tampered artifact is rejected: a refuted certificate whose stored verdict claims a proof
    shutil.copytree(root / "full", tmp_path / "full")
    summary = read_json(tmp_path / "full" / SUMMARY_FILE)
    (tmp_path / "full" / SUMMARY_FILE).write_text(json.dumps(summary | {"verified": True}))
    result = reverify(tmp_path / "full", Work("test"), lambda line: None)
    assert result.outcome is Outcome.REFUTED and "differs" in result.message, result


def _tamper(folder: Path, file: str, change) -> None:
    data = read_json(folder / file)
    change(data)
    (folder / file).write_text(json.dumps(data))


TAMPERS = {  # field the line must name -> (file, change, outcome)
    "eps piece 1": (SUMMARY_FILE, lambda s: s.update(eps=(0.98 * np.asarray(s["eps"])).tolist()), "REFUTED"),
    "w_bound": (META_FILE, lambda m: m["network"].update(w_bound=10 * m["network"]["w_bound"]), "REFUSED"),
    "tau": (META_FILE, lambda m: m["network"].update(tau=3), "REFUSED"),
}


def _paperdag_verify(folder: Path, *options: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", "from paperdag.cli import main; main()", "verify", "vector_lyapunov",
                           str(folder), *options], capture_output=True, text=True, timeout=600, check=False)


@pytest.fixture
def paperdag_verify(capsys, monkeypatch):
    """``paperdag verify vector_lyapunov FOLDER [OPTIONS]`` in this process: the CLI's own dispatch (``cli.main``
    less its signal handlers and ``sys.exit``): its exit code, stdout, and on stderr the progress and error lines
    as ``main`` prints them, without a Python start-up and the paper's imports per call (the untouched folder's test
    and tests/test_cli.py run the real command in a subprocess)."""
    from paperdag import cli

    def run(folder: Path, *options: str) -> subprocess.CompletedProcess:
        argv = ["paperdag", "verify", "vector_lyapunov", str(folder), *options]
        monkeypatch.setattr(sys, "argv", argv)
        capsys.readouterr()
        code, line = cli._dispatch()
        if line:
            print(line, file=sys.stderr)
        captured = capsys.readouterr()
        return subprocess.CompletedProcess(argv, code, captured.out, captured.err)

    return run


@pytest.mark.parametrize("field", TAMPERS)
def test_paperdag_verify_refutes_or_refuses_a_tampered_folder_in_one_line_naming_the_field(drone_folders, tmp_path,
                                                                                          field, paperdag_verify):
    """A proved folder whose stored eps was shrunk by 2% is REFUTED (a stored constant the re-derivation
    contradicts); one whose w_bound was scaled by 10 or whose tau was changed from 1 to 3 is REFUSED (no certificate
    of this problem): ``paperdag verify`` exits 1 with one line that names the field (nothing is re-proved)."""
    root, _ = drone_folders
    folder = tmp_path / "reach"
    shutil.copytree(root / "reach", folder)
    file, change, outcome = TAMPERS[field]
    _tamper(folder, file, change)
    result = paperdag_verify(folder)
    lines = [line for line in (result.stdout + result.stderr).splitlines() if line.strip()]
    assert result.returncode == 1 and len(lines) == 1, lines
    assert lines[0].startswith(outcome) and field in lines[0], lines


def test_verify_outcomes_of_a_foreign_folder_and_a_budget_of_one(drone_folders, tmp_path, paperdag_verify):
    """A folder of another kind of certificate (a table of task certificates) is REFUSED naming the file it lacks;
    a budget of one subsystem leaves the three-subsystem proof UNDECIDED naming the budget (exit 1); that a budget
    of three suffices (VERIFIED) is checked by the untouched folder's ``paperdag verify --budget 3`` below."""
    root, _ = drone_folders
    (tmp_path / "certificates.parquet").write_bytes(b"PAR1")
    foreign = verify_folder("vector_lyapunov", tmp_path)
    assert foreign.outcome is Outcome.REFUSED and foreign.message.startswith(META_FILE), foreign
    spent = paperdag_verify(root / "reach", "--budget", "1")
    assert spent.returncode == 1 and spent.stdout.splitlines()[-1].startswith("UNDECIDED --budget 1 spent: 1 of 3 "
                                                                               "subsystems"), spent.stdout


def test_paperdag_verify_is_undecided_not_refuted_when_the_stored_budget_cannot_re_prove(drone_folders, tmp_path,
                                                                                          paperdag_verify):
    """A proved folder whose stored verifier budget is cut to ``milp_nodes: 1`` (no MILP can close a cell the bounds
    leave open) is UNDECIDED naming that budget, exit 1: a spent budget contradicts nothing (it was REFUTED, "verdict
    differs", before); the same folder with its full budget is VERIFIED (the outcome is the budget's)."""
    root, _ = drone_folders
    folder = tmp_path / "reach"
    shutil.copytree(root / "reach", folder)
    _tamper(folder, META_FILE, lambda m: m["budget"].update(milp_nodes=1))
    result = paperdag_verify(folder)
    last = result.stdout.splitlines()[-1]
    assert result.returncode == 1 and last.startswith("UNDECIDED"), result.stdout + result.stderr
    assert "milp_nodes 1" in last and "cells unknown" in last and "0 refuted cells" in last, last
    assert "differs" not in last and "neither re-proved nor contradicted" in last, last


def test_paperdag_verify_on_an_untouched_folder_prints_the_table_and_exits_0(drone_folders):
    """The proved folder re-verifies from its files: with a budget of three subsystems (all of them: it suffices) the
    table of the constants, every one ok (the pieces' eps included), then VERIFIED with nothing differing, exit 0."""
    root, _ = drone_folders
    result = _paperdag_verify(root / "reach", "--budget", "3")
    lines = result.stdout.splitlines()
    assert result.returncode == 0, result.stdout + result.stderr
    names = [line.split()[0] for line in lines[1:-1]]
    assert lines[0].startswith("constant") and lines[-1].startswith("VERIFIED"), lines
    assert "differs" not in lines[-1] and "not violations" not in lines[-1], lines[-1]
    assert any(line.startswith("eps piece 1") for line in lines) and all(line.endswith("ok") for line in lines[1:-1])
    assert names == ["c_0", "c_1", "kappa", "eps", "eps", "delta", "w_certified", "window", "gamma", "rho", "c_s",
                     "c_n"], names


def test_constant_audit_is_one_sided_in_each_constants_sound_direction():
    """An upper bound may be stored larger than re-derived, a lower bound smaller, never the reverse beyond
    floating-point noise; a missing or reshaped constant fails; the failure line names the constant and entry."""
    rows = audit([Constant("eps", [0.0, 1.0, 2.0], [0.0, 1.0, 2.0 * (1 + REL_TOL / 2)], "upper"),
                  Constant("kappa", 3.0, 2.5, "upper"), Constant("c_0", 0.5, 0.6, "lower")])
    assert all(r.ok for r in rows) and failures(rows) == ""
    rows = audit([Constant("eps", [0.0, 1.0, 2.0], [0.0, 1.0, 2.0 * (1 + 3 * REL_TOL)], "upper"),
                  Constant("c_0", 0.6, 0.5, "lower"), Constant("c_1", None, 1.0, "upper"),
                  Constant("delta", [1.0], [1.0, 2.0], "upper"), Constant("window", 5, 5, "upper")])
    assert [r.ok for r in rows] == [False, False, False, False, True]
    line = failures(rows)
    assert "eps at [2]" in line and "c_0 (stored 0.6 > re-derived 0.5" in line and "c_1 (missing)" in line
    assert "delta (shape" in line and "window" not in line


def test_milp_cuts_pair_every_absolute_value_of_a_query():
    net = _drones()
    nc = NetworkCert(net.box, _arch(8, 0.995))
    quadratic_init(nc, net)
    q = compile_network_query(nc, net, 0, 1, 0.3, 1.2)
    units = list(np.nonzero(q.relu[0])[0])
    pairs = mirrored_pairs(q.weights[0], q.biases[0], units)
    assert len(pairs) == len(units) // 2  # the first layer holds only |.| units: relu(t) and relu(-t) for each t
    for i, j in pairs:
        assert np.array_equal(q.weights[0][i], -q.weights[0][j]) and q.biases[0][i] == -q.biases[0][j]


def test_decision_milp_agrees_with_the_exact_maximum():
    net = random_net(0)
    lo, hi = -np.ones(3), np.ones(3)
    exact = solve_on_box(net, lo, hi, np.eye(3)[0])
    above = solve_on_box(net, lo, hi, np.eye(3)[0], target=exact.bound + 0.1)  # nothing above: proved
    assert above.status == "Infeasible" and exact.bound < above.bound <= exact.bound + 0.1
    below = solve_on_box(net, lo, hi, np.eye(3)[0], target=exact.bound - 0.1)  # a violation exists: found
    assert below.z is not None and net(below.z[None])[0, 0] > exact.bound - 0.1 - 1e-6
    tight = solve_on_box(net, lo, hi, np.eye(3)[0], node_limit=1)  # a spent node budget keeps a valid bound
    assert tight.bound >= exact.bound - 1e-6 and tight.nodes <= 1


def test_polyhedral_norm_lps_match_sampling_and_the_milp():
    V = NetworkCert((1.0, 0.5), _arch(6, 0.99)).V
    torch.nn.init.normal_(V.skip.weight)
    K = norm_rows(V)
    x = np.random.default_rng(0).normal(size=(2000, 2))
    assert np.allclose(np.abs(x @ K.T).sum(1), V(torch.as_tensor(x)).detach().numpy())
    c_0, _ = level_constants(V, np.array([1.0, 0.5]))
    lo_face = np.array([1.0, -0.5])
    v_min, _ = lp.minimize_norm(K, lo_face, np.array([1.0, 0.5]))
    assert c_0 <= v_min + 1e-6
    for l in (np.array([1.0, 0.0]), np.array([0.3, -1.2])):
        v, _ = lp.maximize_linear(l, -np.array([1.0, 0.5]) / c_0, np.array([1.0, 0.5]) / c_0, [(K, np.eye(2), 1.0)])
        y = x / V(torch.as_tensor(x)).detach().numpy()[:, None]  # on the unit sphere of V
        assert (y @ l).max() <= v + 1e-9 and (y @ l).max() > 0.97 * v


def test_monolithic_query_compiles_exactly_and_its_block_init_is_the_sum_of_subsystem_norms():
    for system in ("drones", "microgrid"):
        net = make_network(NETWORKS, 0.1, system, 3, 2, draw_parameters(NETWORKS, system, 3,
                                                                       np.random.default_rng(1)))
        arch = _arch(4, 0.99)
        mc = MonoNetCert(net, arch)
        block_init(mc, net, arch)
        nc = NetworkCert(net.box, arch)
        quadratic_init(nc, net)
        X = torch.as_tensor(np.random.default_rng(3).normal(size=(50, 2 * net.n)))
        assert torch.allclose(mc.V(X), sum(nc.V(X[:, 2 * i:2 * i + 2]) for i in range(net.n)))
        k = mono_constants(mc, net)
        Z = torch.as_tensor(np.random.default_rng(4).uniform(-1, 1, size=(300, 5 * net.n)))
        for j in range(net.tau + 1):
            G, vx, vxd = mono_decrease(mc, net, j, Z, k.c_0)
            y = compile_mono(mc, net, j, k.c_0)(Z.numpy())
            assert np.allclose(y, torch.stack([G, vx, vxd], 1).detach().numpy(), atol=1e-12)
        # the monolithic step is the network step (the channel inside, exactly)
        X, Xd = torch.randn(net.n, 2, dtype=torch.float64), torch.randn(net.n, 2, dtype=torch.float64)
        w = torch.randn(net.n, dtype=torch.float64)
        D, Ax, Ad, Bw = (torch.as_tensor(m) for m in dynamics(net, 0))
        nxt = Ax @ X.reshape(-1) + Ad @ Xd.reshape(-1) + Bw @ w
        assert torch.allclose(nxt, step_network(net, X, Xd, w).reshape(-1))
        # the ring's history domain (LPs) contains ring trajectories from a constant pre-history in the level set
        g, checked = torch.Generator().manual_seed(2), 0
        with torch.no_grad():
            for _ in range(10):
                x0 = torch.randn(net.n, 2, generator=g, dtype=torch.float64)
                x0 *= 0.9 * k.c_0 / mc.V(x0.reshape(1, -1))[0]
                w = (2 * torch.rand(40, net.n, generator=g, dtype=torch.float64) - 1) * net.w_bound
                traj = simulate_network(net, x0, w)
                if not bool((mc.V(traj.reshape(len(traj), -1)) <= k.c_0).all()):
                    continue
                checked += 1
                _assert_in_delay_domain(net, traj, k.eps)
        assert checked >= 3


def test_ring_wide_query_is_max_of_blocks_and_implied_by_the_compositional_condition():
    """(R) of ring.py: the compiled net equals its numpy twin and U(X) = max_i V(x_i) computed block by block; the
    ring step's block i is ``subsystem_step`` with the exact channel s_i; and on every sampled query with
    U(X), U(X^d) <= c_0, G_R <= max_i G_N,i (the compositional decrease of each block with its exact s_i), the
    inequality that makes (N) imply (R) (whatever the certificate: no proof needed)."""
    net = _drones(n=3, tau=1)
    nc = NetworkCert(net.box, _arch(8, 0.995))
    quadratic_init(nc, net)
    k = constants(nc, net)
    n, rng = net.n, np.random.default_rng(7)
    checked = 0
    for j in range(net.tau + 1):
        D, Ax, Ad, Bw = dynamics(net, j)
        hi = np.concatenate([np.array(list(net.box) * n), k.eps[:, j].reshape(-1), np.full(n, net.w_bound)])
        Z = rng.uniform(-1, 1, size=(4000, 5 * n)) * hi
        Z[:, :2 * n] *= rng.uniform(0.1, 1.0, size=(4000, 1))  # many queries inside the level set
        ref = ring_decrease(nc, net, j, Z, k.c_0)
        assert np.allclose(compile_ring(nc, net, j, k.c_0)(Z), ref, atol=1e-12)
        X, E, w = Z[:, :2 * n], Z[:, 2 * n:4 * n], Z[:, 4 * n:]
        with torch.no_grad():
            blocks = np.stack([nc.V(torch.as_tensor(X[:, 2 * i:2 * i + 2])).numpy() for i in range(n)], 1)
        assert np.allclose(ref[:, 1], blocks.max(1), atol=1e-14)
        Xd = X @ D.T + E
        nxt = X @ Ax.T + Xd @ Ad.T + w @ Bw.T
        src = Xd if net.channel_delayed else X
        inside = (ref[:, 1] <= k.c_0) & (ref[:, 2] <= k.c_0)
        G_N = []
        for i in range(n):
            s_i = sum(net.gain[i, m] * src[:, 2 * m:2 * m + 2] @ np.asarray(net.channel) for m in range(n))
            x_i, xd_i = torch.as_tensor(X[:, 2 * i:2 * i + 2]), torch.as_tensor(Xd[:, 2 * i:2 * i + 2])
            step = subsystem_step(net, np.full(len(Z), i), x_i, xd_i, torch.as_tensor(s_i), torch.as_tensor(w[:, i]))
            assert np.allclose(step.numpy(), nxt[:, 2 * i:2 * i + 2], atol=1e-12)
            z = torch.as_tensor(np.column_stack([X[:, 2 * i:2 * i + 2], E[:, 2 * i:2 * i + 2], s_i, w[:, i]]))
            G, _, _ = network_decrease(nc, net, np.full(len(Z), i), np.full(len(Z), j), z, k.c_0, k.kappa)
            G_N.append(G.detach().numpy())
        assert np.all(ref[inside, 0] <= np.max(G_N, 0)[inside] + 1e-12)
        checked += int(inside.sum())
    assert checked > 1000


@pytest.mark.parametrize(("a", "b", "proved"), [(0.5, 0.3, True), (0.3, 0.65, True), (0.7, 0.4, False),
                                                (0.2, 1.0, False)])
def test_razumikhin_lmi_matches_the_scalar_closed_form(a, b, proved):
    """x^+ = a x + b x(k - tau): V = p x^2 satisfies V(x^+) <= r max(V(x), V(x^d)) iff (|a| + |b|)^2 <= r (worst
    case x^d = sign(ab) x), and the S-procedure is lossless for two quadratic forms (multiplier |a| / (|a| + |b|),
    0.625 and 0.316 here, within 0.1 of the grid's 0.5 / 0.3, both strict enough); a 2 x 2 block-diagonal copy of the
    system gives the same verdict."""
    r, grid = 0.99, [0.1, 0.3, 0.5, 0.7, 0.9]
    assert ((abs(a) + abs(b)) ** 2 <= r) == proved
    for Ax, Ad in ((np.array([[a]]), np.array([[b]])), (np.diag([a, -a]), np.diag([b, -b]))):
        res = razumikhin_lmi_matrices(Ax, Ad, np.sqrt(r), grid, 200)
        assert res["outcome"] == ("proved" if proved else "not_proved")
        assert res["solves"] >= 1


def test_lmi_baseline_contracts_and_its_check_is_sound_against_sampling():
    net = _drones(n=4, tau=2)
    P, rate = lmi_certificate(net)
    assert P is not None and rate < 1.0
    check = check_quadratic(net, P, 0.995, True)
    L = np.linalg.cholesky(P)
    for i, row in enumerate(check["per_subsystem"]):
        for j in pieces(net, True):
            M = np.eye(2) + net.dt * (np.array([[0, 1], [net.a0[i], 0]])
                                      + np.array([[0, 0], [net.a1[i], net.b1[i]]]) @ delay_matrix(net, i, j))
            assert np.all(np.linalg.eigvalsh(rate * P - M.T @ P @ M) >= -1e-6)
            x = np.random.default_rng(i).normal(size=(2000, 2))
            growth = np.linalg.norm(x @ M.T @ L, axis=1) / np.linalg.norm(x @ L, axis=1)
            assert growth.max() <= row["bound"] + 1e-9
    # the quadratic history domain (SOCPs) contains closed-loop histories that stay in its level set |L^T x| <= 1
    kappa = float(np.sqrt(np.asarray(net.channel) @ np.linalg.inv(P) @ np.asarray(net.channel)))
    eps = [history_eps_quadratic(net, i, L, net.coupling(i) * kappa, net.w_bound) for i in range(net.n)]
    g, checked = torch.Generator().manual_seed(1), 0
    Lt = torch.as_tensor(L.T)
    for _ in range(20):
        x0 = torch.randn(net.n, 2, generator=g, dtype=torch.float64)
        x0 *= 0.9 / (x0 @ Lt.T).norm(dim=-1, keepdim=True)
        w = (2 * torch.rand(60, net.n, generator=g, dtype=torch.float64) - 1) * net.w_bound
        traj = simulate_network(net, x0, w)
        if not bool(((traj @ Lt.T).norm(dim=-1) <= 1).all()):
            continue
        checked += 1
        _assert_in_delay_domain(net, traj, eps)
    assert checked >= 5


def _sampled_sup(q, n: int, seed: int) -> float:
    """max of F over ``n`` feasible points of the unit's domain (x drawn in the level set, half of them on its
    boundary; eps, s, w in their boxes; points with V(x^d) > 1 dropped)."""
    rng = np.random.default_rng(seed)
    v = rng.normal(size=(n, 2))
    v *= (rng.uniform(size=(n, 1)) ** 0.5 * (np.arange(n)[:, None] % 2) + (np.arange(n)[:, None] + 1) % 2) \
        / np.linalg.norm(v, axis=1, keepdims=True)
    x = np.linalg.solve(q.Lt, v.T).T
    z = np.concatenate([x, rng.uniform(-1, 1, (n, 2)) * q.eps, rng.uniform(-1, 1, (n, 1)) * q.s_bar,
                        rng.uniform(-1, 1, (n, 1)) * q.w_bar], 1)
    return max(q.decrease(row) for row in z if q.feasible(row))


def test_the_exact_quadratic_check_is_sound_decides_refutations_by_a_state_and_beats_the_closed_form():
    """check_exact on a drone ring with the LMI's P: every unit's bound on sup F lies above F at 4,000 sampled
    feasible states; where the closed-form (triangle) check verifies, the exact one proves; at rho 0.5 (below the
    loop's contraction ~0.96) a unit is refuted by a state in its domain with F > 0; with 9 SOCPs it is unknown."""
    net = _drones(n=3, tau=2)
    P, _ = lmi_certificate(net)
    res = check_exact(net, P, 0.995, 2000)
    assert check_quadratic(net, P, 0.995, True)["verified"] and res["outcome"] == "proved"
    for (i, j, q), row in zip(units(net, P, 0.995), res["per_unit"]):
        assert (row["subsystem"], row["piece"]) == (i, j) and row["outcome"] == "proved"
        assert _sampled_sup(q, 4000, i) <= row["sup_bound"] < 0
    _, _, q = units(net, P, 0.5)[1]
    refuted = check_unit(q, 2000)
    assert refuted["outcome"] == "refuted"
    witness = np.array(refuted["witness"])
    assert q.feasible(witness) and q.decrease(witness) > 0
    assert check_unit(units(net, P, 0.995)[1][2], 9)["outcome"] == "unknown"  # 8 SOCPs bound the quarter arcs


def test_the_invariance_lmi_keeps_its_level_set_in_the_box_and_every_step_inside_its_radius():
    """invariance_certificate on a microgrid ring: its P's unit level set lies in the LMI P's box (units of c_0), and
    from sampled states of that level set (with eps, s, w at their bounds' corners) x^+ stays within radius r, the
    S-procedure's bound; check_class proves the case with one of the two P."""
    net = make_network(NETWORKS, 0.1, "microgrid", 3, 2, draw_parameters(NETWORKS, "microgrid", 3,
                                                                       np.random.default_rng(0)))
    P0, _ = lmi_certificate(net)
    us = units(net, P0, 0.995)
    inv = invariance_certificate(net, P0, us, 0.05)
    assert inv["P"] is not None and inv["sdps"] == 19 and 0 < inv["r"]
    P = inv["P"]
    c_0 = min(b / np.sqrt(np.linalg.inv(P0)[d, d]) for d, b in enumerate(net.box))
    assert np.all(np.sqrt(np.diag(np.linalg.inv(P))) <= np.asarray(net.box) / c_0 + 1e-7)
    rng = np.random.default_rng(0)
    L = np.linalg.cholesky(P)
    for _, _, q in us:
        v = rng.normal(size=(500, 2))
        x = np.linalg.solve(L.T, (v / np.linalg.norm(v, axis=1, keepdims=True)).T).T  # on x^T P x = 1
        corners = rng.choice([-1.0, 1.0], size=(500, 4)) * np.concatenate([q.eps, [q.s_bar, q.w_bar]])
        x_plus = x @ q.M.T + corners[:, :2] @ q.Ad.T + np.outer(corners[:, 2] + corners[:, 3], q.b)
        assert np.sqrt(np.einsum("bi,ij,bj->b", x_plus, P, x_plus)).max() <= inv["r"] + 1e-7
    res = check_class(net, P0, 0.995, 2000, 0.05)
    assert res["outcome"] == "proved" and set(res["runs"]) == {"contraction", "invariance"}


@pytest.mark.parametrize("system", ["drones", "microgrid"])
def test_control_cost_is_the_closed_loop_of_the_gains_and_tuning_lowers_it(system):
    """``cost`` with the nominal gains is the quadratic cost of ``simulate_network`` on the ring itself (its
    differentiable coefficients are make_network's); with other gains it is the cost of the ring built from them;
    Adam on the log gains lowers J on its training scenarios; the path runs from the nominal to the tuned gains."""
    draws = {k: v.tolist() for k, v in draw_parameters(NETWORKS, system, 4, np.random.default_rng(3)).items()}
    net = make_network(NETWORKS, 0.1, system, 4, 2, draws)
    x0, w = scenarios(net, 3, 40, torch.Generator().manual_seed(0))
    nominal = {k: np.asarray(draws[k]) for k in GAINS[system]}

    def reference(gains):
        ring_ = make_network(NETWORKS, 0.1, system, 4, 2, draws | {k: v.tolist() for k, v in gains.items()})
        traj = simulate_network(ring_, x0, w)
        xd = torch.cat([traj[:1].expand(2, *traj.shape[1:]), traj[:-2]])
        u = torch.as_tensor(ring_.a1) * xd[..., 0] + torch.as_tensor(ring_.b1) * xd[..., 1]  # drones: - deg kc
        if system == "drones":
            u = u + 2 * NETWORKS.drone_kc * (xd[..., 0] + xd[..., 1])
        return float(traj.pow(2).sum(-1).mean() + 0.5 * u.pow(2).mean())

    for gains in (nominal, {k: 1.3 * v for k, v in nominal.items()}):
        J = cost(net, NETWORKS, draws, {k: torch.as_tensor(v) for k, v in gains.items()}, x0, w, 0.5)["J"]
        assert float(J) == pytest.approx(reference(gains), rel=1e-12)
    tuned = tune(net, NETWORKS, draws, x0, w, 0.5, 30, 0.05, lambda J, step: None)
    assert reference(tuned) < reference(nominal)
    for alpha, end in ((0.0, nominal), (1.0, tuned)):
        assert all(np.allclose(path(nominal, tuned, alpha)[k], end[k]) for k in nominal)


def test_certify_path_stops_at_the_first_proved_controller():
    """The nominal drones ring is proved, a destabilising gain (kv -> 0.01: b1 ~ 0) is not: from alpha = 1 the
    path backs off to the nominal controller and reports the refuted attempt before it. (No CEGIS round: each
    attempt's certificate is its LMI initialisation whatever the check finds, so the check's MILPs get one node; the
    verdicts are the verifier's under BUDGET.)"""
    draws = {k: v.tolist() for k, v in draw_parameters(NETWORKS, "drones", 3, np.random.default_rng(0)).items()}
    nominal = {k: np.asarray(draws[k]) for k in GAINS["drones"]}
    bad = {"kp": nominal["kp"], "kv": np.full(3, 0.01)}
    cegis = NetworkCegisParams(lr=0.001, batch=128, margin=0.005, lambda_gamma=0.01, rounds=0, steps=1, milps=1,
                               cex_weight=1, milp_nodes=1, keep=8)
    found = certify_path(NETWORKS, 0.1, "drones", 3, 1, draws, nominal, bad, [1.0, 0.0], _arch(8, 0.995), cegis,
                         BUDGET, torch.Generator().manual_seed(0), lambda *a: None)
    assert [a["alpha"] for a in found.attempts] == [1.0, 0.0]
    assert not found.attempts[0]["verified"] and found.attempts[1]["verified"]
    assert found.alpha == 0.0 and found.result["summary"]["verified"]
    assert np.allclose(found.net.b1, make_network(NETWORKS, 0.1, "drones", 3, 1, draws).b1)


def _cert_bytes(folder):
    return {f.name: f.read_bytes() for f in sorted(folder.iterdir()) if f.is_file()}


@pytest.mark.slow
def test_verification_is_deterministic_under_cpu_load(smoke_runs, tmp_path):
    """Same key, same certificates: the smoke verification of the drone ring twice in fresh projects (the first is
    the session's smoke run, shared with the contract test), the second time with a busy process competing for the
    CPU, gives byte-identical certificate folders and verdicts."""
    first = smoke_runs("vector_lyapunov")
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        second = run_stages("vector_lyapunov", ["verify_drones"], root=tmp_path / "b")
    finally:
        busy.kill()
        busy.wait()
    folders = sorted((first["verify_drones"] / VERIFIED_DIR).iterdir())
    assert folders
    for folder in folders:
        assert _cert_bytes(folder) == _cert_bytes(second["verify_drones"] / VERIFIED_DIR / folder.name), folder.name
    verdicts = [{k: v for k, v in r.summaries["verify_drones"].items()} for r in (first, second)]
    assert verdicts[0] == verdicts[1]


UNCERTIFIED_J = np.array([1.0, 0.9, 1.1, 1.05, 0.95, 1.0, 1.02, 0.98])  # J per held-out scenario
WOBBLE = np.array([0.01, -0.02, 0.0, 0.015, -0.01, 0.02, -0.005, 0.0])  # scenario-to-scenario spread of a ratio


def _costs(**ratio: float) -> dict[str, list[float]]:
    """Per controller, J on each of the eight held-out scenarios: ``ratio`` times the uncertified controller's (the
    networks' LQR bound, "lqr", equal to it unless given)."""
    return {"uncertified": UNCERTIFIED_J.tolist(), "lqr": UNCERTIFIED_J.tolist()} | {
        name: (r * UNCERTIFIED_J * (1 + WOBBLE[::-1] if i % 2 else 1 + WOBBLE)).tolist()
        for i, (name, r) in enumerate(ratio.items())}


def _network_results(**change) -> NetworkResults:
    """Two small rings in the regime (every verification decided, the LMI failing nowhere its polygon is proved, a
    monolithic baseline proved at N = 2, headroom for the drones' control study), with ``change``."""
    scal = {"n": [4, 8], "bounds": [10, 20], "seconds": [1.0, 2.0], "cells": [4, 8], "milp_nodes": [6, 12],
            "verified": [True, True]}
    case = {"verified": True, "n": 8, "refuted": 0, "unknown": 0, "max_violation_G_over_c0": None,
            "learning_rounds": 0}
    unit = {"verified": True, "unknown_cells": 0, "refuted_cells": 0}
    runs = {f"{s}_tau1_{d}": {"per_subsystem": [unit | {"verified": d == "reach", "refuted_cells": int(d == "full")}]
                              * 8} for s in ("drones", "microgrid") for d in ("reach", "full")}
    work = {"lp_iterations": 10, "bounds": 5, "seconds": 1.0, "cells": 2, "milps": 1, "milp_nodes": 7}
    lmi = {"outcome": "not_proved", "verified": False, "solves": 5, "seconds": 0.1}
    mono = [{"n": 2, "mono": {"verified": False, "outcome": "unknown", **work},
             "ring": {"verified": True, "outcome": "proved", **work}, "lmi": lmi, "comp": {"verified": True, **work}},
            {"n": 4, "mono": {"verified": False, "outcome": "unknown", **work},
             "ring": {"verified": False, "outcome": "unknown", **work | {"lp_iterations": 99}}, "lmi": lmi,
             "comp": {"verified": True, **work}}]
    control = {"n": 8, "tau": 1, "effort": 1.0, "certified_alpha": 0.5, "attempts": [{"alpha": 0.5}],
               "controllers": {name: {"J": J, "rms_q": 0.1} for name, J in (("nominal", 1.2), ("uncertified", 1.0),
                                                                            ("certified", 1.05))}}
    base = dict(
        scaling={"drones": scal, "microgrid": scal | {"bounds": [10, 80]}},
        slopes={"drones": 1.0, "microgrid": 3.0}, runs=runs, neural={"drones_tau1": True, "microgrid_tau1": True},
        lmi={"drones_tau1": True, "microgrid_tau1": False}, lmi_feasible={"drones_tau1": True, "microgrid_tau1": True},
        quadratic={"drones_tau1": {"outcome": "proved", "runs": {"contraction": {"outcome": "proved"}}},
                   "microgrid_tau1": {"outcome": "refuted", "runs": {"contraction": {"outcome": "refuted"},
                                                                    "invariance": {"outcome": "refuted"}}}},
        cases={"drones_tau1": case, "microgrid_tau1": case | {"learning_rounds": 2}},
        full_refuted=[True, True], falsified={"drones_tau1_reach": {"violations": 1}},
        simulated={"drones_tau1_reach": {"decay_ratio": 0.9, "invariance_ratio": 0.5}},
        monolithic={"drones": mono, "microgrid": [r | {"ring": r["ring"] | {"verified": True, "outcome": "proved"}}
                                                  for r in mono]},
        control={"drones": control, "microgrid": control | {"certified_alpha": None, "controllers": {
            k: v for k, v in control["controllers"].items() if k != "certified"}}},
        control_costs={"drones": _costs(nominal=1.2, certified=1.05), "microgrid": _costs(nominal=1.2)})
    return NetworkResults(**(base | change))


THRESHOLDS = ClaimParams(slope_range=(0.5, 1.5), control_tol=0.1)
PLANS = Plans(scenarios=SamplePlan(unit="scenario", n=8, basis="design", effect=None, power=None, pilot_n=0,
                                   pilot_sd=None, looks=1, spending="none", why="the eight hand-made scenarios"))


def _verdicts(results: NetworkResults) -> dict[str, str]:
    return {c.id: c.verdict for c in resolve(network_claims(results, [4, 8], [1], 8, THRESHOLDS, PLANS))}


def test_network_claims_fail_on_a_violation_and_on_a_slope_outside_the_band():
    """Evidence, checks and preconditions on hand-made results: a falsified certificate and a slope of 3 fail their
    checks; a monolithic baseline proved at every N and an unproved controller fail their evidence."""
    results = _network_results()
    verdicts = _verdicts(results)
    assert verdicts == {"network_verification_decided": "holds", "lmi_verdicts_reflect_quadratic_class": "holds",
                        "drones_scaling_decided": "holds", "drones_verified_all_n": "holds",
                        "drones_work_linear": "holds", "microgrid_scaling_decided": "holds",
                        "microgrid_verified_all_n": "holds", "microgrid_work_linear": "fails",
                        "network_delays_verified": "holds", "network_reachability_needed": "holds",
                        "neural_beats_lmi": "holds", "network_certificates_hold": "fails",
                        "drones_monolithic_competent": "holds", "drones_monolithic_fails_beyond_small_n": "holds",
                        "microgrid_monolithic_competent": "holds",
                        "microgrid_monolithic_fails_beyond_small_n": "fails", "drones_control_headroom": "holds",
                        "drones_competitive_control": "holds", "microgrid_control_headroom": "holds",
                        "microgrid_competitive_control": "fails", "drones_certificate_binds_control": "holds",
                        "microgrid_certificate_binds_control": "holds"}
    results.control_costs["drones"] |= _costs(certified=1.2)  # 20% above the uncertified controller's cost
    assert _verdicts(results)["drones_competitive_control"] == "fails"
    results.control_costs["drones"] |= _costs(certified=1.1)  # on the tolerance: the interval straddles it
    assert _verdicts(results)["drones_competitive_control"] == "inconclusive"


def test_monolithic_evidence_needs_undecided_not_refuted_rings():
    """The ring-wide query of a proved compositional certificate cannot be refuted ((N) implies (R)): a refuted ring
    beyond N = 2 fails the evidence with that reason instead of counting as a timeout; proved everywhere fails it."""
    results = _network_results()
    results.monolithic["drones"][1]["ring"] = results.monolithic["drones"][1]["ring"] | {"outcome": "refuted"}
    claims = {c.id: c for c in resolve(network_claims(results, [4, 8], [1], 8, THRESHOLDS, PLANS))}
    assert claims["drones_monolithic_competent"].verdict == "holds"
    assert claims["drones_monolithic_fails_beyond_small_n"].verdict == "fails"
    assert "refuted" in claims["drones_monolithic_fails_beyond_small_n"].reason
    assert claims["microgrid_monolithic_fails_beyond_small_n"].verdict == "fails"  # proved at every N


def test_network_evidence_is_inconclusive_outside_its_regime():
    """An undecided monolithic baseline (as measured: unknown at every N), a quadratic V_P its exact check leaves
    undecided at the budget, no control headroom and a subsystem left unknown by the budget make the
    dependent evidence inconclusive whatever its own verdict."""
    results = _network_results()
    for system in ("drones", "microgrid"):
        for row in results.monolithic[system]:
            row["ring"] = row["ring"] | {"verified": False, "outcome": "unknown"}
    results.quadratic["microgrid_tau1"] = results.quadratic["microgrid_tau1"] | {"outcome": "unknown"}
    results.control_costs["drones"] |= _costs(nominal=1.05)  # the nominal law is within 10% already
    results.runs["drones_tau1_reach"]["per_subsystem"][3] = {"verified": False, "unknown_cells": 2,
                                                             "refuted_cells": 0}
    verdicts = _verdicts(results)
    assert verdicts["drones_monolithic_competent"] == "fails"
    assert verdicts["drones_monolithic_fails_beyond_small_n"] == "inconclusive"
    assert verdicts["lmi_verdicts_reflect_quadratic_class"] == "fails"
    assert verdicts["neural_beats_lmi"] == verdicts["network_delays_verified"] == "inconclusive"
    assert verdicts["drones_control_headroom"] == "fails"
    assert verdicts["drones_competitive_control"] == "inconclusive"
    assert verdicts["drones_scaling_decided"] == "fails" and verdicts["drones_verified_all_n"] == "inconclusive"
    assert verdicts["microgrid_verified_all_n"] == "holds"


def test_only_learned_neural_proofs_where_the_quadratic_is_refuted_count_for_the_neural_class():
    """neural_beats_lmi: a neural proof as initialised (the polygon of the LMI norm) where V_P is refuted, or a V_P
    proved where the neural certificate is not, fails the claim; the closed-form check's verdicts do not enter."""
    results = _network_results(lmi={"drones_tau1": False, "microgrid_tau1": False})
    assert _verdicts(results)["neural_beats_lmi"] == "holds"  # microgrid: learned (2 rounds), V_P refuted exactly
    results.cases["microgrid_tau1"] = results.cases["microgrid_tau1"] | {"learning_rounds": 0}
    assert _verdicts(results)["neural_beats_lmi"] == "fails"  # only the polygon as initialised beats V_P
    results = _network_results(neural={"drones_tau1": False, "microgrid_tau1": True})
    assert _verdicts(results)["neural_beats_lmi"] == "fails"  # V_P proved where the neural one is not


def test_network_control_is_judged_against_the_lqr_bound_not_the_tuned_gains():
    """The ladder's strongest rung decides: a certified controller that costs what the tuned gains cost on every
    scenario (ratio 1, zero width: reported beside) is judged against the LQR bound, a different controller, so the
    interval has width and decides; headroom is nominal / LQR, so a nominal law within 10% of the tuned gains still
    has headroom when the bound is lower, and none when the bound is not. Where the tuned gains are themselves proved
    (alpha 1) the certificate binds nothing: the competitiveness claim is inconclusive."""
    results = _network_results()
    results.control["drones"]["certified_alpha"] = 0.8
    results.control_costs["drones"] |= _costs(nominal=1.05, lqr=0.97)
    results.control_costs["drones"]["certified"] = list(results.control_costs["drones"]["uncertified"])
    claims = {c.id: c for c in resolve(network_claims(results, [4, 8], [1], 8, THRESHOLDS, PLANS))}
    headroom, competitive = claims["drones_control_headroom"], claims["drones_competitive_control"]
    assert headroom.verdict == "fails"  # nominal / LQR ~ 1.08 < 1.1
    assert headroom.measured["nominal_over_uncertified_J"]["mean"] == pytest.approx(1.05, rel=0.02)
    results.control_costs["drones"] |= _costs(nominal=1.05, lqr=0.85)  # the bound 15% below the tuned gains
    claims = {c.id: c for c in resolve(network_claims(results, [4, 8], [1], 8, THRESHOLDS, PLANS))}
    headroom, competitive = claims["drones_control_headroom"], claims["drones_competitive_control"]
    assert headroom.verdict == "holds" and competitive.verdict == "fails"  # certified / LQR ~ 1.18
    assert competitive.measured["J_ratio"]["mean"] == pytest.approx(1 / 0.85, rel=0.02)
    assert competitive.measured["certified_over_uncertified_J"] == {"mean": 1.0, "ci": [1.0, 1.0]}
    results.control_costs["drones"] |= _costs(nominal=1.3, lqr=0.99)  # tuned gains within 1% of the bound
    assert _verdicts(results)["drones_competitive_control"] == "holds"
    results.control["drones"]["certified_alpha"] = 1.0
    verdicts = _verdicts(results)
    assert verdicts["drones_certificate_binds_control"] == "fails"
    assert verdicts["drones_competitive_control"] == "inconclusive"


def _platoon_results(verified: bool, violations: int) -> PlatoonResults:
    """A platoon of 4 followers whose reachability-constrained certificate is proved (``verified``: falsified with
    ``violations`` found) or refuted (nothing verified, so nothing searched; the refuted one's 7 violations beside)."""
    vehicle = {"verified": verified, "unknown_cells": 0, "refuted_cells": int(not verified)}
    summary = {"verified": verified, "per_vehicle": [vehicle] * 4, "rho": 0.99}
    scal = {"n": [4, 8], "bounds": [10, 20], "seconds": [1.0, 2.0], "verified": [verified, verified]}
    sims = {name: {"rms_spacing": (r * UNCERTIFIED_J).tolist(), "string_ratio": (r * UNCERTIFIED_J).tolist()}
            for name, r in (("nominal", 1.3), ("retuned", 1.2), ("uncertified", 1.0), ("certified", 1.02),
                            ("lqr", 0.98))}
    falsified = {"vector_reach": {"violations": violations}}
    return PlatoonResults(reach=scal, full=scal | {"verified": [False, False]}, slope=1.0, reach_summary=summary,
                          full_summary=summary | {"verified": False}, w_sim=0.1, control={}, scenarios=sims,
                          falsified_verified=falsified if verified else {},
                          falsified_refuted={} if verified else {"vector_reach": {"violations": 7}},
                          gain_one=[True] * 4, equilibrium_c=0.75, relative_command=[0.5] * 4,
                          cascade=_cascade_results(), retuned_gains=(0.6, 1.1, 0.4))


def _cascade_results(radius: float = 0.93, broken: bool = False) -> dict:
    """A 4-follower H, C, H, C cascade analysis: spectral radii ``radius``, one DC cycle (followers 2 and 4), broken
    (lambda 1 > rho^2) or not (lambda 0.5)."""
    cycle = {"j": 1, "i": 3, "gain": 1.0 if broken else 0.5, "bound": 0.99 ** 2, "a": 0.1}
    return {"spectral_radius": [radius] * 4, "radius_bound": 0.99 ** (1 / 3), "accel_hinf": [1.0, 1.05, 1.0, 1.05],
            "accel_hinf_w": [0.0, 0.04, 0.0, 0.04], "accel_hinf_certified": True,
            "loops": [{"pair": [k, k + 1], "types": ["HDV", "CAV"], "peak": 1.02, "w": 0.03, "certified": True}
                      for k in range(3)],
            "dc_cycles": [cycle], "dc_broken": [cycle] if broken else [], "first_n_broken": 4 if broken else None,
            "equilibrium_residual": 0.0, "is_cav": [False, True, False, True]}


@pytest.mark.parametrize(("verified", "violations", "verdict"),
                         [(True, 0, "holds"), (True, 2, "fails"), (False, 0, "inconclusive")])
def test_a_soundness_check_with_nothing_searched_is_vacuous_not_passed(verified, violations, verdict):
    """The platoon's and the networks' soundness re-checks hold when the falsification of the verified certificates
    finds no violation, fail when it finds one, and are inconclusive ("vacuous") when no certificate is verified, so
    nothing was searched (they passed with nothing searched before)."""
    claim = {c.id: c for c in platoon_claims(_platoon_results(verified, violations), THRESHOLDS,
                                             PLANS)}["platoon_verified_certificates_hold"]
    assert claim.verdict == verdict, claim
    if verdict == "inconclusive":
        assert claim.reason.startswith("vacuous") and claim.cause == "no interval", claim
    network = _network_results(falsified={"drones_tau1_reach": {"violations": violations}} if verified else {},
                               simulated={} if not verified else _network_results().simulated)
    assert _verdicts(network)["network_certificates_hold"] == verdict


def test_any_of_holds_on_one_part_at_bonferronis_level_and_fails_only_when_every_part_fails():
    """A union of k parts: it holds when one part holds at 1 - 0.05 / k, fails when every part fails, else is
    inconclusive; a part that holds at 95% but not at 97.5% does not carry a union of two."""
    def part(values, bar=1.1):
        return superiority(mean_ci(values, unit="scenario"), reference=1.0, margin=bar - 1.0)

    clear, below = part([1.3, 1.35, 1.25, 1.3]), part([1.0, 1.02, 0.98, 1.01])
    capped = part([1.0, 1.0, 1.0, 1.0])  # zero width: inconclusive
    marginal = [1.09, 1.21, 1.12, 1.18, 1.15, 1.15]  # holds at 95%, not at 97.5%
    assert part(marginal).verdict == "holds"
    assert superiority(mean_ci(marginal, 0.975), reference=1.0, margin=0.1).verdict == "inconclusive"
    assert _any_of({"a": clear, "b": capped}).verdict == "holds"
    assert _any_of({"a": below, "b": below}).verdict == "fails"
    assert _any_of({"a": below, "b": capped}).verdict == "inconclusive"
    assert _any_of({"a": part(marginal), "b": below}).verdict == "inconclusive"


def test_held_out_costs_are_per_scenario_values_of_the_control_cost():
    """Each controller's held-out values are ``cost`` on one scenario each, and their mean is ``cost`` over all the
    scenarios at once (every scenario has the same steps and subsystems); the scenarios are shared (paired)."""
    draws = {k: v.tolist() for k, v in draw_parameters(NETWORKS, "drones", 4, np.random.default_rng(3)).items()}
    nominal = {k: draws[k] for k in GAINS["drones"]}
    study = {"system": "drones", "n": 4, "tau": 2, "effort": 0.5,
             "controllers": {"nominal": {"gains": nominal},
                             "uncertified": {"gains": {k: [1.3 * g for g in v] for k, v in nominal.items()}}}}
    costs = held_out_costs(NETWORKS, 0.1, study, draws, 5, 40, seed=7)
    net = make_network(NETWORKS, 0.1, "drones", 4, 2, draws)
    x0, w = scenarios(net, 5, 40, torch.Generator().manual_seed(7))
    for name, c in study["controllers"].items():
        gains = {k: torch.as_tensor(np.asarray(v)) for k, v in c["gains"].items()}
        assert len(costs[name]) == 5
        assert np.mean(costs[name]) == pytest.approx(float(cost(net, NETWORKS, draws, gains, x0, w, 0.5)["J"]),
                                                     rel=1e-12)
    assert costs["nominal"] != costs["uncertified"]


@pytest.mark.parametrize("tau", [1, 2])
def test_platoon_lqr_is_the_plants_riccati_law_and_beats_the_nominal_cav_law(tau):
    """The platoon's LQR (platoon/lqr.py) on 4 followers (H, C, H, C): the plant read off ``model.step`` is the
    closed form of its docstring; the nonlinear rollout (``simulate_lqr``, OVM unclipped) equals the augmented linear
    loop to round-off; its summed Bryson cost from a nonzero pre-history is ``cost_to_go`` and below that of the
    nominal CAV law (the same information delay) and of a perturbed gain; with the clip and a leader dip it is what
    the paired closed-loop scenarios roll out."""
    pl = replace(make_platoon(PLATOON, 0.1, 4, np.random.default_rng(0)), tau=tau)
    Ax, Ad, B = platoon_plant(pl)
    dt, ks, kv, kd = pl.dt, *pl.gains
    ax, ad = np.eye(8), np.zeros((8, 8))
    for i in range(4):
        ax[2 * i, 2 * i + 1] = -dt
        if i:
            ax[2 * i, 2 * i - 1] = dt
        if not pl.is_cav[i]:
            a, b = pl.alpha[i], pl.beta[i]
            ad[2 * i + 1, 2 * i] = dt * a * pl.kappa
            ad[2 * i + 1, 2 * i + 1] = -dt * (a + b)
            if i:
                ad[2 * i + 1, 2 * i - 1] = dt * b
    assert np.allclose(Ax, ax, atol=1e-15) and np.allclose(Ad, ad, atol=1e-15)
    assert np.array_equal(B, dt * np.eye(8)[:, [3, 7]])
    law = platoon_lqr(pl)
    aug, d = law.aug, 1.0 / np.tile(pl.box, 4)
    x0 = torch.tensor([[0.4, -0.2], [-0.3, 0.1], [0.2, 0.3], [-0.1, -0.25]], dtype=torch.float64)
    Z0 = law.initial((x0.reshape(1, -1) * torch.as_tensor(d)).numpy())
    steps = 3_000
    X, u = simulate_augmented(aug, Z0, np.zeros((steps, 1, 2)), law.K)
    traj = simulate_lqr(pl, law, x0, torch.zeros(steps, 4, dtype=torch.float64),
                        torch.zeros(steps, dtype=torch.float64), clip=False)
    assert np.allclose(X[:, 0] / d, traj.reshape(steps + 1, 8).numpy(), atol=1e-12)

    def summed(Z, K):
        X, u = simulate_augmented(aug, Z, np.zeros((steps, 1, 2)), K)
        return float((X ** 2).sum() + (u ** 2).sum())

    best = summed(Z0, law.K)
    assert best == pytest.approx(float(law.cost_to_go(Z0)[0]), rel=1e-9)
    K_nom = np.zeros_like(law.K)  # c(k + tau) = k_s e_s(k) + k_v (e_vp(k) - e_v(k)) - k_d e_v(k), scaled
    for j, i in enumerate((1, 3)):
        K_nom[j, 2 * i] = -ks * pl.box[0] / c_max(pl)
        K_nom[j, 2 * i + 1] = (kv + kd) * pl.box[1] / c_max(pl)
        K_nom[j, 2 * i - 1] = -kv * pl.box[1] / c_max(pl)
    Z_nom = Z0.copy()
    for ahead in range(tau):
        Z_nom[:, aug.u_slice(ahead)] = -Z0[:, aug.x_slice(0)] @ K_nom[:, aug.x_slice(0)].T
    assert summed(Z_nom, K_nom) > best and summed(Z0, 1.1 * law.K) > best
    nominal = simulate(pl, x0, torch.zeros(steps, 4, dtype=torch.float64), torch.zeros(steps, dtype=torch.float64),
                       None, clip=False)
    Xn, _ = simulate_augmented(aug, Z_nom, np.zeros((steps, 1, 2)), K_nom)
    assert np.allclose(Xn[:, 0] / d, nominal.reshape(steps + 1, 8).numpy(), atol=1e-12)  # the same nominal loop
    runs = closed_loop(pl, partial(simulate_lqr, pl, law), 120, 3, pl.w_bound, seed=4)
    lead, w = platoon_scenarios(pl, 120, 3, pl.w_bound, 4)
    e = simulate_lqr(pl, law, torch.zeros(4, 2, dtype=torch.float64), w[:, 2], lead)[..., 0]
    assert runs["rms_spacing"][2] == pytest.approx(float(e.pow(2).mean().sqrt()), rel=1e-12)


def test_retuned_gains_rung_is_the_nominal_law_at_its_gains_and_lowers_the_lqr_cost():
    """At the nominal gains, ``rollout`` with ``gains_command`` is ``model.simulate`` with no residual (clipped OVM,
    leader dip, a batch of scenarios at once); ``tune_gains`` lowers the Bryson cost on its training scenarios and
    the LQR's cost is lower still, in the linear undisturbed loop from a nonzero pre-history."""
    pl = make_platoon(PLATOON, 0.1, 4, np.random.default_rng(0))
    lead, w = platoon_scenarios(pl, 80, 3, pl.w_bound, 1)
    x0 = torch.zeros(3, 4, 2, dtype=torch.float64)
    batch = rollout(pl, gains_command(pl, torch.tensor(pl.gains, dtype=torch.float64)), x0, w, lead)
    for s in range(3):
        one = simulate(pl, x0[s], w[:, s], lead, None)
        assert torch.allclose(batch[:, s], one, atol=1e-13, rtol=0)

    def cost(gains):
        commands = []
        law = gains_command(pl, torch.tensor(gains, dtype=torch.float64))

        def record(k, hist):
            commands.append(law(k, hist))
            return commands[-1]

        with torch.no_grad():
            return float(bryson_cost(pl, rollout(pl, record, x0, w, lead), torch.stack(commands)))

    tuned = tune_gains(pl, 20, 0.05, lead, w)
    assert tuned != pl.gains and cost(tuned) < cost(pl.gains)


def test_platoon_control_is_judged_against_its_lqr_with_the_uncertified_rung_beside():
    """The platoon's headroom is nominal / LQR and its competitiveness certified / LQR (the ladder's strongest rung),
    the uncertified neural controller's ratios beside: a certified controller as good as the uncertified one fails
    when the LQR is 20% better on every measure, and holds when the LQR is within 2%."""
    results = _platoon_results(True, 0)
    claims = {c.id: c for c in platoon_claims(results, THRESHOLDS, PLANS)}
    head, comp = claims["platoon_control_headroom"], claims["platoon_competitive_control"]
    assert head.verdict == "holds" and comp.verdict == "holds"
    assert head.measured["nominal_over_lqr_rms_spacing"]["mean"] == pytest.approx(1.3 / 0.98, abs=1e-4)
    assert head.measured["nominal_over_uncertified_rms_spacing"]["mean"] == pytest.approx(1.3, abs=1e-4)
    assert comp.measured["certified_over_uncertified_string_ratio"]["mean"] == pytest.approx(1.02, abs=1e-4)
    strong = {m: (0.8 * UNCERTIFIED_J).tolist() for m in ("rms_spacing", "string_ratio")}
    claims = {c.id: c for c in platoon_claims(replace(results, scenarios=results.scenarios | {"lqr": strong}),
                                              THRESHOLDS, PLANS)}
    assert claims["platoon_control_headroom"].verdict == "holds"
    assert claims["platoon_competitive_control"].verdict == "fails"
    assert "certified / LQR" in claims["platoon_competitive_control"].reason


def test_platoon_followers_pass_a_constant_velocity_error_on_at_gain_one():
    """The nominal platoon (no residual): every follower has an equilibrium (e_s, c) behind a predecessor at a
    constant velocity error c, e_s = c / kappa for an HDV and (k_d c) / k_s for a CAV, so no strict certificate
    exists; a CAV whose spacing gain is too weak to hold c inside the box has none."""
    pl = make_platoon(PLATOON, 0.1, 4, np.random.default_rng(0))
    policy = Policy(4, 1.0)  # the residual starts at zero: the nominal controller
    assert gain_one_equilibria(pl, policy, 0.75) == [True] * 4
    ks, kv, kd = pl.gains
    assert 0.75 / pl.kappa <= pl.box[0] and kd * 0.75 / ks <= pl.box[0]
    weak = replace(pl, gains=(0.01, kv, kd))  # the CAVs' equilibrium spacing kd c / ks = 22.5 > S
    assert gain_one_equilibria(weak, policy, 0.75) == [not c for c in pl.is_cav]


def _chain_rollout(pl, policy, x0, lead, w):
    """Absolute trajectory [T + 1, N, 2] and the relative errors of every follower along it (the leader's velocity
    error at step k is ``lead[k]``, held after the last step)."""
    traj = simulate(pl, x0, w, lead, policy, clip=False)
    vp = torch.cat([torch.cat([lead, lead[-1:]])[:, None], traj[:, :-1, 1]], 1)
    return traj, relative(pl, np.arange(pl.n), traj, vp)


def test_relative_step_and_its_compiled_net_match_the_absolute_simulation():
    """xr_i(k+1) = relative_step(xr_i(k), xr_i(k - tau), xr_{i-1}(k - tau), (w_i, w_{i-1})) along a simulated
    platoon (absolute errors, unclipped OVM, a nonzero CAV residual, a leader that accelerates: its acceleration
    is w_p of follower 1), and the compiled increment net gives the same step."""
    torch.manual_seed(0)
    pl = make_platoon(PLATOON, 0.1, 4, np.random.default_rng(0))
    pol = Policy(8, 1.0)
    torch.nn.init.normal_(pol.net[-1].weight, std=0.3)
    T, tau = 40, pl.tau
    g = torch.Generator().manual_seed(2)
    w = (2 * torch.rand(T, pl.n, generator=g, dtype=torch.float64) - 1) * pl.w_bound
    lead = 0.2 * torch.sin(torch.arange(T, dtype=torch.float64) / 5)
    x0 = 0.3 * (2 * torch.rand(pl.n, 2, generator=g, dtype=torch.float64) - 1)
    with torch.no_grad():
        traj, xr = _chain_rollout(pl, pol, x0, lead, w)
        a0 = torch.cat([lead[1:] - lead[:-1], torch.zeros(1, dtype=torch.float64)]) / pl.dt  # leader acceleration
        idx = np.arange(pl.n)
        for k in range(tau, T - 1):
            wp = torch.cat([a0[k:k + 1], w[k, :-1]])
            xpd = torch.cat([torch.zeros(1, 2, dtype=torch.float64), xr[k - tau, :-1]])
            wk = torch.stack([w[k], wp], -1)
            nxt = relative_step(pl, idx, xr[k], xr[k - tau], xpd, wk, pol)
            assert torch.allclose(nxt, xr[k + 1], atol=1e-10), k
            for i in idx:
                z = torch.cat([xr[k, i], xr[k - tau, i] - xr[k, i], xpd[i], torch.zeros(2, dtype=torch.float64),
                               wk[i]]).numpy()
                z[4:6] = 0.0 if i == 0 else z[4:6]  # x_p(k) does not enter the step
                z[6:8] = xpd[i].numpy() - z[4:6]
                inc = compile_increment(pol, pl, i)(z[None])[0]
                assert np.allclose(inc, (xr[k + 1, i] - xr[k, i]).numpy(), atol=1e-10)


def test_hdv_cav_hdv_chain_at_a_constant_speed_error_meets_the_relative_condition():
    """An HDV-CAV-HDV chain cruising at a constant speed error c (each at its equilibrium spacing h_i c) stays
    there, is the origin of the relative errors, and meets condition (C) of every follower for a (random,
    untrained) strict certificate with any c_0 > 0: G_i = V(0) - max(R, rho c_0) = -rho c_0 < 0. In absolute
    errors the same chain passes c on at DC gain 1 at every follower (no strict certificate of that form exists),
    and in relative errors no follower has a nonzero equilibrium, unless a residual cancels the CAV's spacing gain."""
    torch.manual_seed(0)
    pl = make_platoon(PLATOON, 0.1, 3, np.random.default_rng(0))
    assert pl.is_cav.tolist() == [False, True, False]
    vc, pol = VectorCert(pl.box, 8, 4, 0.05, 0.99), Policy(4, 1.0)
    torch.nn.init.normal_(pol.net[-1].weight, std=0.3)
    c, T = 0.75, 30
    x0 = torch.stack([torch.as_tensor(headway(pl, np.arange(3))) * c, torch.full((3,), c, dtype=torch.float64)], -1)
    with torch.no_grad():
        traj, xr = _chain_rollout(pl, pol, x0, torch.full((T,), c, dtype=torch.float64),
                                  torch.zeros(T, 3, dtype=torch.float64))
        assert torch.allclose(traj, x0.expand_as(traj), atol=1e-12)
        assert float(xr.abs().max()) < 1e-12
        G, level = decrease(vc, pol, pl, np.arange(3), torch.zeros(3, Q_DIM, dtype=torch.float64), 0.2)
    assert torch.all(level == 0) and torch.allclose(G, torch.full((3,), -0.99 * 0.2, dtype=torch.float64))
    for i in range(3):
        assert compile_query(vc, pol, pl, i, 0.2)(np.zeros((1, Q_DIM)))[0, 0] == pytest.approx(-0.99 * 0.2)
    assert gain_one_equilibria(pl, pol, c) == [True] * 3
    assert all(u > 0 for u in relative_equilibria(pl, pol))
    # a residual that cancels the CAV's spacing gain k_s on the ray s~ > 0: a nonzero relative equilibrium
    ks = pl.gains[0]
    cancel = Policy(1, 1.0)
    with torch.no_grad():
        cancel.net[0].weight.copy_(torch.tensor([[1.0, 0.0]]))
        cancel.net[2].weight.copy_(torch.tensor([[1.0]]))
        cancel.net[4].weight.copy_(torch.tensor([[-ks * pl.box[0]]]))
    assert [u == 0.0 for u in relative_equilibria(pl, cancel)] == [False, True, False]


@pytest.mark.parametrize(("command", "verdict"), [([0.5] * 4, "holds"), ([0.5, 0.0, 0.5, 0.5], "fails")])
def test_platoon_certificate_can_exist_is_judged_on_the_relative_equilibria(command, verdict):
    """The precondition holds when no follower has a nonzero relative equilibrium (the absolute gain-1 count is
    beside, not judged) and fails when one has."""
    r = replace(_platoon_results(True, 0), relative_command=command)
    claim = {c.id: c for c in platoon_claims(r, THRESHOLDS, PLANS)}["platoon_certificate_can_exist"]
    assert claim.verdict == verdict, claim


@pytest.mark.parametrize("follower", [0, 1])
def test_delayed_loop_spectral_radius_is_the_root_of_the_hand_derived_characteristic_polynomial(follower):
    """tau = 1: xr(k+1) = A0 xr(k) + b g^T xr(k - 1) has det(z^2 I - z A0 - b g^T)
    = z [z^3 - 2 z^2 + (1 - dt g_v) z + dt g_v + dt^2 g_s] (A0 = [[1, -dt], [0, 1]], b = (0, dt), g = (g_s, g_v)),
    so the stacked loop's spectral radius is the largest root modulus of that cubic (an HDV and a CAV follower)."""
    pl = make_platoon(PLATOON, 0.1, 2, np.random.default_rng(0))
    g_s, g_v = relative_gain(pl, [follower])[0]
    dt = pl.dt
    cubic = [1.0, -2.0, 1.0 - dt * g_v, dt * g_v + dt ** 2 * g_s]
    assert spectral_radius(pl, follower) == pytest.approx(np.abs(np.roots(cubic)).max(), rel=1e-12)
    unstable = replace(pl, alpha=pl.alpha * 40)  # a stiff HDV gain with a one-step delay oscillates out
    assert spectral_radius(unstable, 0) > 1.0


@pytest.mark.parametrize(("a", "peak_w"), [(0.6, 0.0), (-0.6, np.pi), (0.0, None)])
def test_hinf_of_a_first_order_lag_is_its_closed_form(a, peak_w):
    """H(z) = b / (z - a): sup_w |H| = b / (1 - |a|), at w = 0 for a > 0 and at pi for a < 0 (flat for a = 0); the
    crossing test says exceeded just below the peak and not just above it."""
    b = 0.3
    num, den = np.array([0.0, b]), np.array([1.0, -a])
    out = hinf(num, den, 257, 1e-7)
    assert out["peak"] == pytest.approx(b / (1 - abs(a)), rel=1e-10) and out["certified"]
    if peak_w is not None:
        assert out["w"] == pytest.approx(peak_w, abs=1e-6)
    assert exceeds(num, den, 0.999 * out["peak"], 1e-7) and not exceeds(num, den, 1.001 * out["peak"], 1e-7)
    resonant = (np.array([0.0, 0.0, 0.19]), np.polymul([1.0, -0.9 * np.exp(0.5j)], [1.0, -0.9 * np.exp(-0.5j)]).real)
    grid = response(*resonant, np.linspace(0, np.pi, 200001)).max()  # an interior peak: a dense grid as the oracle
    assert hinf(*resonant, 65, 1e-7)["peak"] == pytest.approx(grid, rel=1e-8)


def _amplitude(u: np.ndarray, w: float) -> complex:
    """Complex amplitude of u at frequency w over a whole number of periods."""
    return complex(np.sum(u * np.exp(-1j * w * np.arange(len(u))))) * 2 / len(u)


def test_accel_transfer_is_the_predecessor_to_follower_channel_of_the_simulation():
    """An HDV, CAV platoon (absolute errors, unclipped OVM, nominal CAV law) behind a leader whose speed oscillates at
    w = 2 pi / 144 (near the CAV's peak): in steady state each follower's acceleration is H_i(e^{jw}) times its
    predecessor's (|.| and phase), and the same loop driven on the wrong channel (the follower's own disturbance,
    E = (0, dt)) does not match it (the mutation the test must catch)."""
    pl = make_platoon(PLATOON, 0.1, 2, np.random.default_rng(0))
    period, w = 144, 2 * np.pi / 144
    T = 12 * period
    k = torch.arange(T + 1, dtype=torch.float64)
    lead = 0.1 * torch.sin(w * k)
    with torch.no_grad():
        traj = simulate(pl, torch.zeros(pl.n, 2, dtype=torch.float64), torch.zeros(T, pl.n, dtype=torch.float64),
                        lead[:-1], None, clip=False)
    acc = np.concatenate([np.diff(lead.numpy())[:, None], np.diff(traj[..., 1].numpy(), axis=0)], 1) / pl.dt
    tail = acc[-5 * period:]
    amp = [_amplitude(tail[:, j], w) for j in range(3)]
    z = np.exp(1j * w)
    for i in range(2):
        num, den = accel_transfer(pl, i)
        assert amp[i + 1] / amp[i] == pytest.approx(np.polyval(num, z) / np.polyval(den, z), rel=1e-6)
        A, _, _, Cu = delayed_loop(pl, i)
        own = np.zeros((A.shape[0], 1))
        own[1, 0] = pl.dt
        wrong = (Cu @ np.linalg.solve(z * np.eye(A.shape[0]) - A, own))[0, 0]
        assert abs(abs(wrong) - abs(amp[i + 1] / amp[i])) > 0.05 * abs(amp[i + 1] / amp[i])


def test_a_constant_leader_acceleration_rules_out_a_strict_certificate_from_the_second_cav_on():
    """H, C, H, C behind a leader at constant acceleration: the chain (absolute simulation, unclipped) settles at the
    relative states of ``constant_acceleration_states`` (a fixed point of relative_step), the two CAVs (one law, a
    nonzero residual) hold the same state, so the DC cycle 2 -> 4 has lambda = 1 > rho^2 and the cascade analysis
    breaks from N = 4 (not N = 2); and any strict certificate violates (C) at one of the constant queries of
    followers 2-4 (here a random one)."""
    torch.manual_seed(0)
    pl = make_platoon(PLATOON, 0.1, 4, np.random.default_rng(0))
    pol = Policy(8, 1.0)
    torch.nn.init.normal_(pol.net[-1].weight, std=0.05)
    a, T = 0.1, 1500
    lead = a * pl.dt * torch.arange(T, dtype=torch.float64)
    with torch.no_grad():
        traj, xr = _chain_rollout(pl, pol, torch.zeros(pl.n, 2, dtype=torch.float64), lead,
                                  torch.zeros(T, pl.n, dtype=torch.float64))
    x = constant_acceleration_states(pl, pol, a)
    assert np.allclose(xr[-2].numpy(), x, atol=1e-9)  # the last row holds the leader's speed (_chain_rollout)
    assert np.array_equal(x[1], x[3]) and not np.allclose(x[0], x[2])
    out = cascade_analysis(pl, pol, 0.99, 257, 1e-9, 1e-7)
    assert out["equilibrium_residual"] < 1e-12 and out["first_n_broken"] == 4
    assert {(c["j"], c["i"]) for c in out["dc_broken"]} == {(1, 3)}
    assert all(c["gain"] == pytest.approx(1.0, abs=1e-12) for c in out["dc_broken"])
    assert cascade_analysis(pl.first(2), pol, 0.99, 257, 1e-9, 1e-7)["dc_broken"] == []
    vc = VectorCert(pl.box, 0, 4, 0.05, 0.99)
    xt = torch.as_tensor(x)
    z = torch.cat([xt[1:], torch.zeros(3, 2, dtype=torch.float64), xt[:-1], torch.zeros(3, 4, dtype=torch.float64)], 1)
    with torch.no_grad():
        _, level = decrease(vc, pol, pl, np.arange(1, 4), z, 1.0)
        G = torch.stack([decrease(vc, pol, pl, np.array([i + 1]), z[i:i + 1], float(level[i]))[0][0]
                         for i in range(3)])
    assert float(G.max()) > 0


@pytest.mark.parametrize(("radius", "broken", "verdict"), [(0.93, False, "holds"), (0.93, True, "fails"),
                                                           (0.9999, False, "fails")])
def test_platoon_cascade_precondition_is_judged_on_radius_and_dc_cycles(radius, broken, verdict):
    """The cascade precondition holds when every radius is within rho^(1/3) and no DC cycle breaks, fails otherwise,
    and the platoon's evidence waits on it."""
    r = replace(_platoon_results(True, 0), cascade=_cascade_results(radius, broken))
    claims = {c.id: c for c in resolve(platoon_claims(r, THRESHOLDS, PLANS))}
    assert claims["platoon_cascade_admits_contraction"].verdict == verdict
    assert claims["platoon_verified_all_n"].verdict == ("holds" if verdict == "holds" else "inconclusive")


@pytest.mark.parametrize("system,tau", [("drones", 1), ("drones", 2), ("microgrid", 1), ("microgrid", 3)])
def test_delay_augmented_ring_reproduces_the_delayed_simulation(system, tau):
    """The augmented system (Z = X history and pending inputs, decision u(k + tau)) with the local feedback written as
    d(k) = -K_loc X(k) and the inputs pending at 0 those of the constant pre-history reproduces ``simulate_network``
    of the ring with those gains step by step, and its cost J equals ``cost``'s; the plant's matrices plus B K_loc on
    the delayed block are the ring's own (gains removed by ``plant`` and put back)."""
    draws = {k: v.tolist() for k, v in draw_parameters(NETWORKS, system, 3, np.random.default_rng(5)).items()}
    net = make_network(NETWORKS, 0.1, system, 3, tau, draws)
    Ax, Ad, B = ring_matrices(plant(net, NETWORKS, draws))
    gains = {k: np.asarray(draws[k]) for k in GAINS[system]}
    K_loc = np.zeros((3, 6))  # u_i = -K_loc X: drones kp_i q_i + kv_i v_i, microgrid (D_i / M_i) v_i
    for i in range(3):
        K_loc[i, 2 * i:2 * i + 2] = ((gains["kp"][i], gains["kv"][i]) if system == "drones"
                                     else (0.0, gains["damping"][i] / draws["inertia"][i]))
    Ax_full, Ad_full, _ = ring_matrices(net)
    assert np.allclose(Ax, Ax_full, atol=1e-15) and np.allclose(Ad - B @ K_loc, Ad_full, atol=1e-15)
    aug = augment(Ax, Ad, B, tau)
    x0, w = scenarios(net, 2, 25, torch.Generator().manual_seed(1))
    Z0 = np.zeros((2, aug.A.shape[0]))
    flat = x0.reshape(2, -1).numpy()
    for lag in range(tau + 1):
        Z0[:, aug.x_slice(lag)] = flat
    for ahead in range(tau):
        Z0[:, aug.u_slice(ahead)] = -flat @ K_loc.T
    K = np.zeros((3, aug.A.shape[0]))
    K[:, aug.x_slice(0)] = K_loc
    X, u = simulate_augmented(aug, Z0, w.numpy(), K)
    traj = simulate_network(net, x0, w).reshape(26, 2, 6).numpy()
    assert np.abs(X - traj).max() < 1e-12
    J = cost(net, NETWORKS, draws, {k: torch.as_tensor(v) for k, v in gains.items()}, x0, w, 0.7)["J"]
    assert float((X ** 2).sum(-1).mean() / 3 + 0.7 * (u ** 2).mean()) == pytest.approx(float(J), rel=1e-12)


def _riccati_by_iteration(A, B, Q, R, steps=20_000):
    """P_{t+1} = Q + A' P_t A - A' P_t B (R + B' P_t B)^{-1} B' P_t A from P_0 = 0 (value iteration)."""
    P = np.zeros_like(A)
    for _ in range(steps):
        P = Q + A.T @ P @ A - A.T @ P @ B @ np.linalg.solve(R + B.T @ P @ B, B.T @ P @ A)
    return P


@pytest.mark.parametrize("tau", [1, 2])
def test_lqr_cost_is_the_closed_form_and_bounds_the_local_feedback(tau):
    """On a 2-node microgrid ring: P equals the Riccati recursion iterated to convergence; the undisturbed loop's
    summed cost sum_k |X(k)|^2 + r |u(k)|^2 equals cost_to_go(Z0) = Z0' P Z0 + r |pending|^2; the pending inputs of
    ``Lqr.initial`` minimise it given x0 (perturbing them raises it); the nominal droop (a controller with the same
    information delay) and a perturbed K cost more from the same pre-history; ``lqr_cost`` is the sampled J of that
    loop."""
    draws = {k: v.tolist() for k, v in draw_parameters(NETWORKS, "microgrid", 2, np.random.default_rng(2)).items()}
    net = make_network(NETWORKS, 0.1, "microgrid", 2, tau, draws)
    law = lqr_of(net, NETWORKS, draws, 0.5)
    aug = law.aug
    Q = np.zeros_like(aug.A)
    Q[aug.x_slice(0), aug.x_slice(0)] = np.eye(4)
    assert np.allclose(law.P, _riccati_by_iteration(aug.A, aug.Bd, Q, 0.5 * np.eye(2)), rtol=1e-8, atol=1e-10)
    x0 = np.random.default_rng(0).uniform(-0.25, 0.25, size=(3, 4))
    Z0 = law.initial(x0)

    def summed(Z, K, steps=4_000):
        X, u = simulate_augmented(aug, Z, np.zeros((steps, Z.shape[0], 2)), K)
        return (X ** 2).sum((0, 2)) + 0.5 * (u ** 2).sum((0, 2))

    best = summed(Z0, law.K)
    assert np.allclose(best, law.cost_to_go(Z0), rtol=1e-9)
    moved = Z0.copy()
    moved[:, aug.u_slice(0)] += 0.01
    assert (law.cost_to_go(moved) > law.cost_to_go(Z0)).all()
    K_loc = np.zeros((2, aug.A.shape[0]))
    for i in range(2):
        K_loc[i, 2 * i + 1] = draws["damping"][i] / draws["inertia"][i]
    Z_loc = Z0.copy()
    for ahead in range(tau):
        Z_loc[:, aug.u_slice(ahead)] = -x0 @ K_loc[:, aug.x_slice(0)].T
    assert (summed(Z_loc, K_loc) > best).all()
    assert (summed(Z0, law.K * 1.1) > best).all()
    xs = torch.as_tensor(x0).reshape(3, 2, 2)
    w = torch.zeros(30, 3, 2, dtype=torch.float64)
    X, u = simulate_augmented(aug, Z0, w.numpy(), law.K)
    J = lqr_cost(net, NETWORKS, draws, law.K, xs, w, 0.5)["J"]
    assert J == pytest.approx(float((X ** 2).sum(-1).mean() / 2 + 0.5 * (u ** 2).mean()), rel=1e-12)


def test_load_step_scenarios_are_bounded_steps_with_the_same_initial_states():
    """Load steps: every (scenario, subsystem) disturbance is 0 before its step and a constant |P| <= w_bar from it,
    the step inside the declared window; the initial states are those of the i.i.d. scenarios of the same seed."""
    draws = {k: v.tolist() for k, v in draw_parameters(NETWORKS, "microgrid", 4, np.random.default_rng(1)).items()}
    net = make_network(NETWORKS, 0.1, "microgrid", 4, 1, draws)
    x0, w = scenarios(net, 6, 40, torch.Generator().manual_seed(3), 0.5)
    x0_iid, _ = scenarios(net, 6, 40, torch.Generator().manual_seed(3))
    assert torch.equal(x0, x0_iid) and w.shape == (40, 6, 4)
    for s in range(6):
        for i in range(4):
            col = w[:, s, i]
            start = int((col != 0).nonzero()[0]) if bool((col != 0).any()) else 40
            assert start < 20 and bool((col[:start] == 0).all()) and bool((col[start:] == col[-1]).all())
            assert abs(float(col[-1])) <= net.w_bound
    assert len({round(float(v), 12) for v in w[-1].flatten()}) == 24  # each step its own size
