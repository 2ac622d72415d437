"""Where hermes-mlx keeps what it fetches and converts: one folder the user can find and delete."""

from __future__ import annotations

import os
from pathlib import Path


def home() -> Path:
    """`$HERMES_MLX_HOME`, else the user's cache folder (e.g. ~/.cache/hermes-mlx, ~/Library/Caches/hermes-mlx)."""
    env = os.environ.get("HERMES_MLX_HOME")
    if env:
        path = Path(env).expanduser()
    else:
        from platformdirs import user_cache_dir

        path = Path(user_cache_dir("hermes-mlx", appauthor=False))
    path.mkdir(parents=True, exist_ok=True)
    return path


def models_dir() -> Path:
    path = home() / "models"
    path.mkdir(parents=True, exist_ok=True)
    return path
