"""The MLflow integration (the only package that imports mlflow)."""
