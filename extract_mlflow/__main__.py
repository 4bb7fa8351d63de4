"""`python -m extract_mlflow` runs the CLI."""

from .cli import main

main(prog_name="extract-mlflow")
