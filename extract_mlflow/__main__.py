"""`python -m extract_mlflow` runs the CLI; so does the `extract-mlflow` script (:func:`run`)."""

from .cli import main


def run() -> None:
    """The CLI (the `extract-mlflow` script)."""
    main(prog_name="extract-mlflow")


if __name__ == "__main__":
    run()
