"""Templates as data files (templates/<job>[.<lang>].yaml): the question the model answers by
choosing, never by writing.

Each template fixes the instructions for one job and how many sentences it picks, so the prompt
wording can be tuned without touching code. Fixed text goes first in the prompt and the variable
content last, so the engine's prefix cache covers the instructions on every pass.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

import yaml

MAX_CHOICES = 9  # numbered 1-9: each answer is one token, read off one prefill's logits
CHOICE_CHARS = 240  # a long sentence is shown clipped (it is still copied whole)


@dataclass(frozen=True)
class Template:
    job: str
    system: str
    user: str
    pick: int = 1  # sentences chosen per model call

    def messages(self, content: str, choices: list[str]) -> list[dict]:
        user = self.user.replace("{choices}", listing(choices)).replace("{content}", content)
        user = re.sub(r"\n{3,}", "\n\n", user).strip("\n")
        return [{"role": "system", "content": self.system}, {"role": "user", "content": user}]


def listing(choices: list[str]) -> str:
    """The candidates as the model sees them: numbered from 1, one a line, long ones clipped."""
    shown = [c if len(c) <= CHOICE_CHARS else c[: CHOICE_CHARS - 1].rsplit(" ", 1)[0] + "…" for c in choices]
    return "\n".join(f"{i}. {' '.join(c.split())}" for i, c in enumerate(shown, 1))


def labels(n: int) -> list[str]:
    """The answers scored for n candidates ("1" .. "n")."""
    return [str(i) for i in range(1, min(n, MAX_CHOICES) + 1)]


@lru_cache(maxsize=32)
def load_template(job: str, lang: str = "") -> Template:
    """The template for a job in a language, falling back to the default (English) one."""
    folder = resources.files("hermes_mlx.summarizer") / "templates"
    for name in ([f"{job}.{lang}.yaml"] if lang else []) + [f"{job}.yaml"]:
        path = folder / name
        if path.is_file():
            data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
            return Template(
                job=data.get("job", job),
                system=str(data["system"]).strip(),
                user=str(data["user"]),
                pick=max(1, int(data.get("pick", 1))),
            )
    raise FileNotFoundError(f"no summarizer template for job {job!r}")
