"""``paperdag verify vector_lyapunov [PATH]``: re-verify a certificate folder (verifier/folder.py) from its weights
and problem data alone, with the verifier budget stored in its meta.json (verifier/record.py: what is audited)."""

from __future__ import annotations

from pathlib import Path

from paperdag.io import read_json

from .networks.certify import reverify_network
from .platoon.certify import reverify_platoon
from .verifier.folder import META_FILE


def reverify(cert_dir: Path) -> tuple[bool, str]:
    """(ok, message): a network certificate folder (meta.kind == "network", e.g. verify_drones'
    certificates/drones_tau1_reach) goes to ``networks.certify.reverify_network``, a platoon one (the ``verify``
    stage's output) to ``platoon.certify.reverify_platoon``. Both refuse in one line a folder whose problem data no
    longer match its recorded digest or whose stored constants are less conservative than their re-derivation, and
    otherwise print the stored-vs-re-derived table before re-proving. ok (exit 0) iff freshly proved and in agreement
    with the stored verdict; otherwise the message says what was refuted or what disagrees with the stored
    artifact."""
    cert_dir = Path(cert_dir)
    if read_json(cert_dir / META_FILE).get("kind") == "network":
        return reverify_network(cert_dir)
    return reverify_platoon(cert_dir)
