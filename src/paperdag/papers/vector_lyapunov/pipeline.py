"""The vector_lyapunov DAG: prepare -> {train_<system> -> verify_<system> -> verify_quadratic_<system>,
train_mono_<system> -> verify_mono_<system>, train_<system> -> verify_ring_<system>, control_<system>} for the two
network systems, and for the platoon train_<domain> -> verify / verify_full and train_uncert; all -> evaluate.
Imported only by the registry (stage functions are named as strings: no torch here)."""

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
    headline=("network_certificates_verified", "network_delays_proved", "c_0"),
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
        *(Stage(f"verify_quadratic_{system}", "verify", "stages.verify_quadratic:verify",
                upstream=("prepare", f"train_{system}", f"verify_{system}"),
                params=(*NETWORKS, "network_budget", "quadratic"),
                outputs=("quadratic.json",), resources=ONE, args={"system": system}) for system in SYSTEMS),
        *(Stage(f"train_mono_{system}", "train", "stages.train_mono_network:train", upstream=("prepare",),
                params=(*NETWORKS, "network_certificate", "network_cegis", "monolithic"),
                outputs=("monolithic.safetensors",), resources=ONE, args={"system": system}) for system in SYSTEMS),
        *(Stage(f"verify_mono_{system}", "verify", "stages.verify_mono_network:verify",
                upstream=("prepare", f"train_{system}", f"train_mono_{system}"),
                params=(*NETWORKS, "network_certificate", "network_budget", "monolithic"),
                outputs=("monolithic.json",), resources=ONE, args={"system": system}) for system in SYSTEMS),
        *(Stage(f"verify_ring_{system}", "verify", "stages.verify_ring_network:verify",
                upstream=("prepare", f"train_{system}"),
                params=(*NETWORKS, "network_budget", "monolithic", "ring"),
                outputs=("ring.json",), resources=ONE, args={"system": system}) for system in SYSTEMS),
        *(Stage(f"control_{system}", "train", "stages.control_network:control", upstream=("prepare",),
                params=(*NETWORKS, "network_certificate", "network_cegis", "network_budget", "network_control",
                        "evaluation"),
                outputs=("control.json", "certificates"), resources=ONE, args={"system": system})
          for system in SYSTEMS),
        *(Stage(f"train_{domain}", "train", "stages.train_vector:train", upstream=("prepare",),
                params=("certificate", "policy", "learner", "cegis"), outputs=("weights.safetensors", "train.json"),
                resources=ONE, args={"domain": domain}) for domain in DOMAINS),
        Stage("train_uncert", "train", "stages.train_uncertified:train", upstream=("prepare",),
              params=("policy", "learner", "uncertified"), outputs=("policy.safetensors",), resources=ONE),
        *(Stage(verify, "verify", "stages.verify_vector:verify", upstream=("prepare", f"train_{domain}"),
                params=("budget",), outputs=(*CERT_FOLDER, "timing.json"), resources=ONE, args={"domain": domain})
          for domain, verify in DOMAINS.items()),
        Stage("evaluate", "evaluate", "stages.evaluate:evaluate",
              upstream=("prepare", "train_uncert", "verify", "verify_full", *(f"train_{system}" for system in SYSTEMS),
                        *(f"verify_{system}" for system in SYSTEMS),
                        *(f"verify_quadratic_{system}" for system in SYSTEMS),
                        *(f"verify_mono_{system}" for system in SYSTEMS),
                        *(f"verify_ring_{system}" for system in SYSTEMS), *(f"control_{system}" for system in SYSTEMS)),
              params=("dt", "platoon", "policy", "networks", "delays", "monolithic", "evaluation", "ladder", "cascade",
                      "claims", "plans"),
              outputs=("metrics.json", "scaling.parquet", "monolithic.parquet", "control.parquet",
                       "network_control.parquet",
                       "verification_scaling.png", "control_performance.png", "network_certificates.png"),
              plots=("verification_scaling.png", "control_performance.png", "network_certificates.png"),
              resources=ONE),
    ),
)
