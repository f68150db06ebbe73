"""Verdicts a researcher can trust: the claim model and the decision rules every paper's ``claims.py`` shares.

A claim has a **kind**:

- ``evidence``: the paper's empirical finding restated for our scale (what counts as a reproduction);
- ``check``: true by construction or an invariant of the implementation (reported, never counted as evidence);
- ``precondition``: the regime in which the evidence can appear at all: every compared model beats the strongest
  trivial baseline of its task, there is headroom, the mechanism can act in the data. Its ``measured`` names the
  baseline (or bound) it was measured against.

and a three-valued **verdict**: ``holds``, ``fails`` or ``inconclusive``, with a ``reason`` (the rule's comparison
with its numbers; required unless the claim holds). An
evidence claim names the preconditions it ``requires``; if one of them does not hold, the evidence is
``inconclusive`` whatever its own numbers say (``resolve``).

The rules decide from a confidence interval [lo, hi] (``paperdag.common.stats.Interval``), never from a mean alone.
With the quantity oriented so that the claimed direction is positive (q = x for "above", q = -x for "below"):

- ``superiority``  (the effect exceeds ``margin``):       holds if lo_q > margin; fails if hi_q < f, with f the
  smallest effect of interest ``sesoi`` where one is declared, else 0; inconclusive otherwise.
- ``noninferiority`` (no worse than ``margin``):          holds if lo_q > -margin; fails if hi_q < -margin.
- ``equivalence`` ("on par" within +-``margin``):         holds if -margin < lo and hi < margin; fails if
  lo > margin or hi < -margin; inconclusive otherwise.
- ``trend`` (a slope against the predicted value s*):    ``equivalence`` of slope - s* within +-``tol``.
- ``exact``: a deterministic measurement (an enumeration, an exact solver, a count over a fixed set): no interval.
- ``all_of``: a claim over several parts (every model, cell or reward) from its parts' judgements.

Power: an interval that straddles a decision boundary is ``inconclusive (underpowered)`` and the reason gives the
number of values m that the observed spread would need, the smallest m with t_{(1+c)/2, m-1} s / sqrt(m) < |mean
- boundary|, where s = h sqrt(n) / t_{(1+c)/2, n-1} is the spread implied by the half-width h of the n-value
interval. For ``equivalence`` an interval wider than 2 margin can never hold and is underpowered by definition.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal, Protocol

from paperdag.common.stats import Interval

Kind = Literal["evidence", "check", "precondition"]
Verdict = Literal["holds", "fails", "inconclusive"]
Direction = Literal["above", "below"]
KINDS: tuple[Kind, ...] = ("evidence", "check", "precondition")
VERDICTS: tuple[Verdict, ...] = ("holds", "fails", "inconclusive")
INTERVAL_RULES = ("superiority", "noninferiority", "equivalence", "trend")
RULES = (*INTERVAL_RULES, "exact")
MAX_SEEDS = 10_000  # beyond this the reason says "more than"


class IntervalLike(Protocol):
    """Anything with a two-sided interval [lo, hi] and an estimate as ``mean`` (``Interval``) or ``estimate`` (a
    regression coefficient); ``n`` and ``confidence`` are read when present."""

    lo: float
    hi: float


def as_interval(x: IntervalLike) -> Interval:
    """``x`` as an ``Interval`` (estimate from ``mean`` or ``estimate``; n 0 and level 0.95 when x has none)."""
    if isinstance(x, Interval):
        return x
    point = getattr(x, "mean", None)
    point = getattr(x, "estimate") if point is None else point
    return Interval(float(point), float(x.lo), float(x.hi), int(getattr(x, "n", 0) or 0),
                    float(getattr(x, "confidence", 0.95)))


@dataclass(frozen=True)
class Judgement:
    """What a decision rule concluded: the verdict, why (with the numbers), and the rule's name."""

    verdict: Verdict
    reason: str
    rule: str


@dataclass(frozen=True)
class Claim:
    """One claim of a paper at our scale (see the module docstring); build it with ``evidence``, ``check`` or
    ``precondition``, which make sure the verdict comes from a rule."""

    id: str
    kind: Kind
    statement: str
    paper_value: Any
    measured: Any
    verdict: Verdict
    reason: str = ""
    requires: tuple[str, ...] = ()
    rule: str = "exact"

    @property
    def holds(self) -> bool:
        return self.verdict == "holds"

    def row(self) -> dict[str, Any]:
        """The claim as a metrics-file row; ``holds`` (verdict == holds) is kept for readers of the old format."""
        return {"id": self.id, "kind": self.kind, "statement": self.statement, "paper_value": self.paper_value,
                "measured": self.measured, "verdict": self.verdict, "holds": self.holds, "reason": self.reason,
                "requires": list(self.requires), "rule": self.rule}


# -- the rules -------------------------------------------------------------------------------------------------------
def _g(x: float) -> str:
    return f"{x + 0.0:.4g}"  # + 0.0: no "-0"


def _ci(x: Interval) -> str:
    return f"{_g(x.mean)} [{_g(x.lo)}, {_g(x.hi)}]" + (f" ({x.confidence:.0%} CI, n={x.n})" if x.n else
                                                        f" ({x.confidence:.0%} CI)")


def seeds_needed(x: IntervalLike, distance: float) -> int | None:
    """The smallest m with t_{(1+c)/2, m-1} s / sqrt(m) < ``distance``, s the spread implied by ``x``'s half-width
    and its n (None when x has no n >= 2 or no spread); ``MAX_SEEDS + 1`` when even ``MAX_SEEDS`` is not enough."""
    x = as_interval(x)
    n, level = x.n, x.confidence
    half = (x.hi - x.lo) / 2
    if n < 2 or half <= 0 or distance <= 0:
        return None
    from scipy import (
        stats,  # imported where needed: the claim model is imported by every evaluate stage
    )

    q = (1 + level) / 2
    s = half * math.sqrt(n) / stats.t.ppf(q, n - 1)
    lo, hi = 2, MAX_SEEDS
    if stats.t.ppf(q, hi - 1) * s / math.sqrt(hi) >= distance:
        return MAX_SEEDS + 1
    while lo < hi:  # the half-width decreases in m
        mid = (lo + hi) // 2
        lo, hi = (mid + 1, hi) if stats.t.ppf(q, mid - 1) * s / math.sqrt(mid) >= distance else (lo, mid)
    return lo


def _power(x: Interval, distance: float) -> str:
    m = seeds_needed(x, distance)
    if m is None:
        return "underpowered"
    return f"underpowered: ~{m if m <= MAX_SEEDS else f'>{MAX_SEEDS}'} values at the observed spread would resolve it"


def _oriented(x: Interval, direction: Direction) -> Interval:
    if direction not in ("above", "below"):
        raise ValueError(f"direction must be 'above' or 'below', got {direction!r}")
    if direction == "above":
        return x
    return Interval(-x.mean, -x.hi, -x.lo, x.n, x.confidence)


def _finite(x: Interval) -> bool:
    return all(math.isfinite(float(v)) for v in (x.mean, x.lo, x.hi))


def _one_sided(x: IntervalLike, direction: Direction, reference: float, hold_above: float, fail_below: float,
               what: str, rule: str) -> Judgement:
    """On q = x - reference oriented to ``direction``: holds if lo_q > hold_above, fails if hi_q < fail_below
    (fail_below <= hold_above); the reason states x and the bounds in x's own units."""
    x = as_interval(x)
    if not _finite(x):
        return Judgement("inconclusive", f"{what} has no finite interval ({_ci(x)})", rule)
    sign = 1 if direction == "above" else -1
    q = _oriented(Interval(x.mean - reference, x.lo - reference, x.hi - reference, x.n, x.confidence), direction)
    hold, fail = _g(reference + sign * hold_above), _g(reference + sign * fail_below)
    if q.lo > hold_above:
        return Judgement("holds", f"{what} {_ci(x)} lies {direction} {hold}", rule)
    if q.hi < fail_below:
        return Judgement("fails", f"{what} {_ci(x)} lies entirely on the other side of {fail}", rule)
    if q.mean > hold_above:
        return Judgement("inconclusive", f"{what} {_ci(x)} straddles {hold} ({_power(q, q.mean - hold_above)})", rule)
    if q.mean < fail_below:
        return Judgement("inconclusive", f"{what} {_ci(x)} straddles {fail} ({_power(q, fail_below - q.mean)})", rule)
    if fail_below == hold_above:
        return Judgement("inconclusive", f"{what} {_ci(x)}: its mean sits on {hold}", rule)
    return Judgement("inconclusive", f"{what} {_ci(x)}: its mean lies between {fail} and {hold}, a gap no number "
                     "of seeds closes", rule)


def superiority(x: IntervalLike, *, direction: Direction = "above", margin: float = 0.0, sesoi: float | None = None,
                reference: float = 0.0, what: str = "the difference") -> Judgement:
    """x - ``reference`` exceeds ``margin`` in ``direction`` (margin and ``sesoi`` are magnitudes >= 0): holds if
    the oriented lo > margin; fails if the oriented hi < sesoi (the smallest effect of interest), else < 0."""
    if margin < 0 or (sesoi is not None and not 0 <= sesoi <= margin):
        raise ValueError(f"superiority needs margin >= 0 and 0 <= sesoi <= margin (got {margin}, {sesoi})")
    return _one_sided(x, direction, reference, margin, 0.0 if sesoi is None else sesoi, what, "superiority")


def noninferiority(x: IntervalLike, *, margin: float, direction: Direction = "below", reference: float = 0.0,
                   what: str = "the difference") -> Judgement:
    """x - ``reference`` is no worse than ``margin`` in ``direction``: for "below", holds if hi < reference + margin
    and fails if lo > reference + margin; for "above", holds if lo > reference - margin, fails if hi < it."""
    if margin < 0:
        raise ValueError(f"noninferiority needs margin >= 0, got {margin}")
    return _one_sided(x, direction, reference, -margin, -margin, what, "noninferiority")


def equivalence(x: IntervalLike, *, margin: float, center: float = 0.0, what: str = "the difference",
                rule: str = "equivalence") -> Judgement:
    """x is within ``center`` +- ``margin``: holds if the interval lies inside, fails if it lies entirely outside,
    inconclusive otherwise (underpowered when the interval is wider than 2 margin or straddles a bound)."""
    if margin <= 0:
        raise ValueError(f"equivalence needs margin > 0, got {margin}")
    x = as_interval(x)
    if not _finite(x):
        return Judgement("inconclusive", f"{what} has no finite interval ({_ci(x)})", rule)
    lo, hi, mean = x.lo - center, x.hi - center, x.mean - center
    bounds = f"[{_g(center - margin)}, {_g(center + margin)}]"
    if -margin < lo and hi < margin:
        return Judgement("holds", f"{what} {_ci(x)} lies inside {bounds}", rule)
    if lo > margin or hi < -margin:
        return Judgement("fails", f"{what} {_ci(x)} lies entirely outside {bounds}", rule)
    q = Interval(mean, lo, hi, x.n, x.confidence)
    gap = margin - abs(mean)
    if hi - lo > 2 * margin:
        power = _power(q, gap) if gap > 0 else "underpowered"
        return Judgement("inconclusive", f"{what} {_ci(x)} is wider than {bounds} ({power})", rule)
    power = _power(q, abs(gap)) if gap else "underpowered"
    return Judgement("inconclusive", f"{what} {_ci(x)} straddles a bound of {bounds} ({power})", rule)


def trend(slope: IntervalLike, *, predicted: float, tol: float, what: str = "the slope") -> Judgement:
    """A fitted slope agrees with the ``predicted`` one: ``equivalence`` of its interval with predicted +- tol."""
    return equivalence(slope, margin=tol, center=predicted, what=what, rule="trend")


def exact(ok: bool, why: str) -> Judgement:
    """A deterministic measurement (no seed variance: an enumeration, an exact solver, a fixed set): ``ok`` decides;
    ``why`` states the comparison with its numbers."""
    return Judgement("holds" if ok else "fails", why, "exact")


def all_of(parts: Mapping[str, Judgement], quoted: int = 3) -> Judgement:
    """A claim over several parts (every model, every cell, every reward): fails if a part fails, else inconclusive
    if a part is, else holds. The reason counts the parts by verdict and quotes the first ``quoted`` parts of the
    deciding verdict (pass them in the order worth reading, e.g. the tightest first)."""
    if not parts:
        raise ValueError("all_of needs at least one part")
    verdict = next(v for v in ("fails", "inconclusive", "holds") if any(j.verdict == v for j in parts.values()))
    tally = ", ".join(f"{n} {v}" for v in VERDICTS if (n := sum(j.verdict == v for j in parts.values())))
    deciding = [(name, j) for name, j in parts.items() if j.verdict == verdict]
    shown = "; ".join(f"{name}: {j.reason}" for name, j in deciding[:quoted])
    more = f"; +{len(deciding) - quoted} more {verdict}" if len(deciding) > quoted else ""
    return Judgement(verdict, f"{len(parts)} parts ({tally}): {shown}{more}", deciding[0][1].rule)


def proportion_ci(successes: int, trials: int, confidence: float = 0.95) -> Interval:
    """The fraction successes / trials with its exact (Clopper-Pearson) interval; n = trials."""
    if trials <= 0 or not 0 <= successes <= trials:
        raise ValueError(f"proportion_ci needs 0 <= successes <= trials, trials > 0 (got {successes}/{trials})")
    from scipy import stats

    ci = stats.binomtest(int(successes), int(trials)).proportion_ci(confidence, method="exact")
    return Interval(successes / trials, float(ci.low), float(ci.high), int(trials), confidence)


# -- the claims ------------------------------------------------------------------------------------------------------
def evidence(id: str, statement: str, paper_value: Any, measured: Any, judged: Judgement,
             requires: Sequence[str]) -> Claim:
    """The paper's finding at our scale, decided by a rule; ``requires``: the preconditions that make it judgeable."""
    if not isinstance(judged, Judgement) or judged.rule not in RULES:
        raise TypeError(f"evidence {id!r}: the verdict must come from a decision rule ({', '.join(RULES)})")
    if not requires:
        raise ValueError(f"evidence {id!r} requires no precondition: name those that show its effect can appear")
    return Claim(id, "evidence", statement, paper_value, measured, judged.verdict, judged.reason, tuple(requires),
                 judged.rule)


def check(id: str, statement: str, paper_value: Any, measured: Any, ok: bool, reason: str = "") -> Claim:
    """An invariant or a property true by construction: reported, not counted as a reproduction."""
    return Claim(id, "check", statement, paper_value, measured, "holds" if ok else "fails",
                 "" if ok else (reason or "the invariant is violated (see measured)"), (), "exact")


def precondition(id: str, statement: str, baseline: str, measured: dict[str, Any], judged: Judgement | bool,
                 reason: str = "") -> Claim:
    """The regime, measured: ``baseline`` names the trivial baseline, oracle or bound it is measured against (it
    becomes ``measured["baseline"]``); ``judged`` a rule's ``Judgement`` (over seeds) or a deterministic bool."""
    if not baseline:
        raise ValueError(f"precondition {id!r} names no baseline")
    if isinstance(judged, bool):
        judged, reason = exact(judged, reason or "see measured"), ""
    why = "; ".join(r for r in (reason, judged.reason) if r)
    return Claim(id, "precondition", statement, "(regime check, not a paper claim)",
                 {"baseline": baseline, **measured}, judged.verdict, why, (), judged.rule)


def _short(value: Any, limit: int = 160) -> str:
    text = str(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _why(p: Claim) -> str:
    """A failed precondition's reason and then its measured values (the baseline left out: it is in the name)."""
    numbers = {k: v for k, v in p.measured.items() if k != "baseline"} if isinstance(p.measured, dict) else p.measured
    return f"{p.reason} (measured: {numbers})" if p.reason else str(numbers)


def resolve(claims: Iterable[Claim]) -> list[Claim]:
    """The claims as published: ids unique, ``requires`` naming preconditions, and every evidence claim whose
    required preconditions do not all hold made ``inconclusive``, its reason naming each failed precondition with
    that precondition's own reason (the rule's comparison, with its numbers)."""
    claims = list(claims)
    by_id = {c.id: c for c in claims}
    if len(by_id) != len(claims):
        raise ValueError("claim ids are not unique")
    out = []
    for c in claims:
        if c.kind not in KINDS or c.verdict not in VERDICTS:
            raise ValueError(f"claim {c.id!r}: kind {c.kind!r} / verdict {c.verdict!r}")
        if c.verdict != "holds" and not c.reason.strip():
            raise ValueError(f"claim {c.id!r} is {c.verdict} without a reason")
        unknown = [r for r in c.requires if r not in by_id or by_id[r].kind != "precondition"]
        if unknown:
            raise ValueError(f"claim {c.id!r} requires {unknown}, which are not preconditions of this paper")
        failed = [by_id[r] for r in c.requires if by_id[r].verdict != "holds"]
        if c.kind == "evidence" and failed:
            why = "; ".join(f"precondition {p.id} {p.verdict}: {_short(_why(p), 300)}" for p in failed)
            c = replace(c, verdict="inconclusive", reason=f"{why} (judged alone: {c.verdict})")
        out.append(c)
    return out
