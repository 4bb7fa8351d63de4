"""docs/screenshots.py retakes the README's pictures (MLflow UI, comparison page): the names it
writes are the ones the README shows, and (slow, needs Chromium) a full take writes every PNG at
its window size and leaves no server process behind."""

from __future__ import annotations

import importlib.util
import re
import shutil
import struct
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "docs" / "screenshots.py"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_screenshots", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", f"{path.name} is not a PNG"
    width, height = struct.unpack(">II", head[16:24])
    return int(width), int(height)


def test_the_script_takes_the_pictures_the_readme_shows() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    shown = set(re.findall(r"!\[[^\]]*\]\(docs/([\w-]+\.png)\)", readme))
    shots = {shot.name: shot for shot in load_script().SHOTS}
    assert shown and shown == set(shots)
    for name, shot in shots.items():
        assert png_size(ROOT / "docs" / name) == shot.window
    assert "docs/screenshots.py" in readme
    documented = (ROOT / "docs" / "screenshots.md").read_text(encoding="utf-8")
    assert all(f"`{name}`" in documented for name in shots)


def _processes_with(text: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if text in cmdline:
                found.append(int(entry.name))
    return found


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed")
def test_a_full_take_writes_every_png_and_stops_the_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = load_script()
    ports: list[int] = []
    free_port = script.free_port

    def recording_port() -> int:
        ports.append(free_port())
        return ports[-1]

    monkeypatch.setattr(script, "free_port", recording_port)
    assert script.main(["--out", str(tmp_path), "--chromium", str(CHROMIUM)]) == 0
    for shot in script.SHOTS:
        path = tmp_path / shot.name
        assert png_size(path) == shot.window
        assert path.stat().st_size > 50_000, f"{shot.name} looks blank"
    (port,) = ports
    assert _processes_with(f"--port {port} ") == []
