"""``paperdag verify``: re-check a paper's certificate from its folder alone, ending in one of four outcomes.

* VERIFIED (exit 0): the certificate's claim is re-derived from the folder and holds.
* REFUTED (exit 1): the claim is false: a counterexample, or a stored value the re-derivation contradicts.
* REFUSED (exit 1): the folder is not a certificate of this paper's problem (a missing file, problem data that no
  longer match the certificate's record, a request beyond the paper's bounds); the line names the field, and
  nothing is re-checked.
* UNDECIDED (exit 1): the budget ran out before a verdict; the line names the budget.

A paper declares ``Pipeline(reverify="module:function")``: ``function(folder, work) -> Result``, raising
``Refused`` for a folder it will not check. ``work`` (a ``Work``) is the budget and progress of one re-check: the
paper passes its units of work (proofs, certificate rows, subsystems) through ``work.each``, which stops the
re-check with UNDECIDED once ``--budget`` units are spent; while it runs, a thread prints
``[<paper> verify] <unit> done/total (elapsed)`` on stderr at most every 5 s, so a single long solve still reports.
"""

from __future__ import annotations

import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from types import TracebackType
from typing import TypeVar

T = TypeVar("T")
PROGRESS_EVERY_S = 5.0


class Outcome(StrEnum):
    """What a re-check ends in; only VERIFIED exits 0."""

    VERIFIED = "VERIFIED"
    REFUTED = "REFUTED"
    REFUSED = "REFUSED"
    UNDECIDED = "UNDECIDED"


@dataclass(frozen=True)
class Result:
    """The outcome of a re-check and its one-line explanation."""

    outcome: Outcome
    message: str

    @property
    def exit_code(self) -> int:
        return 0 if self.outcome is Outcome.VERIFIED else 1


class Refused(Exception):
    """The folder is not a certificate of this problem: ``field`` names what does not match and ``why`` says how."""

    def __init__(self, field: str, why: str):
        super().__init__(f"{field}: {why}")
        self.field, self.why = field, why


class BudgetSpent(Exception):
    """``--budget`` units of work were spent before the re-check reached a verdict."""


def require_files(folder: Path, *names: str) -> None:
    """``Refused`` naming the first of ``names`` that ``folder`` does not hold (a foreign or incomplete folder)."""
    for name in names:
        if not (folder / name).exists():
            raise Refused(name, f"missing from {folder}")


class Work:
    """The budget and progress of one re-check (a context manager: the progress thread runs inside it).

    ``budget``: the most units ``each`` hands out (None: no limit). ``echo`` receives the progress lines.
    """

    def __init__(self, label: str, budget: int | None = None, every: float = PROGRESS_EVERY_S,
                 echo: Callable[[str], None] | None = None):
        self.label, self.budget, self.every = label, budget, every
        self.echo = echo or (lambda line: print(line, file=sys.stderr, flush=True))
        self.unit, self.done, self.total, self.spent, self.counting = "working", 0, None, 0, False
        self._stop = threading.Event()
        self._t0 = time.monotonic()

    def each(self, items: Iterable[T], unit: str, total: int | None = None) -> Iterator[T]:
        """Yield ``items``, each one unit of work named ``unit`` (e.g. "proofs"); raises ``BudgetSpent`` instead of
        the unit after the budget's last."""
        self.unit, self.done, self.counting = unit, 0, True
        self.total = total if total is not None else (len(items) if hasattr(items, "__len__") else None)
        for item in items:
            if self.budget is not None and self.spent >= self.budget:
                of = f" of {self.total}" if self.total is not None else ""
                raise BudgetSpent(f"--budget {self.budget} spent: {self.done}{of} {unit} re-checked, no verdict yet "
                                  f"(rerun with a larger --budget, or without one)")
            self.spent += 1
            yield item
            self.done += 1

    def doing(self, what: str) -> None:
        """Name what the re-check does now that is not counted in units (shown until the next ``each``)."""
        self.unit, self.done, self.total, self.counting = what, 0, None, False

    def line(self) -> str:
        """The progress line: ``[label] unit done/total (elapsed)``, or ``[label] what (elapsed)`` between units."""
        of = f"/{self.total}" if self.total is not None else ""
        count = f" {self.done}{of}" if self.counting else ""
        return f"[{self.label}] {self.unit}{count} ({time.monotonic() - self._t0:.0f}s)"

    def _beat(self) -> None:
        while not self._stop.wait(self.every):
            self.echo(self.line())

    def __enter__(self) -> Work:
        self._t0 = time.monotonic()
        threading.Thread(target=self._beat, daemon=True, name="verify-progress").start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._stop.set()


def _first_line(e: BaseException) -> str:
    return (str(e).strip().splitlines() or [""])[0][:200]


def reverify(slug: str, folder: Path, budget: int | None = None,
             echo: Callable[[str], None] | None = None) -> Result:
    """Re-check ``folder`` with paper ``slug``'s declared ``reverify`` function under ``budget`` units of work.

    Whatever the folder holds, the answer is a ``Result``: an error while reading it is REFUSED (naming the error),
    numerical libraries' warnings are silenced (they never precede the result line).
    """
    from paperdag.dag import get_pipeline
    from paperdag.engine import resolve_fn
    from paperdag.errors import PaperdagError
    from paperdag.extras import require_extra

    pipeline = get_pipeline(slug)
    if pipeline.reverify is None:
        raise PaperdagError(f"paper {slug!r} has no certificate to re-verify")
    require_extra(slug)
    fn = resolve_fn(pipeline.package, pipeline.reverify)
    with Work(f"{slug} verify", budget, echo=echo) as work, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return fn(Path(folder), work)
        except Refused as e:
            return Result(Outcome.REFUSED, f"{e.field}: {e.why} ({folder} is no certificate of this {slug} problem; "
                                           f"nothing was verified)")
        except BudgetSpent as e:
            return Result(Outcome.UNDECIDED, str(e))
        except Exception as e:  # noqa: BLE001 - whatever the folder holds, the answer is one line
            return Result(Outcome.REFUSED, f"{folder} holds no readable {slug} certificate ({type(e).__name__}: "
                                           f"{_first_line(e)}); nothing was verified")
