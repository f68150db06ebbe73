"""Prefect flows derived from the pipeline declarations: papers' DAGs, and deployments with schedules."""
