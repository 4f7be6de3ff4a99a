"""Generated docs pictures are current: their inputs did not change since they were drawn
(issue 25 §9; the default run's lint session fails otherwise)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import docs_pictures
from docs_pictures import PICTURES, ROOT, stale, write


def test_every_generated_picture_is_current() -> None:
    assert stale(ROOT) == []


def test_a_changed_input_makes_the_picture_stale_until_it_is_recorded(tmp_path: Path) -> None:
    picture = PICTURES["ui-example"]
    for relative in (*picture.inputs, picture.path, f"{picture.path}.inputs"):
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / relative, tmp_path / relative)
    assert stale(tmp_path) == []
    changed = tmp_path / picture.inputs[-1]
    changed.write_text(changed.read_text("utf-8") + "\n# a change\n", "utf-8")
    (problem,) = stale(tmp_path)
    assert picture.inputs[-1] in problem
    assert picture.session in problem
    write(tmp_path, "ui-example")
    assert stale(tmp_path) == []
    (tmp_path / f"{picture.path}.inputs").unlink()
    assert "no ui-example.png.inputs" in stale(tmp_path)[0]
    assert docs_pictures.main(["x", "--nothing"]) == 2
