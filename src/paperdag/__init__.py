"""paperdag: research papers as cached, versioned pipelines (Prefect + Ray + DVC + MLflow)."""

__version__ = "0.1.0"
