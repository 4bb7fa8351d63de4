"""List alignment imports scipy only when the Hungarian algorithm actually runs: importing
scipy.optimize costs ~0.2 s, a large share of a short `score`, and most lists are settled by
identical pairs or the optimality certificate."""

from __future__ import annotations

import json
import subprocess
import sys

_PROBE = """
import json, sys
from extract_mlflow.fields.align import assign
seen = ["scipy.optimize" in sys.modules]
certified = assign([[1.0, 0.2], [0.1, 0.9]], 0.5)
seen.append("scipy.optimize" in sys.modules)
hungarian = assign([[0.9, 0.8], [0.8, 0.1]], 0.0)  # both rows prefer column 0
seen.append("scipy.optimize" in sys.modules)
print(json.dumps([seen, certified, hungarian]))
"""


def test_scipy_is_imported_only_for_the_hungarian_algorithm() -> None:
    out = subprocess.run(
        [sys.executable, "-c", _PROBE], capture_output=True, text=True, check=True
    ).stdout
    seen, certified, hungarian = json.loads(out)
    assert seen == [False, False, True]
    assert certified == [[0, 0], [1, 1]]
    assert hungarian == [[0, 1], [1, 0]]
