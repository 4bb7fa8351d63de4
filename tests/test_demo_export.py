"""`demo --export DIR` copies the invoice example so a user can start from it."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from extract_mlflow.cli import main

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "invoices"


def files_under(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_export_copies_the_example_byte_for_byte(tmp_path: Path) -> None:
    dest = tmp_path / "start" / "here"
    result = CliRunner().invoke(main, ["demo", "--export", str(dest)])
    assert result.exit_code == 0, result.output
    assert files_under(dest) == files_under(EXAMPLE)
    assert "sources/inv-001.txt" in files_under(dest)
    assert f"extract-mlflow score {dest}/gold.jsonl" in result.output


def test_the_copy_scores_like_the_example(tmp_path: Path) -> None:
    dest = tmp_path / "copy"
    assert CliRunner().invoke(main, ["demo", "--export", str(dest)]).exit_code == 0
    outputs = []
    for folder in (EXAMPLE, dest):
        args = ["score", str(folder / "gold.jsonl"), str(folder / "pred_baseline.jsonl")]
        args += ["--config", str(folder / "config.toml"), "--sources", str(folder / "sources")]
        result = CliRunner().invoke(main, [*args, "--no-log", "--format", "json"])
        assert result.exit_code == 0, result.output
        data = json.loads(result.stdout)
        outputs.append(data)
    for key in ("micro", "fields", "fidelity", "metrics", "signature", "worst_documents"):
        assert outputs[0][key] == outputs[1][key], key


def test_export_never_overwrites(tmp_path: Path) -> None:
    dest = tmp_path / "mine"
    dest.mkdir()
    (dest / "config.toml").write_text("# my own config\n")
    result = CliRunner().invoke(main, ["demo", "--export", str(dest)])
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        f"error: {dest / 'config.toml'}: already exists; export into an empty or new folder"
    ]
    assert (dest / "config.toml").read_text() == "# my own config\n"
    assert sorted(p.name for p in dest.iterdir()) == ["config.toml"]  # nothing else copied


def test_export_onto_a_file_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "a-file"
    target.write_text("x")
    result = CliRunner().invoke(main, ["demo", "--export", str(target), "--format", "json"])
    assert result.exit_code == 2
    assert result.stderr.strip() == f"error: {target}: exists and is not a folder"
    assert "Traceback" not in result.output


def test_export_json_lists_the_files(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["demo", "--export", str(tmp_path / "j"), "--format", "json"])
    listed = json.loads(result.stdout)["exported"]
    assert len(listed) == len(files_under(EXAMPLE))
    assert all(Path(p).is_file() for p in listed)


def test_an_installed_wheel_carries_every_file_of_the_example() -> None:
    """pyproject's data-files (what `pip install .` puts under share/) cover the folder."""
    import tomllib

    root = EXAMPLE.parents[1]
    data = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["data-files"]
    listed = {
        str(p.relative_to(EXAMPLE))
        for dest, patterns in data.items()
        if dest.startswith("share/extract-mlflow/examples/invoices")
        for pattern in patterns
        for p in root.glob(pattern)
    }
    assert listed == set(files_under(EXAMPLE))
