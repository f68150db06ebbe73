"""The Prefect task layer: one Prefect task per stage execution (retries, naming, tracking around a stage)."""
