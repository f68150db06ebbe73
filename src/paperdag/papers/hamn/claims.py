"""The paper's claims restated for our scale: a pure function from measured numbers to claims of three kinds.

HAMN is compared with each fair Euclidean baseline (BASELINES: the modern Hopfield network on L2-normalised patterns
and the distance-softmax memory, modern_hopfield.py), each memory at the finite temperature of its beta rule and
with query noise true to its geometry (queries.py, noise.py). Ramsauer's MHN on the raw patterns is run and reported
(metrics ``acc_mhn_*``, ``clean_acc_mhn_*``) but is no baseline of a claim: its dot-product readout on leaves of
unequal norm cannot return its own stored patterns on deep trees (by construction, see modern_hopfield.py).

- preconditions (the regime): each compared memory retrieves its own noise-free stored leaves (mean over seeds at
  least ``min_clean_accuracy`` in every (b, D) it is judged in: an enumeration of every stored leaf); retrieves noisy
  queries no worse (within ``shallow_tol``) than the strongest rung of its ladder - the nearest-neighbour decoder of
  its own geometry on the same queries, the ML decoder of its query noise (for HAMN's noise in the tangent space at
  the origin: the nearest leaf there; for a wrapped normal: the hyperbolic nearest leaf itself, noise.py), chance; its dynamics act: they decode at least ``min_dynamics_share`` of the noisy
  queries to another leaf than that decoder; each embedding closes at least ``min_map_gain`` of the gap from the
  strongest trivial embedding (the untrained embedding, then a uniformly random ranking) to the tree's own path
  metric, for every b; the Poincare embedding reconstructs the deepest trees better than the Euclidean one;
- evidence: the depth trend of noise tolerance (the slope over depth of log rho_50(HAMN) / rho_50(baseline), rho_50
  the noise at which a memory retrieves half its queries), the deepest-depth advantage and the closeness of errors in
  the tree, for each baseline, each for every b (``all_of``: every b holds, or one fails under Holm's correction);
  and HAMN's dynamics against hyperbolic nearest-leaf decoding on the same queries;
- checks: the calibration of the noise at D = 2 transfers to the held-out evaluation seeds (the D = 2
  accuracy of each compared memory's noise's ML decoder equivalent to the calibration target: the former shallow parity, true by construction up to the
  transfer); the seed-level plans carry the spread of the pilot this run measures; HAMN's iterates stay on the ball (true by construction of the exp-map updates; every iterate
  enumerated).

Units: an evaluation seed (one embedding and noise draw per (b, D) cell; the per-(b, D) intervals and the depth
slopes are t intervals over seeds), or an evaluation cell (b, D, seed), each an independent SeedSequence draw (error
distances, each memory against its decoders, the dynamics' share); each under its plan in params.yaml. The
calibration seeds set beta and rho, are the pilot of the seed-level plans (pilot.py), and no judged interval reuses
them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from paperdag.common.plans import SamplePlan, required_n
from paperdag.common.stats import Interval, mean_ci, paired_diff_ci
from paperdag.common.verdicts import (Claim, Judgement, Ladder, all_of, check, equivalence, evidence, exact,
                                      noninferiority, precondition, superiority)

from .params import ClaimParams, Plans
from .pilot import FAMILIES, Spread

HYPOTHESIS = ("HAMNs outperform Euclidean MHNs on data with deep hierarchies but exhibit comparable performance on "
              "data with weak or shallow hierarchies (abstract; depth-controlled experiments, no number given)")
MODEL_NAMES = {"mhn": "the Euclidean MHN (Ramsauer et al.)",
               "mhn_normed": "the Euclidean MHN on L2-normalised patterns",
               "mhn_distance": "the Euclidean distance-softmax memory", "hamn": "HAMN"}
BASELINES = ("mhn_normed", "mhn_distance")
COMPARED = (*BASELINES, "hamn")
GEOMETRY_NAMES = {"poincare": "Poincare", "euclidean": "Euclidean"}
MEMORY_GEOMETRY = {"mhn_normed": "euclidean", "mhn_distance": "euclidean", "hamn": "poincare"}
NEAREST = "the nearest-neighbour decoder of the memory's geometry (no update; the same noisy queries)"
ML = "the ML decoder of the memory's query noise (the same noisy queries)"
CHANCE = "a uniformly random leaf (chance, 1 / #leaves)"
UNTRAINED = "the untrained embedding (its initial coordinates)"
RANDOM_RANKING = "a uniformly random ranking of the other nodes"
EMBEDDINGS_LEARNED = tuple(f"{g}_embedding_learned" for g in GEOMETRY_NAMES)

Cell = tuple[int, int]  # (b, D)


def deep_regime(baseline: str) -> list[str]:
    """The preconditions of a comparison over depth: both memories store their leaves at every depth, retrieve as
    well as their nearest-neighbour decoders and their dynamics act; the Poincare embedding carries the hierarchy
    better than the Euclidean one; both embeddings learned."""
    return [f"{baseline}_stores_patterns", "hamn_stores_patterns", f"{baseline}_retrieves_as_nearest_neighbour",
            "hamn_retrieves_as_nearest_neighbour", f"{baseline}_dynamics_act", "hamn_dynamics_act",
            "poincare_beats_euclidean_map", *EMBEDDINGS_LEARNED]


@dataclass(frozen=True)
class Comparison:
    """HAMN against one baseline, per branching b over seeds: Delta = acc_HAMN - acc_baseline at the largest D
    (``deepest``) and the slope over D of log rho_50(HAMN) - log rho_50(baseline) (``tolerance_slope``); over cells
    with D >= 3: the error-LCA fraction HAMN - baseline (``error_gap``)."""

    deepest: dict[int, Interval]
    tolerance_slope: dict[int, Interval]
    error_gap: Interval


@dataclass(frozen=True)
class DecoderRung:
    """One memory on every evaluation cell (the same cell order in each array): its noisy-query accuracy, its
    nearest-neighbour and ML decoders' on the same queries, chance, the share of queries it decodes unlike its
    nearest-neighbour decoder; the queries decoded, and decoded differently."""

    accuracy: np.ndarray
    accuracy_nn: np.ndarray
    accuracy_ml: np.ndarray
    chance: np.ndarray
    share: np.ndarray
    n_queries: int
    disagreements: int


@dataclass(frozen=True)
class EmbeddingRungs:
    """One geometry's reconstruction MAP per (b, D) cell, one value per evaluation seed (seeds aligned), the same
    for each trivial rung (``rungs``: name -> cell -> per-seed MAP), and the tree path metric's MAP per cell."""

    map: dict[Cell, np.ndarray]
    rungs: dict[str, dict[Cell, np.ndarray]]
    tree_metric: dict[Cell, float]


@dataclass(frozen=True)
class Regime:
    """What the preconditions measure.

    ``clean``: model -> (b, D) -> mean accuracy over seeds of noise-free queries of every stored leaf;
    ``map_deepest``: geometry -> b -> per-seed reconstruction MAP at the deepest depth (seeds aligned);
    ``embeddings``: geometry -> its MAP and its trivial rungs; ``decoders``: memory -> its ladder's numbers."""

    clean: dict[str, dict[Cell, float]]
    map_deepest: dict[str, dict[int, np.ndarray]]
    embeddings: dict[str, EmbeddingRungs]
    decoders: dict[str, DecoderRung]
    calibration: dict[str, dict[int, Interval]]
    """model -> b -> its D = 2 accuracy on the evaluation seeds at the rho calibrated on the calibration seeds."""
    tolerance: dict[str, dict[int, Interval]]
    """model -> b -> the slope of log rho_50 over D (per seed)."""


def _iv(x: Interval) -> dict[str, float | int | list[float]]:
    return {"mean": round(x.mean, 4), "ci95": [round(x.lo, 4), round(x.hi, 4)], "n": x.n}


def every_b(judged: dict[int, Judgement]) -> Judgement:
    """A claim "for every branching b": ``all_of`` over the b's (Holm's correction where one fails)."""
    return all_of({f"b={b}": j for b, j in sorted(judged.items())}, quoted=len(judged))


def _stores(model: str, clean: dict[Cell, float], p: ClaimParams) -> Claim:
    """Noise-free retrieval of the stored leaves (mean over seeds) at least ``min_clean_accuracy`` in every (b, D),
    every stored leaf of every evaluated cell queried once (an enumeration)."""
    worst = min(clean, key=clean.__getitem__)
    short = [f"b{b} D{d}: {v:.3f}" for (b, d), v in sorted(clean.items()) if v < p.min_clean_accuracy]
    return precondition(
        f"{model}_stores_patterns", f"{MODEL_NAMES[model]} at its calibrated beta retrieves its own noise-free "
        f"stored leaves (accuracy >= {p.min_clean_accuracy:g}, mean over seeds) in every (b, D)",
        "noise-free retrieval of the memory's own stored patterns (every leaf queried once, rho = 0)",
        {"least_clean_accuracy": round(clean[worst], 4), "worst_cell": "b{} D{}".format(*worst),
         "threshold": p.min_clean_accuracy,
         "by_cell": {f"b{b}_D{d}": round(v, 4) for (b, d), v in sorted(clean.items())}},
        exact(clean[worst] >= p.min_clean_accuracy, f"least noise-free accuracy {clean[worst]:.4f} at b{worst[0]} "
              f"D{worst[1]}" + (f"; below {p.min_clean_accuracy:g}: {', '.join(short)}" if short else "")
              + ", every stored leaf of every evaluated cell queried with itself", basis="enumeration"))


def _ladder(r: DecoderRung) -> Ladder:
    return Ladder.of("higher", {NEAREST: mean_ci(r.accuracy_nn, unit="cell"), ML: mean_ci(r.accuracy_ml, unit="cell"),
                                CHANCE: mean_ci(r.chance, unit="cell")})


def _retrieves(model: str, r: DecoderRung, p: ClaimParams, plans: Plans) -> Claim:
    """Noisy-query accuracy no worse than the strongest rung of the memory's ladder by more than ``shallow_tol`` (the
    band within which two retrievals count as comparable), on the per-cell accuracy difference over every
    evaluation cell; a memory that decodes every query to its decoder's leaf is that decoder (an enumeration)."""
    ladder = _ladder(r)
    ref = r.accuracy_nn if ladder.strongest.name == NEAREST else r.accuracy_ml if ladder.strongest.name == ML \
        else r.chance
    gap = paired_diff_ci(r.accuracy, ref, unit="cell")
    what = f"{model} accuracy - {ladder.strongest.name.split(' (')[0]}'s (per cell)"
    judged = (exact(True, f"{model} decodes all {r.n_queries} evaluated noisy queries to its nearest-neighbour "
                    "decoder's leaf", basis="enumeration") if r.disagreements == 0 and ladder.strongest.name == NEAREST
              else noninferiority(gap, margin=p.shallow_tol, direction="above", what=what, plan=plans.cells))
    return precondition(
        f"{model}_retrieves_as_nearest_neighbour", f"{MODEL_NAMES[model]} retrieves the right leaf from noisy "
        f"queries no worse than the strongest trivial decoder of its own geometry and noise on the same queries, "
        f"within {p.shallow_tol:g} accuracy (non-inferiority over every evaluation cell)", ladder.strongest.name,
        {"accuracy": mean_ci(r.accuracy, unit="cell").rounded(), "memory_minus_strongest_rung": _iv(gap),
         "share_decoded_unlike_nearest": round(r.disagreements / r.n_queries, 6), "queries": r.n_queries,
         "ml_decoder_agrees_with_nearest_in_accuracy": bool(np.allclose(r.accuracy_ml, r.accuracy_nn)),
         "ladder": {rung.name: rung.value.rounded() for rung in ladder.rungs}},
        judged, ladder=ladder)


def _dynamics_act(model: str, r: DecoderRung, p: ClaimParams, plans: Plans) -> Claim:
    """The share of noisy queries (at the calibrated rho) the memory decodes to another leaf than its
    nearest-neighbour decoder lies above ``min_dynamics_share`` (t interval of the per-cell share over every
    evaluation cell); no query decoded differently is an enumeration that fails."""
    share = mean_ci(r.share, unit="cell")
    judged = (exact(False, f"{model} decodes all {r.n_queries} evaluated noisy queries to its nearest-neighbour "
                    "decoder's leaf: its dynamics never act", basis="enumeration") if r.disagreements == 0
              else superiority(share, reference=p.min_dynamics_share,
                               what=f"share of {model}'s noisy queries decoded unlike its nearest-neighbour decoder",
                               plan=plans.cells))
    return precondition(
        f"{model}_dynamics_act", f"the dynamics of {MODEL_NAMES[model]} at its calibrated (finite) beta decode more "
        f"than {p.min_dynamics_share:g} of the noisy queries to another leaf than its nearest-neighbour decoder (95% "
        "CI over every evaluation cell)", f"a mechanism bound: {p.min_dynamics_share:g} of the queries decoded "
        "otherwise by the dynamics (below it their effect is under a cell's resolution)",
        {"share_decoded_unlike_nearest": _iv(share), "queries": r.n_queries, "decoded_unlike": r.disagreements,
         "threshold": p.min_dynamics_share}, judged)


def _embedding_learned(geometry: str, e: EmbeddingRungs, p: ClaimParams, plans: Plans) -> Claim:
    """For every branching b, the normalised gain (MAP - MAP*) / (MAP_tree - MAP*) over the strongest trivial rung's
    MAP* (per seed and cell), averaged over the depths per seed, lies above ``min_map_gain`` (a t interval over seeds;
    a single cell's gain is capped at 1 where the embedding reaches the tree metric's MAP, as at D = 2, and a capped
    cell alone has no interval)."""
    cells = sorted(e.map)
    pooled = {name: mean_ci(np.mean([v[c] for c in cells], axis=0), unit="seed") for name, v in e.rungs.items()}
    ladder = Ladder.of("higher", pooled)
    ref = e.rungs[ladder.strongest.name]
    gains = {c: (e.map[c] - ref[c]) / (e.tree_metric[c] - ref[c]) for c in cells}
    per_b = {b: mean_ci(np.mean([g for (bb, _), g in gains.items() if bb == b], axis=0), unit="seed")
             for b in sorted({b for b, _ in cells})}
    name = GEOMETRY_NAMES[geometry]
    return precondition(
        f"{geometry}_embedding_learned", f"the {name} embedding closes at least {p.min_map_gain:g} of the gap from "
        "the strongest trivial embedding's reconstruction MAP to the tree path metric's (an isometric embedding), "
        "averaged over the depths, for every b (95% CI over seeds)", ladder.strongest.name,
        {"map": mean_ci(np.mean([e.map[c] for c in cells], axis=0), unit="seed").rounded(),
         "normalised_gain_by_b": {f"b{b}": _iv(g) for b, g in per_b.items()},
         "normalised_gain_by_cell": {f"b{b}_D{d}": _iv(mean_ci(g, unit="seed")) for (b, d), g in gains.items()},
         "ladder": {r.name: r.value.rounded() for r in ladder.rungs}},
        every_b({b: superiority(g, reference=p.min_map_gain, what="normalised MAP gain over depths",
                                plan=plans.seeds) for b, g in per_b.items()}),
        ladder=ladder)


def preconditions(r: Regime, p: ClaimParams, plans: Plans) -> list[Claim]:
    """The regime: storage of each compared memory at every depth, its retrieval against its ladder, its dynamics
    acting, both embeddings learned, and the hyperbolic embedding's MAP advantage at the deepest trees."""
    gap = {b: paired_diff_ci(r.map_deepest["poincare"][b], r.map_deepest["euclidean"][b], unit="seed")
           for b in sorted(r.map_deepest["poincare"])}
    return [
        *(_stores(m, r.clean[m], p) for m in COMPARED),
        *(_retrieves(m, r.decoders[m], p, plans) for m in COMPARED),
        *(_dynamics_act(m, r.decoders[m], p, plans) for m in COMPARED),
        *(_embedding_learned(g, r.embeddings[g], p, plans) for g in GEOMETRY_NAMES),
        precondition("poincare_beats_euclidean_map", "the Poincare embedding reconstructs the deepest trees better "
                     "than the Euclidean one (same loss, dimension and budget): 95% CI of the paired MAP difference "
                     "over seeds above 0, for every b",
                     "the Euclidean embedding's reconstruction MAP (Nickel & Kiela's metric)",
                     {f"b{b}": {"map_poincare": round(float(np.mean(r.map_deepest["poincare"][b])), 4),
                                "map_euclidean": round(float(np.mean(r.map_deepest["euclidean"][b])), 4),
                                "poincare_minus_euclidean": _iv(g)} for b, g in gap.items()},
                     every_b({b: superiority(g, what="MAP Poincare - Euclidean", plan=plans.seeds)
                              for b, g in gap.items()})),
    ]


def comparison_claims(baseline: str, v: Comparison, tolerance: dict[str, dict[int, Interval]], plans: Plans,
                      ) -> list[Claim]:
    """The three evidence claims of HAMN against one baseline, each for every branching b (the errors: pooled)."""
    bs, name, tag = sorted(v.tolerance_slope), MODEL_NAMES[baseline], f"acc_HAMN - acc_{baseline}"
    ratio = f"log rho50_HAMN - log rho50_{baseline}"
    return [
        evidence(f"tolerance_falls_slower_vs_{baseline}", f"HAMN's noise tolerance falls more slowly with tree depth "
                 f"than {name}'s: 95% CI of the slope d({ratio})/dD (over seeds) above 0, for every b (rho50: the "
                 "query noise at which a memory retrieves half its queries)", HYPOTHESIS,
                 {f"b{b}": {"slope_log_ratio": _iv(v.tolerance_slope[b]),
                            "slope_log_rho50_hamn": _iv(tolerance["hamn"][b]),
                            f"slope_log_rho50_{baseline}": _iv(tolerance[baseline][b])} for b in bs},
                 every_b({b: superiority(v.tolerance_slope[b], what=f"slope of {ratio}", plan=plans.slopes)
                          for b in bs}),
                 requires=deep_regime(baseline)),
        evidence(f"hamn_beats_{baseline}_deepest", f"at the largest depth HAMN retrieves more accurately than {name} "
                 f"(noise calibrated at D = 2): 95% CI of {tag} above 0, for every b", HYPOTHESIS,
                 {f"b{b}": _iv(v.deepest[b]) for b in bs},
                 every_b({b: superiority(v.deepest[b], what=f"{tag} at the largest depth", plan=plans.deepest)
                          for b in bs}),
                 requires=deep_regime(baseline)),
        evidence(f"errors_closer_in_tree_vs_{baseline}", "on wrong retrievals HAMN's memory is closer in the tree "
                 f"than {name}'s: mean LCA level / D of (retrieved, true) leaf higher for HAMN, 95% CI over cells with "
                 "D >= 3 above 0", "cross-level metrics favour HAMN on deep hierarchies (abstract; no number given)",
                 _iv(v.error_gap), superiority(v.error_gap, what=f"error LCA fraction HAMN - {baseline}",
                                               plan=plans.error_cells),
                 requires=deep_regime(baseline)),
    ]


def dynamics_claim(r: DecoderRung, plans: Plans) -> Claim:
    """HAMN's accuracy against hyperbolic nearest-leaf decoding of the same noisy queries, per cell."""
    gap = paired_diff_ci(r.accuracy, r.accuracy_nn, unit="cell")
    return evidence(
        "hamn_dynamics_beat_nearest_leaf", "HAMN's retrieval dynamics retrieve the right leaf more often than "
        "hyperbolic nearest-leaf decoding of the same noisy queries (95% CI of the per-cell accuracy difference over "
        "every evaluation cell above 0); the noise's ML decoder is reported beside (for a wrapped normal it is the "
        "nearest leaf itself, noise.py)", "HAMN's energy dynamics retrieve hierarchical memories (abstract; no number "
        "given)",
        {"hamn_minus_nearest_leaf": _iv(gap), "accuracy_hamn": mean_ci(r.accuracy, unit="cell").rounded(),
         "accuracy_nearest_leaf": mean_ci(r.accuracy_nn, unit="cell").rounded(),
         "accuracy_ml_decoder": mean_ci(r.accuracy_ml, unit="cell").rounded(),
         "share_decoded_unlike_nearest": round(r.disagreements / r.n_queries, 6)},
        superiority(gap, what="acc_HAMN - acc_nearest_leaf (per cell)", plan=plans.cells),
        requires=["hamn_stores_patterns", "hamn_dynamics_act", "poincare_embedding_learned"])


def calibration_checks(calibration: dict[str, dict[int, Interval]], p: ClaimParams, target: float,
                       plans: Plans) -> list[Claim]:
    """The D = 2 accuracy of the ML decoder of each compared memory's noise on the evaluation seeds is equivalent to
    the target that noise was calibrated to on the calibration seeds (within ``shallow_tol``, for every b): the
    calibration transfers."""
    return [check(f"calibration_transfers_{m}", f"the noise of {MODEL_NAMES[m]} calibrated at D = 2 on the "
                  f"calibration seeds to ML-decoder accuracy {target:g} gives its ML decoder accuracy within "
                  f"{p.shallow_tol:g} of it on the "
                  "held-out evaluation seeds (95% CI over seeds inside the band), for every b",
                  "comparable performance on shallow hierarchies (abstract; here true by construction up to the "
                  "transfer to held-out seeds)", {f"b{b}": _iv(iv) for b, iv in sorted(calibration[m].items())},
                  every_b({b: equivalence(iv, margin=p.shallow_tol, center=target, what="accuracy at D = 2",
                                          plan=plans.transfer) for b, iv in calibration[m].items()}))
            for m in COMPARED]


PILOT_RTOL = 1e-3  # a plan without effect and power: its declared pilot sd is the measured one to 4 digits


def _sizes_alike(plan: SamplePlan, sd: float) -> bool:
    """Whether the declared pilot sd sizes the plan as this run's pilot sd does: Guenther's n at the plan's effect and
    power is the same at both (the pilot's spread moves in round-off across machines, so an exact sd is no test of
    where the plan came from; its n is), or, for a plan without effect and power, the sds agree within PILOT_RTOL."""
    if plan.effect is not None and plan.power is not None and sd > 0 and plan.pilot_sd and plan.pilot_sd > 0:
        return required_n(plan.effect, plan.pilot_sd, plan.power) == required_n(plan.effect, sd, plan.power)
    return plan.pilot_sd is not None and abs(plan.pilot_sd - sd) <= PILOT_RTOL * sd


def plans_check(spreads: dict[str, Spread], plans: Plans, pilot_seeds: list[int]) -> Claim:
    """On the plans' own pilot (this run's calibration seeds are ``plans.pilot_seeds``): every seed-level plan that
    names a pilot (pilot_n > 0) carries the size of this run's pilot (pilot.py) and a spread that sizes it as this
    pilot's spread does (``_sizes_alike``): the plans were sized from this pilot, not from a number typed beside it.
    On another pilot (a replicate's fresh calibration seeds, whose spread no declaration can name): every ``power``
    plan's n reaches Guenther's n at this pilot's spread (budget plans are reported, not judged: their n is what the
    budget affords)."""
    own = sorted(pilot_seeds) == sorted(plans.pilot_seeds)
    rows, bad = {}, []
    for family in FAMILIES:
        plan, s = getattr(plans, family), spreads[family]
        need = (required_n(plan.effect, s.sd, plan.power)
                if plan.effect is not None and plan.power is not None and s.sd > 0 else None)
        rows[family] = {"basis": plan.basis, "planned_n": plan.n, "declared_pilot_sd": plan.pilot_sd,
                        "pilot_sd": round(s.sd, 6), "declared_pilot_n": plan.pilot_n, "pilot_n": s.n,
                        "widest_part": s.part, "required_n": need}
        if plan.pilot_n == 0:
            continue
        if own and (plan.pilot_n != s.n or not _sizes_alike(plan, s.sd)):
            bad.append(f"{family}: declared sd {plan.pilot_sd} (n {plan.pilot_n}), pilot {s.sd:.6g} (n {s.n})")
        if not own and plan.basis == "power" and need is not None and plan.n < need:
            bad.append(f"{family}: planned n {plan.n} below the {need} seeds its power needs at this pilot's sd "
                       f"{s.sd:.4g}")
    return check("plans_sized_by_pilot", "each seed-level plan that names a pilot declares the number of seeds of "
                 "the pilot it was sized on (the calibration seeds plans.pilot_seeds) and a spread that sizes the same "
                 "plan as that pilot's measured here (Guenther's n at the plan's effect and power; the spread itself "
                 f"moves in round-off across machines), or, without effect and power, its spread within {PILOT_RTOL:g} "
                 "relative; a run on other calibration seeds (a replicate) checks that every power plan's n reaches "
                 "Guenther's n at its own pilot's spread",
                 "a design property (verdict model v2: plans from a pilot the judged run never reuses)",
                 rows, exact(not bad, "; ".join(bad) or "every plan matches its pilot", basis="enumeration"))


def claims(versus: dict[str, Comparison], max_norm: float, n_iterates: int, regime: Regime, p: ClaimParams,
           target: float, plans: Plans, spreads: dict[str, Spread], pilot_seeds: list[int]) -> list[Claim]:
    """``versus``: baseline -> HAMN's comparison with it; ``max_norm``: the largest sqrt(c)||xi|| over
    ``n_iterates`` HAMN iterates (at most); ``regime``: what the preconditions measure; ``target``: the accuracy
    the noise was calibrated to at D = 2."""
    return [
        *preconditions(regime, p, plans),
        *(c for baseline in BASELINES for c in comparison_claims(baseline, versus[baseline], regime.tolerance, plans)),
        dynamics_claim(regime.decoders["hamn"], plans),
        *calibration_checks(regime.calibration, p, target, plans),
        plans_check(spreads, plans, pilot_seeds),
        check("retrieval_on_manifold", "every HAMN iterate stays on the ball: sqrt(c)||xi|| < 1 (computed without "
              "projection; true by construction of the exp-map updates)", "stable on-manifold retrieval (abstract)",
              {"max_sqrt_c_norm": max_norm, "margin_1_minus_max": 1.0 - max_norm, "iterates_checked": n_iterates},
              exact(max_norm < 1.0, f"largest sqrt(c)||xi|| = {max_norm!r} over at most {n_iterates} iterates",
                    basis="enumeration")),
    ]
