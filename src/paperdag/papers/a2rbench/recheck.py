"""Re-check of certificates from an artifact alone (``paperdag verify a2rbench [FOLDER]``, and the evaluate stage):
each accepted task's rule reproduces its demos and answer, its claimed inverse round-trips them, and a fresh
enumeration of the DSL finds exactly one answer on the query, equal to the stored one."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from paperdag.io import read_table

from .certificate import consistent_set, distinct_answers, reproduces, round_trips
from .params import DslParams
from .primitives import names, registry
from .tasks import Task, from_row


def recheck(task: Task, alphabet: int, max_depth: int, device: str = "cpu") -> tuple[bool, int]:
    """(holds, number of distinct answers among the DSL programs consistent with the demos)."""
    prims = registry(task.dim, alphabet)
    xs = np.concatenate([task.demos_in, task.query[None]])
    ys_ok = reproduces(task.program, task.demos_in, task.demos_out, prims) and reproduces(
        task.program, task.query, task.answer, prims)
    answers = distinct_answers(consistent_set(task, prims, names(task.dim, alphabet), max_depth, device))
    same = len(answers) == 1 and answers[0].shape == task.answer.shape and np.array_equal(answers[0], task.answer)
    return bool(ys_ok and round_trips(task.program, task.inverse_program, xs, prims) and same), len(answers)


def budget(field: str) -> int:
    """The largest value of a DSL param the paper allows (its bound in params.py): the most a certificate may ask
    the re-check to enumerate."""
    return next(m.le for m in DslParams.model_fields[field].metadata if getattr(m, "le", None) is not None)


def reverify(folder: Path) -> tuple[bool, str]:
    """Re-check every accepted task of ``folder``/certificates.parquet (alphabet and depth read from the table);
    a table asking for a larger alphabet or depth than the paper's budget is refused before any enumeration (the
    work grows exponentially with both)."""
    rows = [r for r in read_table(Path(folder) / "certificates.parquet").to_pylist() if r["accepted"]]
    alphabet, depth = int(rows[0]["alphabet"]), int(rows[0]["max_depth"])
    for name, value in (("alphabet", alphabet), ("max_depth", depth)):
        if value > budget(name):
            raise ValueError(f"the certificate asks for {name} {value}, beyond the paper's budget {budget(name)}: "
                             "refused, nothing re-checked")
    failed = [r["task_id"] for r in rows if not recheck(from_row(r), alphabet, depth)[0]]
    return not failed, f"{len(rows) - len(failed)}/{len(rows)} accepted tasks re-checked" + (
        f"; failing: {failed[:5]}" if failed else "")
