"""A tiny four-stage pipeline the platform tests run: prepare -> (train_a, train_b) -> evaluate."""
