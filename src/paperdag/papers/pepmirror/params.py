"""Parameters of pepmirror (its block of params.yaml). No defaults: params.yaml is the one source of values."""

from __future__ import annotations

from pydantic import Field, model_validator

from paperdag.common.plans import SamplePlan
from paperdag.params import ParamsModel

N_REAL_TARGETS = 3  # the held-out real complexes (data.HELDOUT_COMPLEXES), targets beside the segment targets


class DataParams(ParamsModel):
    """Training segments and held-out targets cut from the MDAnalysisTests structures (data.py)."""

    pocket_radius: float = Field(gt=4.0, le=20.0, description="pocket: residues with CA this close to a peptide CA (A)")
    pocket_max: int = Field(ge=8, le=96, description="closest pocket residues kept (and the padded pocket size)")
    min_pocket: int = Field(ge=1, le=96, description="segments with fewer pocket residues are dropped")
    seg_min_len: int = Field(ge=3, le=12, description="shortest peptide segment cut from a chain (residues)")
    seg_max_len: int = Field(ge=3, le=12, description="longest peptide segment cut from a chain (residues)")
    seg_stride: int = Field(ge=1, le=50, description="residues between the starts of consecutive segments")
    heldout_every: int = Field(ge=2, le=50, description="every k-th DSSP file is held out for segment targets")
    n_segment_targets: int = Field(ge=0, le=20, description="held-out DSSP files that give one segment target each")
    max_train_examples: int = Field(ge=0, le=1_000_000, description="training segments kept at random; 0 = all")


class DenoiserParams(ParamsModel):
    """The equivariant denoiser (model.py) and its coordinate-space DDPM (diffusion.py)."""

    hidden: int = Field(ge=8, le=512, description="scalar channels per node")
    vec_channels: int = Field(ge=4, le=64, description="vector channels per node")
    n_layers: int = Field(ge=1, le=12, description="message-passing layers")
    diffusion_steps: int = Field(ge=5, le=2000, description="DDPM steps T (cosine schedule)")
    coord_scale: float = Field(gt=0.0, le=50.0, description="A per diffusion unit of the CA coordinates")


class TrainingParams(ParamsModel):
    """Adam on the DDPM loss with cosine learning-rate decay (diffusion.fit_denoiser), one network per training seed
    and variant."""

    seeds: list[int] = Field(min_length=1, max_length=32, description=(
        "training seeds: each variant trains one network per seed; both variants of a seed share its initialisation "
        "stream, minibatch order, DDPM-loss noise and design noise, so their designs pair by (seed, target, sample)"))
    steps: int = Field(ge=1, le=1_000_000, description="optimizer steps of each network (per seed)")
    batch_size: int = Field(ge=1, le=1024, description="training examples per step")
    lr: float = Field(gt=0.0, le=1.0, description="peak learning rate")


class DesignParams(ParamsModel):
    """Sampling designs on every held-out target and its mirror image (design.py)."""

    n_samples: int = Field(ge=1, le=256, description="designs per target and per hand of the target")
    refine_iters: int = Field(ge=1, le=2000, description="L-BFGS iterations of the chirality-neutral refinement")


class SeqHeadParams(ParamsModel):
    """The sequence head (seqhead.py) and its held-out evaluation (train_seq.py)."""

    steps: int = Field(ge=25, le=1_000_000, description="Adam steps at most (early-stopped on validation files)")
    lr: float = Field(gt=0.0, le=1.0, description="learning rate")
    seeds: int = Field(ge=1, le=10, description="heads trained with different seeds (metrics are their mean)")
    val_every: int = Field(ge=2, le=50, description="every k-th training source file is the validation set")
    n_bootstrap: int = Field(ge=100, le=100_000, description="cluster-bootstrap resamples of the held-out files")


class CertificateParams(ParamsModel):
    """Pass thresholds of the equivariance certificates (certificates.py)."""

    equiv_tol: float = Field(gt=0.0, le=1e-3, description="max relative equivariance error (float64) to pass")
    reflection_min_violation: float = Field(gt=0.0, le=1.0, description="axial must break f(Px)=Pf(x) by this much")


class QualityParams(ParamsModel):
    """In-silico quality of a design in its pocket (quality.py) and its backbone sanity window (geometry.py)."""

    clash_dist: float = Field(gt=0.0, le=10.0, description="heavy-atom pairs closer than this clash (A)")
    recovery_dist: float = Field(gt=0.0, le=20.0, description="a native CA is recovered by a design CA this close (A)")
    bond_min: float = Field(gt=0.0, le=3.0, description="shortest sane N-CA, CA-C, CA-CB bond (A)")
    bond_max: float = Field(gt=0.0, le=3.0, description="longest sane N-CA, CA-C, CA-CB bond (A)")
    max_peptide_bond: float = Field(gt=0.0, le=5.0, description="longest sane peptide bond C_i-N_i+1 (A)")


class ExportParams(ParamsModel):
    """Selection of the wet-lab candidates (selection.py)."""

    n_export: int = Field(ge=1, le=200, description="candidates exported in all")
    per_target: int = Field(ge=1, le=50, description="candidates exported per target at most")
    clash_penalty: float = Field(ge=0.0, le=1000.0, description="in-silico score = buried surface - this * clashes")
    max_rejected: int = Field(ge=0, le=200, description=(
        "ranked designs whose full-atom complex cannot be relaxed (a heavy-atom clash left, or the minimiser stopped "
        "above its tolerance) are rejected and replaced by the next ranked one; after more than this many "
        "rejections the export stops, the package stays short and fullatom_candidates_energy_checked fails"))


class FullAtomParams(ParamsModel):
    """Full-atom models of the exported candidates (fullatom.py): OpenMM amber14 in mirror space, mirrored back."""

    shell: float = Field(gt=4.0, le=30.0, description="receptor residues with a heavy atom this close to the "
                                                      "peptide backbone are modelled (A)")
    ph: float = Field(ge=0.0, le=14.0, description="pH of the protonation states (OpenMM Modeller)")
    cutoff_nm: float = Field(gt=0.5, le=3.0, description="nonbonded cutoff, reaction field beyond (nm)")
    restraint_k: float = Field(ge=0.0, le=1e6, description="harmonic restraint of receptor heavy atoms "
                                                           "(kJ/mol/nm^2)")
    min_tolerance: float = Field(gt=0.0, le=1000.0, description="minimiser stops below this RMS force "
                                                               "(kJ/mol/nm)")
    max_iterations: int = Field(ge=0, le=100_000, description="minimiser iterations at most (0 = until converged)")
    clash_overlap: float = Field(ge=0.0, le=2.0, description="heavy atoms closer than r_i + r_j - this clash (A)")
    hbond_dist: float = Field(gt=1.0, le=4.0, description="H-bond: hydrogen-acceptor distance below (A)")
    hbond_angle: float = Field(ge=90.0, le=180.0, description="H-bond: donor-H-acceptor angle above (degrees)")


class ClaimParams(ParamsModel):
    """Thresholds of the claims (claims.py): described, set in params.yaml, never tuned to make a claim pass."""

    native_hand_min: float = Field(ge=0.5, le=1.0, description=(
        "precondition: a denoiser's per-design L-residue ratio on native targets must stay above this, i.e. at most "
        "1 - native_hand_min below the majority (training) hand's 1.0 (0.5 would be a hand-agnostic sampler)"))
    clear_majority: float = Field(ge=0.5, le=1.0, description=(
        "evidence: the axial per-design L-residue ratio on mirrored targets must lie above this (the paper's 'clear "
        "majority' of the requested hand)"))
    quality_ratio_min: float = Field(gt=0.0, le=1.0, description=(
        "evidence 'axial at least as good': the ratio axial / polar of each quality mean (polar / axial for "
        "clashes), over (seed, target) units, must lie above this (a bar fixed before the run, not a fraction of "
        "the judged data's own mean)"))
    mirror_energy_rel_tol: float = Field(gt=0.0, le=1e-2, description="mirrored-back full-atom energy equals the "
                                                                      "mirror-space one to this relative precision "
                                                                      "(both in double precision)")


class Plans(ParamsModel):
    """Sample-size plans of the judged comparisons (paperdag.common.plans), declared before the run."""

    targets: SamplePlan = Field(description="intervals over (training seed, held-out target) units (every design of a "
                                "target by one seed's network is one unit: one network per variant, one pocket)")
    files: SamplePlan = Field(description="the sequence head's cluster-bootstrap intervals over held-out files")


class Params(ParamsModel):
    """Seed, data, denoiser, training, design, sequence head, certificates, quality, export, full-atom models,
    claim thresholds and sample-size plans."""

    seed: int = Field(ge=0, description="root of every random draw (stage RNGs and the shared design noise)")
    data: DataParams
    denoiser: DenoiserParams
    training: TrainingParams
    design: DesignParams
    seqhead: SeqHeadParams
    contact_dist: float = Field(gt=0.0, le=30.0, description="CB-CB contact cutoff of the contacts score (A)")
    certificate: CertificateParams
    quality: QualityParams
    export: ExportParams
    fullatom: FullAtomParams
    claims: ClaimParams
    plans: Plans

    @model_validator(mode="after")
    def _design(self) -> Params:
        if self.data.seg_min_len > self.data.seg_max_len:
            raise ValueError("data.seg_min_len must not exceed data.seg_max_len")
        if self.data.min_pocket > self.data.pocket_max:
            raise ValueError("data.min_pocket must not exceed data.pocket_max")
        if self.quality.bond_min >= self.quality.bond_max:
            raise ValueError("quality.bond_min must be below quality.bond_max")
        if len(set(self.training.seeds)) != len(self.training.seeds):
            raise ValueError("training.seeds must be distinct")
        if self.plans.targets.n != len(self.training.seeds) * (N_REAL_TARGETS + self.data.n_segment_targets):
            raise ValueError(f"plans.targets.n must be len(training.seeds) x ({N_REAL_TARGETS} + "
                             "data.n_segment_targets): every (training seed, held-out target) pair is one unit")
        return self
