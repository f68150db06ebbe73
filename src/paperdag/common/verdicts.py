"""Verdicts a researcher can trust: the claim model and the decision rules every paper's ``claims.py`` shares.

A claim has a **kind**:

- ``evidence``: the paper's empirical finding restated for our scale (what counts as a reproduction);
- ``check``: true by construction or an invariant of the implementation (reported, never counted as evidence);
- ``precondition``: the regime in which the evidence can appear at all: every compared model beats the strongest
  trivial baseline of its task (judged against the strongest rung of a ``Ladder``, the next rung recorded beside
  it), there is headroom over a bound, the mechanism can act in the data;

and a three-valued **verdict**: ``holds``, ``fails`` or ``inconclusive``, with a ``reason`` (the rule's comparison
with its numbers; required unless the claim holds). An evidence claim names the preconditions it ``requires``; if one
of them does not hold, the evidence is ``inconclusive`` whatever its own numbers say (``resolve``). Every verdict is
a ``Judgement`` of a rule: a bool never is one. An evidence claim or precondition judged on an interval carries the
interval's unit and the sample-size plan its n came from; one without them is refused at construction.

The rules decide from a confidence interval [lo, hi] (``paperdag.common.stats.Interval``: its unit, n and type),
taken at the level of the claim's sample-size plan (``paperdag.common.plans.SamplePlan``: 95%, or the final look's
nominal level of a group-sequential plan), never from a mean alone. With the quantity oriented so that the claimed
direction is positive (q = x - reference for "above", q = reference - x for "below"):

- ``superiority`` (the effect exceeds ``margin`` >= 0):  holds if lo_q > margin; fails if hi_q < margin (with a
  margin > 0: the effect is smaller than claimed); inconclusive otherwise.
- ``noninferiority`` (no worse than ``margin``):        holds if lo_q > -margin; fails if hi_q < -margin.
- ``equivalence`` ("on par" within +-``margin``):       holds if -margin < lo and hi < margin (two one-sided tests,
  each at 2.5% with the 95% interval: stricter than the 90% interval of the usual 5% TOST); fails if the interval
  lies entirely outside; inconclusive otherwise.
- ``trend`` (a slope against the predicted value s*):  ``equivalence`` of slope - s* within +-``tol``.
- ``exact``: a deterministic measurement, stating its basis (an enumeration, an exact solver, a count over a fixed
  set, a closed form, a certificate): no interval.
- ``all_of``: a claim over several parts (every model, cell or reward). It holds when every part holds, each at its
  own level (an intersection-union test: its level is the parts' level, no correction owed); it fails only when a
  part fails under Holm's step-down correction over the parts (the k parts' fails re-judged at 1 - a/k, 1 - a/(k-1),
  ..., so that "fails" keeps its level when no part has an effect); inconclusive otherwise.

An interval from fewer than 2 units, or of zero width (capped or identical values), decides nothing: inconclusive,
with that reason. An interval that straddles its boundary is ``inconclusive (underpowered)``, and the reason says
what would resolve it, computed for the interval's type: the units a t interval needs at the observed spread, the
trials a proportion needs at the observed rate (Clopper-Pearson or Wilson), the range a fitted slope needs.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal, Protocol

from paperdag.common.stats import PROPORTION_METHODS, Interval, korn_graubard, proportion_ci

if TYPE_CHECKING:
    from paperdag.common.plans import SamplePlan

Kind = Literal["evidence", "check", "precondition"]
Verdict = Literal["holds", "fails", "inconclusive"]
Direction = Literal["above", "below"]
KINDS: tuple[Kind, ...] = ("evidence", "check", "precondition")
VERDICTS: tuple[Verdict, ...] = ("holds", "fails", "inconclusive")
INTERVAL_RULES = ("superiority", "noninferiority", "equivalence", "trend")
RULES = (*INTERVAL_RULES, "exact")
EXACT_BASES = ("enumeration", "exact solver", "fixed set", "closed form", "certificate")
CAUSES = ("underpowered", "range", "no interval", "at the boundary", "precondition")  # why a verdict is inconclusive
MAX_UNITS = 10_000  # beyond this the reason says "more than"
ISSUE_NUMBER = re.compile(r"\bissues? #?\d+", re.IGNORECASE)

__all__ = ["Claim", "Judgement", "Ladder", "Rung", "all_of", "check", "equivalence", "evidence", "exact",
           "noninferiority", "precondition", "proportion_ci", "resolve", "seeds_needed", "superiority", "trend",
           "units_needed"]


class IntervalLike(Protocol):
    """Anything with a two-sided interval [lo, hi] and an estimate as ``mean`` (``Interval``) or ``estimate`` (a
    regression coefficient); ``n``, ``confidence``, ``unit`` and ``method`` are read when present."""

    lo: float
    hi: float


def as_interval(x: IntervalLike) -> Interval:
    """``x`` as an ``Interval`` (estimate from ``mean`` or ``estimate``)."""
    if isinstance(x, Interval):
        return x
    point = getattr(x, "mean", None)
    point = getattr(x, "estimate") if point is None else point
    return Interval(float(point), float(x.lo), float(x.hi), int(getattr(x, "n", 0) or 0),
                    float(getattr(x, "confidence", 0.95)), str(getattr(x, "unit", "") or ""),
                    str(getattr(x, "method", "t") or "t"), span=getattr(x, "span", None))


@dataclass(frozen=True)
class Judgement:
    """What a decision rule concluded: the verdict, why (with the numbers), the rule's name, the unit and n of the
    interval it judged, the plan that set n, and ``cause`` (one of ``CAUSES``) when inconclusive. ``redo`` re-applies
    the same rule at another confidence level (``all_of``'s Holm correction); None for exact judgements."""

    verdict: Verdict
    reason: str
    rule: str
    unit: str = ""
    n: int = 0
    plan: SamplePlan | None = None
    cause: str = ""
    redo: Callable[[float], Judgement] | None = field(default=None, repr=False, compare=False)


# -- resolving power -------------------------------------------------------------------------------------------------
def _g(x: float) -> str:
    return f"{x + 0.0:.4g}"  # + 0.0: no "-0"


def _plural(unit: str) -> str:
    return (unit or "value") + ("" if (unit or "value").endswith("s") else "s")


def _ci(x: Interval) -> str:
    counted = f", n={x.n} {_plural(x.unit) if x.n != 1 else x.unit or 'value'}" if x.n else ""
    kind = "" if x.method in ("t", "given") else f" {x.method}"
    return f"{_g(x.mean)} [{_g(x.lo)}, {_g(x.hi)}] ({100 * x.confidence:.3g}%{kind} CI{counted})"


def _predicted(x: Interval, m: int) -> tuple[float, float]:
    """The interval x's estimate would have from m units at the observed spread (proportions: at the observed
    rate; bootstrap and hand-built intervals: their mean half-width scaled like a t interval's)."""
    from scipy.special import betaincinv, ndtri, stdtrit  # the ufuncs behind stats' ppf, ~50x faster per call

    a = 1 - x.confidence
    if x.method == "korn-graubard" and x.effective_n is not None:  # n* grows with the units at the observed design
        return korn_graubard(x.mean, x.effective_n * m / max(x.n, 1), m - 1, x.confidence)
    if x.method in ("clopper-pearson", "wilson"):
        k = x.mean * m
        if x.method == "clopper-pearson":
            lo = 0.0 if k <= 0 else float(betaincinv(k, m - k + 1, a / 2))
            hi = 1.0 if k >= m else float(betaincinv(k + 1, m - k, 1 - a / 2))
            return lo, hi
        z = float(ndtri(1 - a / 2))
        centre = (x.mean + z * z / (2 * m)) / (1 + z * z / m)
        half = z / (1 + z * z / m) * math.sqrt(x.mean * (1 - x.mean) / m + z * z / (4 * m * m))
        return centre - half, centre + half
    q = (1 + x.confidence) / 2
    s = (x.hi - x.lo) / 2 * math.sqrt(x.n) / float(stdtrit(max(x.dof, 1), q))
    half = float(stdtrit(m - 1, q)) * s / math.sqrt(m)
    return x.mean - half, x.mean + half


def units_needed(x: IntervalLike, resolved: Callable[[float, float], bool]) -> int | None:
    """The smallest m >= 2 whose predicted interval (``_predicted``) satisfies ``resolved(lo, hi)``; None when x has
    fewer than 2 units or no spread, ``MAX_UNITS + 1`` when even ``MAX_UNITS`` does not."""
    x = as_interval(x)
    if x.n < 2 or (x.hi - x.lo) <= 0 and x.method not in PROPORTION_METHODS:
        return None
    if not resolved(*_predicted(x, MAX_UNITS)):
        return MAX_UNITS + 1
    lo, hi = 2, MAX_UNITS
    while lo < hi:  # predicted intervals shrink with m: resolved is monotone
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if resolved(*_predicted(x, mid)) else (mid + 1, hi)
    return lo


def seeds_needed(x: IntervalLike, half_width: float) -> int | None:
    """The units whose predicted interval is narrower than +- ``half_width`` (``units_needed``)."""
    return units_needed(x, lambda lo, hi: (hi - lo) / 2 < half_width)


def _resolving(x: Interval, resolved: Callable[[float, float], bool]) -> tuple[str, str]:
    """(cause, words): what would resolve an interval that straddles its boundary, for the interval's type."""
    if x.method == "fit":  # a slope's half-width scales as 1 / (the regressor's range) at the same points
        half, span = (x.hi - x.lo) / 2, f" (now {_g(x.span)})" if x.span else ""
        if not resolved(x.mean - half / 1000, x.mean + half / 1000):
            return "range", "range-limited: not even a 1000x wider regressor range would resolve it"
        lo, hi = 1.0, 1000.0
        for _ in range(60):
            mid = math.sqrt(lo * hi)
            lo, hi = (lo, mid) if resolved(x.mean - half / mid, x.mean + half / mid) else (mid, hi)
        return "range", f"range-limited: a regressor range ~{hi:.2g}x wider{span} at the same points would resolve it"
    m = units_needed(x, resolved)
    if m is None:
        return "underpowered", "underpowered"
    count = f">{MAX_UNITS}" if m > MAX_UNITS else f"~{m}"
    return "underpowered", f"underpowered: {count} {_plural(x.unit)} at the observed " \
                           f"{'rate' if x.method in PROPORTION_METHODS else 'spread'} would resolve it"


# -- the rules -------------------------------------------------------------------------------------------------------
def _unusable(x: Interval, what: str) -> str | None:
    """Why x decides nothing: not finite, fewer than 2 units, or zero width (None when it is usable)."""
    if not all(math.isfinite(float(v)) for v in (x.mean, x.lo, x.hi)):
        return f"{what} has no finite interval ({_ci(x)})"
    if x.n < 2:
        counted = f"is one {x.unit or 'value'}" if x.n == 1 else "counts no units"
        return f"{what} {counted} ({_g(x.mean)}): fewer than 2 units give no interval"
    if x.hi - x.lo <= 0:
        return f"{what} {_ci(x)} has a zero-width interval (capped or identical values): no interval to judge"
    return None


def _level(x: IntervalLike, plan: SamplePlan | None) -> Interval:
    x = as_interval(x)
    if plan is not None:
        if x.unit and x.unit != plan.unit:
            raise ValueError(f"an interval over {_plural(x.unit)} judged under a plan over {_plural(plan.unit)}")
        x = replace(x, unit=plan.unit)
    return x


def _judgement(verdict: Verdict, reason: str, rule: str, x: Interval, plan: SamplePlan | None,
               redo: Callable[[float], Judgement], cause: str = "") -> Judgement:
    return Judgement(verdict, reason, rule, x.unit, x.n, plan, cause if verdict == "inconclusive" else "", redo)


def _one_sided(x: Interval, direction: Direction, reference: float, bound: float, what: str, rule: str,
               plan: SamplePlan | None, level: float, claimed: str) -> Judgement:
    """On q = x - reference oriented to ``direction``: holds if lo_q > bound, fails if hi_q < bound; the reason
    states x and the boundary in x's own units."""
    if direction not in ("above", "below"):
        raise ValueError(f"direction must be 'above' or 'below', got {direction!r}")
    redo = lambda c: _one_sided(x, direction, reference, bound, what, rule, plan, c, claimed)  # noqa: E731
    y = x.at(level)
    if (why := _unusable(y, what)) is not None:
        return _judgement("inconclusive", why, rule, y, plan, redo, "no interval")
    sign = 1 if direction == "above" else -1
    at = reference + sign * bound  # the boundary in x's units
    lo_q, hi_q = sorted((sign * (y.lo - reference), sign * (y.hi - reference)))
    mean_q = sign * (y.mean - reference)
    side = "above" if direction == "above" else "below"
    if lo_q > bound:
        return _judgement("holds", f"{what} {_ci(y)} lies {side} {_g(at)}", rule, y, plan, redo)
    if hi_q < bound:
        return _judgement("fails", f"{what} {_ci(y)} lies entirely on the other side of {_g(at)}{claimed}", rule, y,
                          plan, redo)
    if mean_q == bound:
        return _judgement("inconclusive", f"{what} {_ci(y)}: its estimate sits on {_g(at)}", rule, y, plan, redo,
                          "at the boundary")
    oriented = lambda lo, hi: sorted((sign * (lo - reference), sign * (hi - reference)))  # noqa: E731
    cause, words = _resolving(y, (lambda lo, hi: oriented(lo, hi)[0] > bound) if mean_q > bound
                              else (lambda lo, hi: oriented(lo, hi)[1] < bound))
    return _judgement("inconclusive", f"{what} {_ci(y)} straddles {_g(at)} ({words})", rule, y, plan, redo, cause)


def superiority(x: IntervalLike, *, direction: Direction = "above", margin: float = 0.0, reference: float = 0.0,
                what: str = "the difference", plan: SamplePlan | None = None) -> Judgement:
    """x - ``reference`` exceeds ``margin`` (>= 0) in ``direction``: holds if the oriented lo > margin; fails if the
    oriented hi < margin (with margin > 0: the effect is smaller than claimed)."""
    if margin < 0:
        raise ValueError(f"superiority needs margin >= 0, got {margin}")
    x = _level(x, plan)
    claimed = " (an effect smaller than claimed)" if margin > 0 else ""
    return _one_sided(x, direction, reference, margin, what, "superiority", plan,
                      plan.confidence if plan else x.confidence, claimed)


def noninferiority(x: IntervalLike, *, margin: float, direction: Direction = "below", reference: float = 0.0,
                   what: str = "the difference", plan: SamplePlan | None = None) -> Judgement:
    """x - ``reference`` is no worse than ``margin`` in ``direction``: for "below", holds if hi < reference + margin
    and fails if lo > reference + margin; for "above", holds if lo > reference - margin, fails if hi < it."""
    if margin < 0:
        raise ValueError(f"noninferiority needs margin >= 0, got {margin}")
    x = _level(x, plan)
    return _one_sided(x, direction, reference, -margin, what, "noninferiority", plan,
                      plan.confidence if plan else x.confidence, " (worse than the margin)")


def _two_sided(x: Interval, margin: float, center: float, what: str, rule: str, plan: SamplePlan | None,
               level: float) -> Judgement:
    redo = lambda c: _two_sided(x, margin, center, what, rule, plan, c)  # noqa: E731
    y = x.at(level)
    if (why := _unusable(y, what)) is not None:
        return _judgement("inconclusive", why, rule, y, plan, redo, "no interval")
    lo_b, hi_b = center - margin, center + margin
    bounds = f"[{_g(lo_b)}, {_g(hi_b)}]"
    tost = f" (two one-sided tests at {(1 - y.confidence) / 2:.3g} each)"
    if lo_b < y.lo and y.hi < hi_b:
        return _judgement("holds", f"{what} {_ci(y)} lies inside {bounds}{tost}", rule, y, plan, redo)
    if y.lo > hi_b or y.hi < lo_b:
        return _judgement("fails", f"{what} {_ci(y)} lies entirely outside {bounds}", rule, y, plan, redo)
    if abs(y.mean - center) == margin:
        return _judgement("inconclusive", f"{what} {_ci(y)}: its estimate sits on a bound of {bounds}", rule, y, plan,
                          redo, "at the boundary")
    inside = abs(y.mean - center) < margin
    cause, words = _resolving(y, (lambda lo, hi: lo_b < lo and hi < hi_b) if inside
                              else (lambda lo, hi: lo > hi_b or hi < lo_b))
    shape = f"is wider than {bounds}" if y.hi - y.lo > 2 * margin else f"straddles a bound of {bounds}"
    return _judgement("inconclusive", f"{what} {_ci(y)} {shape} ({words})", rule, y, plan, redo, cause)


def equivalence(x: IntervalLike, *, margin: float, center: float = 0.0, what: str = "the difference",
                rule: str = "equivalence", plan: SamplePlan | None = None) -> Judgement:
    """x is within ``center`` +- ``margin``: holds if the interval lies inside (TOST at 2.5% per side with the 95%
    interval), fails if it lies entirely outside, inconclusive otherwise."""
    if margin <= 0:
        raise ValueError(f"equivalence needs margin > 0, got {margin}")
    x = _level(x, plan)
    return _two_sided(x, margin, center, what, rule, plan, plan.confidence if plan else x.confidence)


def trend(slope: IntervalLike, *, predicted: float, tol: float, what: str = "the slope",
          plan: SamplePlan | None = None) -> Judgement:
    """A fitted slope agrees with the ``predicted`` one: ``equivalence`` of its interval with predicted +- tol."""
    return equivalence(slope, margin=tol, center=predicted, what=what, rule="trend", plan=plan)


def exact(ok: bool, why: str, *, basis: str) -> Judgement:
    """A deterministic measurement (no seed variance): ``ok`` decides; ``basis`` says why it is exact (one of
    ``EXACT_BASES``: an enumeration, an exact solver, a count over a fixed set, a closed form, a certificate) and
    ``why`` states the comparison with its numbers."""
    if basis not in EXACT_BASES:
        raise ValueError(f"exact: basis must be one of {', '.join(EXACT_BASES)} (got {basis!r}); a threshold on a "
                         "measured value goes through an interval rule")
    return Judgement("holds" if ok else "fails", f"{why} ({basis})", "exact")


def all_of(parts: Mapping[str, Judgement], quoted: int = 3, confidence: float | None = None) -> Judgement:
    """A claim over several parts (every model, every cell, every reward): holds if every part holds
    (intersection-union), fails if a part fails under Holm's correction over the parts (family level 1 -
    ``confidence``, default the parts' own), else inconclusive. The reason counts the parts by verdict and quotes the
    first ``quoted`` parts of the deciding verdict (pass them in the order worth reading, e.g. the tightest first)."""
    if not parts:
        raise ValueError("all_of needs at least one part")
    base = confidence if confidence is not None else min(
        (j.plan.confidence if j.plan else 0.95) for j in parts.values())
    alpha, k = 1 - base, len(parts)

    def at(j: Judgement, level: float) -> Judgement:
        return j.redo(level) if j.redo is not None else j

    judged = {name: at(j, base) if confidence is not None else j for name, j in parts.items()}
    failing: dict[str, Judgement] = {}
    while len(failing) < k:  # Holm's step-down: the j-th rejection at level alpha / (k - j) (a part that does not
        # fail at its own level cannot fail at a wider one)
        level = 1 - alpha / (k - len(failing))
        new = {name: f for name, j in judged.items()
               if j.verdict == "fails" and name not in failing and (f := at(j, level)).verdict == "fails"}
        if not new:
            break
        failing.update(new)
    tally = ", ".join(f"{n} {v}" for v in VERDICTS if (n := sum(j.verdict == v for j in judged.values())))
    if all(j.verdict == "holds" for j in judged.values()):
        verdict, deciding, how = "holds", list(judged.items()), "every part holds (intersection-union)"
    elif failing:
        verdict, deciding = "fails", list(failing.items())
        how = f"{len(failing)} fail under Holm's correction over {k} parts"
    else:
        verdict = "inconclusive"
        deciding = [(n, j) for n, j in judged.items() if j.verdict == "inconclusive"]
        unheld = [(n, j) for n, j in judged.items() if j.verdict == "fails"]
        how = (f"{len(unheld)} fail alone but none under Holm's correction over {k} parts" if unheld
               else "not every part holds")
        deciding = unheld + deciding
    shown = "; ".join(f"{name}: {j.reason}" for name, j in deciding[:quoted])
    more = f"; +{len(deciding) - quoted} more" if len(deciding) > quoted else ""
    units = sorted({j.unit for j in judged.values() if j.unit})
    counted = [j.n for j in judged.values() if j.n]
    first = deciding[0][1]
    cause = next((j.cause for _, j in deciding if j.cause), "underpowered") if verdict == "inconclusive" else ""
    return Judgement(verdict, f"{k} parts ({tally}; {how}): {shown}{more}", first.rule, "/".join(units),
                     min(counted, default=0), next((j.plan for j in judged.values() if j.plan), None), cause,
                     None if all(j.redo is None for j in parts.values())
                     else (lambda c: all_of(parts, quoted, c)))


# -- the baseline ladder ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Rung:
    """One trivial baseline of a task and its measured value (a number, or an interval over units)."""

    name: str
    value: float | Interval

    def point(self) -> float:
        return float(self.value.mean if isinstance(self.value, Interval) else self.value)

    def row(self) -> dict[str, Any]:
        value = self.value.rounded() | {"n": self.value.n} if isinstance(self.value, Interval) \
            else round(float(self.value), 4)
        return {"baseline": self.name, "value": value}


@dataclass(frozen=True)
class Ladder:
    """The trivial baselines of a task, strongest first (``better``: whether lower or higher values are stronger):
    a competence precondition is judged against ``strongest`` and records the next rung beside it."""

    rungs: tuple[Rung, ...]
    better: Literal["lower", "higher"]

    @classmethod
    def of(cls, better: Literal["lower", "higher"], rungs: Mapping[str, float | Interval]) -> Ladder:
        if better not in ("lower", "higher"):
            raise ValueError(f"a ladder's better is 'lower' or 'higher', got {better!r}")
        ordered = sorted((Rung(n, v) for n, v in rungs.items()), key=lambda r: r.point(), reverse=better == "higher")
        if len(ordered) < 2:
            raise ValueError("a ladder needs at least 2 rungs: the judged baseline and the next one")
        return cls(tuple(ordered), better)

    @property
    def strongest(self) -> Rung:
        return self.rungs[0]

    def row(self) -> list[dict[str, Any]]:
        return [r.row() for r in self.rungs]


# -- the claims ------------------------------------------------------------------------------------------------------
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
    unit: str = ""
    n: int = 0
    plan: SamplePlan | None = None
    cause: str = ""
    against: str = ""  # a precondition's baseline (with ``ladder``) or bound
    ladder: Ladder | None = None

    @property
    def holds(self) -> bool:
        return self.verdict == "holds"

    def row(self) -> dict[str, Any]:
        """The claim as a metrics-file row; ``holds`` (verdict == holds) is kept for readers of the old format."""
        row = {"id": self.id, "kind": self.kind, "statement": self.statement, "paper_value": self.paper_value,
               "measured": self.measured, "verdict": self.verdict, "holds": self.holds, "reason": self.reason,
               "requires": list(self.requires), "rule": self.rule}
        if self.rule != "exact":
            row |= {"unit": self.unit, "n": self.n, "plan": self.plan.row() if self.plan else None}
        if self.cause:
            row["cause"] = self.cause
        if self.kind == "precondition":
            row |= {"baseline": self.against, "ladder": self.ladder.row()} if self.ladder else {"bound": self.against}
        return row


def _judgement_of(id: str, judged: Judgement, planned: bool = True) -> Judgement:
    """``judged`` if it is a rule's Judgement; with ``planned`` (evidence, preconditions) an interval rule's must
    carry its unit and the sample-size plan its n came from."""
    if not isinstance(judged, Judgement) or judged.rule not in RULES:
        raise TypeError(f"claim {id!r}: the verdict must be a Judgement of a decision rule ({', '.join(RULES)}), "
                        f"not {type(judged).__name__}")
    if planned and judged.rule != "exact" and (judged.plan is None or not judged.unit):
        raise ValueError(f"claim {id!r}: judged on an interval without its unit and sample-size plan "
                         "(pass plan= to the rule)")
    return judged


def _statement(id: str, statement: str) -> str:
    if ISSUE_NUMBER.search(statement):
        raise ValueError(f"claim {id!r}: a statement names no issue numbers (it restates the paper at our scale)")
    return statement


def evidence(id: str, statement: str, paper_value: Any, measured: Any, judged: Judgement,
             requires: Sequence[str]) -> Claim:
    """The paper's finding at our scale, decided by a rule; ``requires``: the preconditions that make it judgeable."""
    judged = _judgement_of(id, judged)
    if not requires:
        raise ValueError(f"evidence {id!r} requires no precondition: name those that show its effect can appear")
    return Claim(id, "evidence", _statement(id, statement), paper_value, measured, judged.verdict, judged.reason,
                 tuple(requires), judged.rule, judged.unit, judged.n, judged.plan, judged.cause)


def check(id: str, statement: str, paper_value: Any, measured: Any, judged: Judgement) -> Claim:
    """An invariant or a property true by construction, decided by a rule (``exact`` with its basis for a
    deterministic invariant): reported, not counted as a reproduction."""
    judged = _judgement_of(id, judged, planned=False)
    return Claim(id, "check", _statement(id, statement), paper_value, measured, judged.verdict,
                 "" if judged.verdict == "holds" else judged.reason, (), judged.rule, judged.unit, judged.n,
                 judged.plan, judged.cause)


def precondition(id: str, statement: str, against: str, measured: Any, judged: Judgement, *,
                 ladder: Ladder | None = None) -> Claim:
    """The regime, measured: against the strongest rung of ``ladder`` (``against`` names it: a competence
    precondition), or, without a ladder, against the bound, oracle or mechanism reference ``against`` names (a
    headroom, floor or mechanism precondition)."""
    if not against:
        raise ValueError(f"precondition {id!r} names no baseline or bound")
    if ladder is not None and against != ladder.strongest.name:
        raise ValueError(f"precondition {id!r} is judged against {against!r}, but the ladder's strongest rung is "
                         f"{ladder.strongest.name!r}")
    judged = _judgement_of(id, judged)
    return Claim(id, "precondition", _statement(id, statement), "(regime check, not a paper claim)", measured,
                 judged.verdict, judged.reason, (), judged.rule, judged.unit, judged.n, judged.plan, judged.cause, against,
                 ladder)


def _short(value: Any, limit: int = 160) -> str:
    text = str(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _why(p: Claim) -> str:
    """A failed precondition's reason and then its measured values."""
    return f"{p.reason} (measured: {p.measured})" if p.reason else str(p.measured)


def resolve(claims: Iterable[Claim]) -> list[Claim]:
    """The claims as published: ids unique, ``requires`` naming preconditions, and every evidence claim whose
    required preconditions do not all hold made ``inconclusive`` (cause ``precondition``), its reason naming each
    failed precondition with that precondition's own reason (the rule's comparison, with its numbers) and then the
    claim's own verdict and reason judged alone."""
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
            alone = f"{c.verdict}: {_short(c.reason, 300)}" if c.reason else c.verdict  # its own numbers stay
            c = replace(c, verdict="inconclusive", reason=f"{why} (judged alone: {alone})", cause="precondition")
        out.append(c)
    return out
