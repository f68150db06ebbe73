"""The network systems: a drone formation and a droop-controlled microgrid, rings of heterogeneous 2-state
subsystems with delayed feedback (model.py), their vector certificate and condition (N) (certificate.py) on the
delay domains of domain.py, learned by CEGIS from the LMI quadratic baseline (cegis.py, lmi.py), verified subsystem
by subsystem (certify.py), compared with a monolithic certificate over the whole ring (monolithic.py), the certified
controller's performance against a tuned uncertified one (control.py), and evaluated (evaluation.py)."""
