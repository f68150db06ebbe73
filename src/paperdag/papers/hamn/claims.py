"""The paper's claims restated for our scale: a pure function from measured numbers to ``Claim``s.

Intervals are 95% t intervals over evaluation seeds (trend, shallow and deepest-depth advantage) or over cells
(error distances); a claim holds only when its interval says so, never on a point estimate alone.
"""

from __future__ import annotations

from paperdag.claims import Claim

from .analysis import Interval
from .params import ClaimParams

HYPOTHESIS = ("HAMNs outperform Euclidean MHNs on data with deep hierarchies but exhibit comparable performance on "
              "data with weak or shallow hierarchies (abstract; depth-controlled experiments, no number given)")


def claims(shallow: dict[int, Interval], deepest: dict[int, Interval], slope: dict[int, Interval],
           error_gap: Interval, max_norm: float, n_iterates: int, map_gain: dict[str, float], chance_margin: float,
           p: ClaimParams) -> list[Claim]:
    """``shallow``/``deepest``: Delta = acc_HAMN - acc_MHN at D = 2 / the largest D, per branching b; ``slope``:
    d Delta / d D per b; ``error_gap``: error-LCA fraction HAMN - MHN per cell; ``max_norm``: the largest
    sqrt(c)||xi|| over ``n_iterates`` HAMN iterates; ``map_gain``: min over cells of the normalised MAP gain
    (MAP - MAP_untrained) / (MAP_tree_metric - MAP_untrained) per geometry; ``chance_margin``: min over cells
    and models of accuracy - 1 / #leaves."""
    bs = sorted(slope)
    return [
        Claim("advantage_grows_with_depth", "HAMN's leaf-retrieval accuracy advantage over the Euclidean MHN grows "
              "with tree depth: 95% CI of the slope d(acc_HAMN - acc_MHN)/dD (over seeds) above 0, for every b",
              HYPOTHESIS, {f"b{b}": slope[b].as_dict() for b in bs}, all(slope[b].lo > 0 for b in bs)),
        Claim("comparable_at_shallow_depth", f"|acc_HAMN - acc_MHN| <= {p.shallow_tol:g} at D = 2 on held-out seeds "
              "(95% CI inside the band), for every b; the noise was calibrated at D = 2 on a separate seed",
              HYPOTHESIS, {f"b{b}": shallow[b].as_dict() for b in bs},
              all(-p.shallow_tol <= shallow[b].lo and shallow[b].hi <= p.shallow_tol for b in bs)),
        Claim("hamn_beats_mhn_deepest", "at the largest depth HAMN retrieves more accurately than the MHN: 95% CI "
              "of acc_HAMN - acc_MHN above 0, for every b", HYPOTHESIS,
              {f"b{b}": deepest[b].as_dict() for b in bs}, all(deepest[b].lo > 0 for b in bs)),
        Claim("errors_closer_in_tree", "on wrong retrievals HAMN's memory is closer in the tree: mean LCA level / D "
              "of (retrieved, true) leaf higher for HAMN than for MHN, 95% CI over cells with D >= 3 above 0",
              "cross-level metrics favour HAMN on deep hierarchies (abstract; no number given)",
              error_gap.as_dict(), error_gap.lo > 0),
        Claim("retrieval_on_manifold", "every HAMN iterate stays on the ball: sqrt(c)||xi|| < 1 (computed without "
              "projection)", "stable on-manifold retrieval (abstract)",
              {"max_sqrt_c_norm": max_norm, "margin_1_minus_max": 1.0 - max_norm, "iterates_checked": n_iterates},
              max_norm < 1.0),
        Claim("embeddings_learned", "sanity: every embedding closes at least "
              f"{p.min_map_gain:g} of the gap from its untrained reconstruction MAP to the MAP of the tree's own path "
              "metric, in both geometries",
              "Poincare embeddings reconstruct trees (Nickel & Kiela 2017)",
              {g: round(v, 3) for g, v in map_gain.items()}, all(v >= p.min_map_gain for v in map_gain.values())),
        Claim("retrieval_above_chance", "sanity: both memories retrieve the right leaf above chance (1 / #leaves) in "
              "every cell", "trivial baseline: a uniformly random leaf", {"min_margin": round(chance_margin, 4)},
              chance_margin > 0),
    ]
