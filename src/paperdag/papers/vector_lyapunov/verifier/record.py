"""What a certificate folder records beside its verdict, and how ``paperdag verify`` audits it.

* The problem digest: sha256 of each field of the problem data (system matrices, delay tau, disturbance bound,
  state box, domain kind) as canonical JSON, stored in summary.json (``problem_digest``). A folder whose problem data
  (meta.json) no longer match it certified another problem, and is refused naming the fields (``problem_changes``).
* The constants: every constant the stored verdict rests on is re-derived from the weights and the problem data and
  compared with the stored one in the direction in which it is sound (``audit``): a sound upper bound
  (eps, kappa, c_1, gamma, rho, the window, ...) may be stored larger than its re-derivation, never smaller; a lower
  bound (c_0, w_certified) may be stored smaller, never larger. Re-derivation runs the same deterministic solvers,
  so a stored constant may differ from it only by floating-point noise, ``REL_TOL`` relative, far below the solvers'
  safety margin (``lp.SAFETY``).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from paperdag.io import to_jsonable

REL_TOL = 1e-9  # floating-point noise a re-derivation may differ by (lp.SAFETY = 1e-7 is the margin it sits under)
DIGEST_KEY = "problem_sha256"  # summary.json: {field: sha256 of the field's canonical JSON}

Sense = Literal["upper", "lower"]


def _sha256(value: Any) -> str:
    text = json.dumps(to_jsonable(value), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def problem_digest(problem: dict[str, Any]) -> dict[str, str]:
    """{field: sha256 of its canonical JSON} of the problem data."""
    return {k: _sha256(v) for k, v in sorted(problem.items())}


def problem_changes(summary: dict[str, Any], problem: dict[str, Any], own: dict[str, Any]) -> list[str]:
    """What no longer matches the certificate's record: the fields of ``problem`` whose digest differs from the one
    ``summary`` records (missing or extra fields included; "(no digest recorded)" when it records none), and the
    entries of ``own`` (the problem as summary.json states it: system, n, tau, domain kind) that it states
    otherwise."""
    recorded = summary.get(DIGEST_KEY)
    if recorded:
        fresh = problem_digest(problem)
        changed = sorted(k for k in fresh.keys() | recorded.keys() if fresh.get(k) != recorded.get(k))
    else:
        changed = ["(no digest recorded)"]
    return changed + [f"summary.json {k}={summary.get(k)!r} (the problem's {v!r})" for k, v in own.items()
                      if summary.get(k) != v]


@dataclass(frozen=True)
class Constant:
    """A stored constant against its re-derivation: ``sense`` "upper" (a sound upper bound: stored >= re-derived
    entry by entry) or "lower" (stored <= re-derived); ``stored`` None when the folder lacks it."""

    name: str
    stored: Any
    derived: Any
    sense: Sense


@dataclass(frozen=True)
class Row:
    """One line of the audit: the entry with the least conservative stored value, its index (arrays), the stored
    and re-derived values there, and whether every entry is at least as conservative as its re-derivation."""

    name: str
    sense: Sense
    entries: int
    index: tuple[int, ...]
    stored: float
    derived: float
    ok: bool
    problem: str = ""


def _row(c: Constant) -> Row:
    derived = np.asarray(c.derived, dtype=np.float64)
    if c.stored is None:
        return Row(c.name, c.sense, derived.size, (), np.nan, float(derived.flat[0]), False, "missing")
    stored = np.asarray(c.stored, dtype=np.float64)
    if stored.shape != derived.shape:
        return Row(c.name, c.sense, derived.size, (), np.nan, np.nan, False,
                   f"shape {stored.shape} != re-derived {derived.shape}")
    sign = 1.0 if c.sense == "upper" else -1.0
    slack = sign * (stored - derived) + REL_TOL * np.abs(derived)  # >= 0: at least as conservative
    k = np.unravel_index(int(np.argmin(slack)), slack.shape) if slack.ndim else ()
    return Row(c.name, c.sense, derived.size, tuple(int(i) for i in k), float(stored[k]), float(derived[k]),
               bool(np.all(slack >= 0)))


def audit(constants: list[Constant]) -> list[Row]:
    """One ``Row`` per constant."""
    return [_row(c) for c in constants]


def table(rows: list[Row]) -> list[str]:
    """The stored-vs-re-derived table, one line per constant (arrays: the least conservative entry)."""
    head = (f"{'constant':<18} {'sound as':<12} {'entries':>7} {'least conservative':<18} {'stored':>14} "
            f"{'re-derived':>14}  check")
    lines = [head]
    for r in rows:
        where = str(list(r.index)) if r.index else "-"
        check = "ok" if r.ok else f"LESS CONSERVATIVE{': ' + r.problem if r.problem else ''}"
        lines.append(f"{r.name:<18} {r.sense + ' bound':<12} {r.entries:>7} {where:<18} {r.stored:>14.8g} "
                     f"{r.derived:>14.8g}  {check}")
    return lines


def failures(rows: list[Row]) -> str:
    """One line naming every constant stored less conservatively than its re-derivation ('' if none)."""
    bad = []
    for r in rows:
        if r.ok:
            continue
        if r.problem:
            bad.append(f"{r.name} ({r.problem})")
            continue
        op = "<" if r.sense == "upper" else ">"
        where = f" at {list(r.index)}" if r.index else ""
        bad.append(f"{r.name}{where} (stored {r.stored:.8g} {op} re-derived {r.derived:.8g}, {r.sense} bound)")
    return ("stored constants less conservative than re-derived from the weights and problem data: "
            + "; ".join(bad)) if bad else ""
