"""`python -m extract_mlflow` runs the CLI; so does the `extract-mlflow` script (:func:`run`)."""

from .cli import main
from .core.runtime import exit_now


def run() -> None:
    """The CLI, then a quick exit (:func:`~extract_mlflow.core.runtime.exit_now`) with its
    status."""
    try:
        main(prog_name="extract-mlflow")
    except SystemExit as exc:
        exit_now(exc.code)


if __name__ == "__main__":
    run()
