"""The sound verifier shared by every certificate: piecewise-linear computations compiled into masked ReLU networks
(graph.py), interval and CROWN bounds (bounds.py), the exact big-M MILP (milp.py), input-domain branch and bound
(bab.py), the certificate folder every verification writes and ``paperdag verify`` re-checks (folder.py), and the
audit of what a folder records: its problem digest and its constants against their re-derivation (record.py)."""
