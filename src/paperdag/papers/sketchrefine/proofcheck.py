"""Re-checking a reported proof from scratch, from its table rows alone.

A proof is a set of nodes (id, var, lo, hi, cites; bounds as exact decimal strings). It is accepted iff
    exactly one node is the goal and states the theorem's goal box,
    every cited id is a lemma node of the proof (``h_*``) on a strict ancestor of the citing node's variable
    (so the citation graph is acyclic: citations go down the definition DAG),
    and the checker proves every node's step from the boxes of the nodes it cites.
Then every lemma holds, hence the goal holds, by induction along the citations.
"""

from __future__ import annotations

from .checker import PROVED, Checker
from .sketch import GOAL
from .theorems import Theorem


def verify_proof(theorem: Theorem, rows: list[dict[str, object]], checker: Checker) -> str:
    """"" if the proof is accepted, else the reason it is rejected."""
    nodes = {str(r["node"]): r for r in rows}
    goal = nodes.get(GOAL)
    if goal is None or (goal["var"], (int(goal["lo"]), int(goal["hi"]))) != (theorem.goal_var, theorem.goal()):
        return "the goal node is missing or does not state the theorem"
    for i, r in nodes.items():
        var = str(r["var"])
        if theorem.definition(var) is None:
            return f"{i}: {var} is not a defined variable"
        for c in r["cites"]:
            if not str(c).startswith("h_") or c not in nodes or nodes[c]["var"] not in theorem.ancestors(var):
                return f"{i}: cites {c}, which is not a lemma on an ancestor of {var}"
        cited = {str(nodes[c]["var"]): (int(nodes[c]["lo"]), int(nodes[c]["hi"])) for c in r["cites"]}
        verdict = checker(theorem, var, (int(r["lo"]), int(r["hi"])), cited)
        if verdict.status != PROVED:
            return f"{i}: {verdict.status} ({verdict.error})"
    return ""
