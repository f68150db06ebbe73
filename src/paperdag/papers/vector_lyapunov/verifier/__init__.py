"""The sound verifier shared by every certificate: piecewise-linear computations compiled into masked ReLU networks
(graph.py), interval and CROWN bounds (bounds.py), the exact big-M MILP (milp.py), input-domain branch and bound
(bab.py), and the certificate folder every verification writes and ``paperdag verify`` re-checks (folder.py)."""
