"""The paper's claims restated for our scale: a pure function from measured numbers to claims of three kinds.

HAMN is compared with each fair Euclidean baseline (BASELINES: the modern Hopfield network on L2-normalised patterns
and the distance-softmax memory, modern_hopfield.py). Ramsauer's MHN on the raw patterns is run and reported
(metrics ``acc_mhn_*``, ``clean_acc_mhn_*``) but is no baseline of a claim: its dot-product readout on leaves of
unequal norm cannot return its own stored patterns on deep trees (by construction, see modern_hopfield.py).

- preconditions (the regime): each compared memory retrieves its own noise-free stored leaves (the strong trivial
  baseline of an associative memory: a memory that cannot return a stored pattern from the pattern itself says
  nothing about hierarchy) in the cells a claim uses, at D = 2 and at every depth; the Poincare embedding
  reconstructs the deepest trees better than the Euclidean one (the hyperbolic geometry carries the hierarchy the
  depth claims are about); both embeddings are learned; every compared memory retrieves noisy queries above chance;
- evidence: the depth trend (slope of the advantage over seeds), shallow parity (equivalence), the deepest-depth
  advantage and the closeness of errors in the tree, each judged by a shared interval rule, for every branching b;
- check: HAMN's iterates stay on the ball (true by construction of the exp-map updates).

Intervals are 95% t intervals over evaluation seeds (trend, shallow and deepest advantage, MAP gap) or over cells
(error distances).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from paperdag.common.stats import Interval, paired_diff_ci
from paperdag.common.verdicts import Claim, Judgement, check, equivalence, evidence, precondition, superiority

from .design import CALIBRATION_DEPTH
from .params import ClaimParams

HYPOTHESIS = ("HAMNs outperform Euclidean MHNs on data with deep hierarchies but exhibit comparable performance on "
              "data with weak or shallow hierarchies (abstract; depth-controlled experiments, no number given)")
MODEL_NAMES = {"mhn": "the Euclidean MHN (Ramsauer et al.)",
               "mhn_normed": "the Euclidean MHN on L2-normalised patterns",
               "mhn_distance": "the Euclidean distance-softmax memory", "hamn": "HAMN"}
BASELINES = ("mhn_normed", "mhn_distance")
COMPARED = (*BASELINES, "hamn")
COMMON = ("embeddings_learned", "retrieval_above_chance")


def shallow_regime(baseline: str) -> list[str]:
    """The preconditions of a comparison at D = 2: both memories store their leaves there; common ones."""
    return [f"{baseline}_stores_patterns_shallow", "hamn_stores_patterns_shallow", *COMMON]


def deep_regime(baseline: str) -> list[str]:
    """The preconditions of a comparison over depth: both memories store their leaves at every depth, the Poincare
    embedding carries the hierarchy better than the Euclidean one; common ones."""
    return [f"{baseline}_stores_patterns", "hamn_stores_patterns", "poincare_beats_euclidean_map", *COMMON]


@dataclass(frozen=True)
class Comparison:
    """HAMN against one baseline: Delta = acc_HAMN - acc_baseline at D = 2 (``shallow``) and at the largest D
    (``deepest``) and its slope d Delta / d D (``slope``), per branching b, each over seeds; ``error_gap``: error-LCA
    fraction HAMN - baseline, over cells with D >= 3."""

    shallow: dict[int, Interval]
    deepest: dict[int, Interval]
    slope: dict[int, Interval]
    error_gap: Interval


@dataclass(frozen=True)
class Regime:
    """What the preconditions measure.

    ``clean``: model -> (b, D) -> least accuracy over seeds of noise-free queries of every stored leaf;
    ``map_deepest``: geometry -> b -> per-seed reconstruction MAP at the deepest depth (seeds aligned);
    ``map_gain``: geometry -> least normalised MAP gain (MAP - MAP_untrained) / (MAP_tree_metric - MAP_untrained);
    ``chance_margin``: least noisy-query accuracy - 1 / #leaves over cells and models."""

    clean: dict[str, dict[tuple[int, int], float]]
    map_deepest: dict[str, dict[int, np.ndarray]]
    map_gain: dict[str, float]
    chance_margin: float


def _iv(x: Interval) -> dict[str, float | int | list[float]]:
    return {"mean": round(x.mean, 4), "ci95": [round(x.lo, 4), round(x.hi, 4)], "n": x.n}


def every_b(judged: dict[int, Judgement]) -> Judgement:
    """A claim "for every branching b": fails if it fails for one b, holds if it holds for all, else inconclusive;
    the reason lists every b's."""
    verdicts = {j.verdict for j in judged.values()}
    verdict = "fails" if "fails" in verdicts else "holds" if verdicts == {"holds"} else "inconclusive"
    reason = "; ".join(f"b={b}: {j.reason}" for b, j in sorted(judged.items()))
    return Judgement(verdict, reason, next(iter(judged.values())).rule)


def _stores(model: str, clean: dict[tuple[int, int], float], depths: str, suffix: str, p: ClaimParams) -> Claim:
    """Noise-free retrieval of the stored leaves at least ``min_clean_accuracy`` in every (b, D) cell of ``clean``
    (the cells ``depths`` describes); the claim id is ``<model>_stores_patterns<suffix>``."""
    worst = min(clean, key=clean.__getitem__)
    short = [f"b{b} D{d}: {v:.3f}" for (b, d), v in sorted(clean.items()) if v < p.min_clean_accuracy]
    return precondition(
        f"{model}_stores_patterns{suffix}", f"{MODEL_NAMES[model]} retrieves its own noise-free stored leaves "
        f"(accuracy >= {p.min_clean_accuracy:g}, least over seeds) in every (b, D) cell {depths}",
        "noise-free retrieval of the memory's own stored patterns (every leaf queried once, rho = 0)",
        {"least_clean_accuracy": round(clean[worst], 4), "worst_cell": "b{} D{}".format(*worst),
         "threshold": p.min_clean_accuracy,
         "by_cell": {f"b{b}_D{d}": round(v, 4) for (b, d), v in sorted(clean.items())}},
        clean[worst] >= p.min_clean_accuracy,
        f"least noise-free accuracy {clean[worst]:.4f} at b{worst[0]} D{worst[1]}"
        + (f"; below {p.min_clean_accuracy:g}: {', '.join(short)}" if short else ""))


def preconditions(r: Regime, p: ClaimParams) -> list[Claim]:
    """The regime: storage of each compared memory (at D = 2 and at every depth), the hyperbolic embedding's MAP
    advantage at
    the deepest trees, both embeddings learned, both memories above chance."""
    gap = {b: paired_diff_ci(r.map_deepest["poincare"][b], r.map_deepest["euclidean"][b])
           for b in sorted(r.map_deepest["poincare"])}
    shallow = {m: {k: v for k, v in c.items() if k[1] == CALIBRATION_DEPTH} for m, c in r.clean.items()}
    return [
        *(_stores(m, shallow[m], f"at D = {CALIBRATION_DEPTH}", "_shallow", p) for m in COMPARED),
        *(_stores(m, r.clean[m], "at every depth", "", p) for m in COMPARED),
        precondition("poincare_beats_euclidean_map", "the Poincare embedding reconstructs the deepest trees better "
                     "than the Euclidean one (same loss, dimension and budget): 95% CI of the paired MAP difference "
                     "over seeds above 0, for every b",
                     "the Euclidean embedding's reconstruction MAP (Nickel & Kiela's metric)",
                     {f"b{b}": {"map_poincare": round(float(np.mean(r.map_deepest["poincare"][b])), 4),
                                "map_euclidean": round(float(np.mean(r.map_deepest["euclidean"][b])), 4),
                                "poincare_minus_euclidean": _iv(g)} for b, g in gap.items()},
                     every_b({b: superiority(g, what="MAP Poincare - Euclidean") for b, g in gap.items()})),
        precondition("embeddings_learned", f"every embedding closes at least {p.min_map_gain:g} of the gap from its "
                     "untrained reconstruction MAP to the MAP of the tree's own path metric, in both geometries",
                     "the untrained embedding's MAP (chance) and the tree path metric's MAP (an isometric embedding)",
                     {g: round(v, 3) for g, v in r.map_gain.items()},
                     all(v >= p.min_map_gain for v in r.map_gain.values()),
                     "least normalised MAP gain " + ", ".join(f"{g} {v:.3f}" for g, v in r.map_gain.items())
                     + f" (threshold {p.min_map_gain:g})"),
        precondition("retrieval_above_chance", "every compared memory retrieves the right leaf from noisy queries "
                     "above chance (1 / #leaves) in every cell", "a uniformly random leaf",
                     {"least_accuracy_minus_chance": round(r.chance_margin, 4)}, r.chance_margin > 0,
                     f"least accuracy - chance over cells and models {r.chance_margin:.4f}"),
    ]


def comparison_claims(baseline: str, v: Comparison, p: ClaimParams) -> list[Claim]:
    """The four evidence claims of HAMN against one baseline, each for every branching b."""
    bs, name, tag = sorted(v.slope), MODEL_NAMES[baseline], f"acc_HAMN - acc_{baseline}"
    return [
        evidence(f"advantage_grows_with_depth_vs_{baseline}", f"HAMN's leaf-retrieval accuracy advantage over {name} "
                 f"grows with tree depth: 95% CI of the slope d({tag})/dD (over seeds) above 0, for every b",
                 HYPOTHESIS, {f"b{b}": _iv(v.slope[b]) for b in bs},
                 every_b({b: superiority(v.slope[b], what=f"slope of {tag}") for b in bs}),
                 requires=deep_regime(baseline)),
        evidence(f"comparable_at_shallow_depth_vs_{baseline}", f"|{tag}| <= {p.shallow_tol:g} at D = 2 (95% CI over "
                 "seeds inside the band), for every b; the noise was calibrated at D = 2 on separate held-out seeds",
                 HYPOTHESIS, {f"b{b}": _iv(v.shallow[b]) for b in bs},
                 every_b({b: equivalence(v.shallow[b], margin=p.shallow_tol, what=f"{tag} at D = 2") for b in bs}),
                 requires=shallow_regime(baseline)),
        evidence(f"hamn_beats_{baseline}_deepest", f"at the largest depth HAMN retrieves more accurately than {name}: "
                 f"95% CI of {tag} above 0, for every b", HYPOTHESIS, {f"b{b}": _iv(v.deepest[b]) for b in bs},
                 every_b({b: superiority(v.deepest[b], what=f"{tag} at the largest depth") for b in bs}),
                 requires=deep_regime(baseline)),
        evidence(f"errors_closer_in_tree_vs_{baseline}", "on wrong retrievals HAMN's memory is closer in the tree "
                 f"than {name}'s: mean LCA level / D of (retrieved, true) leaf higher for HAMN, 95% CI over cells with "
                 "D >= 3 above 0", "cross-level metrics favour HAMN on deep hierarchies (abstract; no number given)",
                 _iv(v.error_gap), superiority(v.error_gap, what=f"error LCA fraction HAMN - {baseline}"),
                 requires=deep_regime(baseline)),
    ]


def claims(versus: dict[str, Comparison], max_norm: float, n_iterates: int, regime: Regime,
           p: ClaimParams) -> list[Claim]:
    """``versus``: baseline -> HAMN's comparison with it; ``max_norm``: the largest sqrt(c)||xi|| over
    ``n_iterates`` HAMN iterates; ``regime``: what the preconditions measure."""
    return [
        *preconditions(regime, p),
        *(c for baseline in BASELINES for c in comparison_claims(baseline, versus[baseline], p)),
        check("retrieval_on_manifold", "every HAMN iterate stays on the ball: sqrt(c)||xi|| < 1 (computed without "
              "projection; true by construction of the exp-map updates)", "stable on-manifold retrieval (abstract)",
              {"max_sqrt_c_norm": max_norm, "margin_1_minus_max": 1.0 - max_norm, "iterates_checked": n_iterates},
              max_norm < 1.0, f"largest sqrt(c)||xi|| = {max_norm!r} is not below 1"),
    ]
