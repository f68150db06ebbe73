"""The vector_lyapunov DAG: prepare -> {train_<system> -> verify_<system>} for the two network systems, and for the
platoon train_<domain> -> verify / verify_full, train_uncert, train_monolithic -> verify_monolithic; all ->
evaluate. Imported only by the registry (stage functions are named as strings: no torch here)."""

from paperdag.dag import Pipeline, Resources, Stage

from .params import Params

SYSTEMS = ("drones", "microgrid")  # network systems: one train and one verify function each, fanned out by args
DOMAINS = {"reach": "verify", "full": "verify_full"}  # platoon delay domain -> its verify stage
NETWORKS = ("dt", "networks", "delays")
CERT_FOLDER = ("weights.safetensors", "meta.json", "cells.parquet", "counterexamples.parquet", "summary.json")
ONE = Resources(cpus=1)

PIPELINE = Pipeline(
    slug="vector_lyapunov",
    title="Neural vector Lyapunov-Razumikhin certificates for delayed interconnected systems",
    headline=("network_certificates_verified", "c_0", "gamma_max"),
    params_model=Params,
    reverify="reverify:reverify",
    stages=(
        Stage("prepare", "prepare", "stages.prepare:prepare", params=("dt", "platoon", "networks"),
              outputs=("platoon.json", "networks.json"), resources=ONE),
        *(Stage(f"train_{system}", "train", "stages.train_network:train", upstream=("prepare",),
                params=(*NETWORKS, "network_certificate", "network_cegis"), outputs=("certificates", "train.json"),
                resources=ONE, args={"system": system}) for system in SYSTEMS),
        *(Stage(f"verify_{system}", "verify", "stages.verify_network:verify", upstream=("prepare", f"train_{system}"),
                params=(*NETWORKS, "network_budget"), outputs=("certificates", "summary.json", "lmi.json"),
                resources=ONE, args={"system": system}) for system in SYSTEMS),
        *(Stage(f"train_{domain}", "train", "stages.train_vector:train", upstream=("prepare",),
                params=("certificate", "policy", "learner", "cegis"), outputs=("weights.safetensors", "train.json"),
                resources=ONE, args={"domain": domain}) for domain in DOMAINS),
        Stage("train_uncert", "train", "stages.train_uncertified:train", upstream=("prepare",),
              params=("policy", "learner", "uncertified"), outputs=("policy.safetensors",), resources=ONE),
        Stage("train_monolithic", "train", "stages.train_monolithic:train", upstream=("prepare", "train_reach"),
              params=("monolithic", "certificate", "learner"), outputs=("monolithic.safetensors",), resources=ONE),
        *(Stage(verify, "verify", "stages.verify_vector:verify", upstream=("prepare", f"train_{domain}"),
                params=("budget",), outputs=CERT_FOLDER, resources=ONE, args={"domain": domain})
          for domain, verify in DOMAINS.items()),
        Stage("verify_monolithic", "verify", "stages.verify_monolithic:verify",
              upstream=("prepare", "train_reach", "train_monolithic"), params=("monolithic", "certificate", "budget"),
              outputs=("monolithic.json",), resources=ONE),
        Stage("evaluate", "evaluate", "stages.evaluate:evaluate",
              upstream=("train_uncert", "verify", "verify_full", "verify_monolithic",
                        *(f"verify_{system}" for system in SYSTEMS)),
              params=("platoon", "policy", "networks", "delays", "evaluation", "claims"),
              outputs=("metrics.json", "scaling.parquet", "monolithic.parquet", "control.parquet",
                       "verification_scaling.png", "control_performance.png", "network_certificates.png"),
              plots=("verification_scaling.png", "control_performance.png", "network_certificates.png"),
              resources=ONE),
    ),
)
