"""The vectors a publisher's inputs ship beside their model: read back only for that model, and a
file that cannot be used costs only the embedding it would have saved."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ask.dense.cache import read_shipped, write_shipped
from ask.dense.encoder import DIMENSIONS

RNG = np.random.default_rng(7)


def vectors(count: int) -> dict[str, np.ndarray]:
    return {f"{n:064x}": RNG.normal(size=DIMENSIONS).astype(np.float32) for n in range(count)}


def test_shipped_vectors_come_back_exactly_for_the_model_that_made_them(tmp_path: Path):
    made = vectors(5)
    write_shipped(tmp_path / "vectors.npz", "model-a", made)
    back = read_shipped(tmp_path / "vectors.npz", "model-a")
    assert back.keys() == made.keys()
    assert all(np.array_equal(back[sha], made[sha]) for sha in made)
    assert read_shipped(tmp_path / "vectors.npz", "model-b") == {}


def test_a_missing_or_damaged_file_ships_nothing(tmp_path: Path):
    assert read_shipped(tmp_path / "absent.npz", "model-a") == {}
    (tmp_path / "damaged.npz").write_bytes(b"not a zip file")
    assert read_shipped(tmp_path / "damaged.npz", "model-a") == {}


def test_writing_leaves_no_partial_file_behind(tmp_path: Path):
    write_shipped(tmp_path / "vectors.npz", "model-a", vectors(2))
    assert sorted(path.name for path in tmp_path.iterdir()) == ["vectors.npz"]
