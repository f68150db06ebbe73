"""PepMirror parameters (default profile = the small-scale reproduction in params.yaml)."""

from __future__ import annotations

from pydantic import Field

from paperdag.params import ParamsModel


class Params(ParamsModel):
    seed: int = 0
    # data
    pocket_radius: float = Field(10.0, gt=4.0, le=20.0, description="pocket: residues with CA within this of a peptide CA (A)")
    pocket_max: int = Field(40, ge=8, le=96, description="closest pocket residues kept")
    min_pocket: int = Field(12, ge=1, le=96)
    seg_min_len: int = Field(6, ge=3, le=12)
    seg_max_len: int = Field(12, ge=3, le=12)
    seg_stride: int = Field(4, ge=1, le=50)
    heldout_every: int = Field(5, ge=2, le=50, description="every k-th DSSP file is held out for segment targets")
    n_segment_targets: int = Field(5, ge=0, le=20)
    max_train_examples: int = Field(0, ge=0, description="0 = keep all training segments")
    # model and diffusion
    hidden: int = Field(48, ge=8, le=512)
    vec_channels: int = Field(8, ge=4, le=64)
    n_layers: int = Field(3, ge=1, le=12)
    diffusion_steps: int = Field(100, ge=5, le=2000)
    coord_scale: float = Field(6.0, gt=0.0, description="A per diffusion unit (coordinate-space DDPM)")
    train_steps: int = Field(800, ge=1)
    batch_size: int = Field(32, ge=1, le=1024)
    lr: float = Field(2e-3, gt=0.0, le=1.0)
    n_samples: int = Field(8, ge=1, le=256, description="designs per target and per hand of the target")
    refine_iters: int = Field(100, ge=1, le=2000, description="L-BFGS iterations of the chirality-neutral refinement")
    # sequence head
    seq_train_steps: int = Field(400, ge=1)
    seq_lr: float = Field(3e-3, gt=0.0, le=1.0)
    # verify / export / evaluate
    equiv_tol: float = Field(1e-8, gt=0.0, description="certificate: max relative equivariance error (float64)")
    reflection_min_violation: float = Field(1e-3, gt=0.0, description="axial must break f(Px)=Pf(x) by this much")
    clash_dist: float = Field(3.0, gt=0.0)
    contact_dist: float = Field(8.0, gt=0.0)
    recovery_dist: float = Field(3.0, gt=0.0)
    n_export: int = Field(10, ge=1, le=200)
    per_target_export: int = Field(2, ge=1, le=50)
    near_zero: float = Field(0.10, ge=0.0, le=1.0, description="claim: polar L ratio on mirrored targets at most")
    clear_majority: float = Field(0.70, ge=0.5, le=1.0, description="claim: axial requested-hand ratio at least")
    noninferiority_margin: float = Field(0.10, ge=0.0, le=1.0, description="relative margin of 'at least as good'")
