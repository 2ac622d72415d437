"""Templates as data files (templates/<job>[.<lang>].yaml), and reading the model's bullets.

Each template fixes the instructions, the output cap and the stop strings for one job, so the
prompt wording can be tuned without touching code. Fixed text goes first in the prompt and the
variable content last, so the engine's prefix cache covers the instructions on every pass.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources

import yaml


@dataclass(frozen=True)
class Template:
    job: str
    system: str
    user: str
    max_tokens: int = 64
    max_lines: int = 3
    stop: tuple = ("\n\n",)
    focus: str = ""
    extra: dict = field(default_factory=dict)

    def messages(self, content: str, focus: str | None = None) -> list[dict]:
        focus_line = self.focus.format(focus=focus) if focus and self.focus else ""
        user = self.user.replace("{focus}", focus_line).replace("{content}", content)
        user = re.sub(r"\n{3,}", "\n\n", user)
        return [{"role": "system", "content": self.system}, {"role": "user", "content": user}]


@lru_cache(maxsize=32)
def load_template(job: str, lang: str = "") -> Template:
    """The template for a job in a language, falling back to the default (English) one."""
    folder = resources.files("hermes_mlx.summarizer") / "templates"
    for name in ([f"{job}.{lang}.yaml"] if lang else []) + [f"{job}.yaml"]:
        path = folder / name
        if path.is_file():
            data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
            known = {"job", "system", "user", "max_tokens", "max_lines", "stop", "focus"}
            return Template(
                job=data.get("job", job),
                system=str(data["system"]).strip(),
                user=str(data["user"]),
                max_tokens=int(data.get("max_tokens", 64)),
                max_lines=int(data.get("max_lines", 3)),
                stop=tuple(data.get("stop") or ("\n\n",)),
                focus=str(data.get("focus") or ""),
                extra={k: v for k, v in data.items() if k not in known},
            )
    raise FileNotFoundError(f"no summarizer template for job {job!r}")


_LEAD = re.compile(r"^\s*(?:[-*+•]|\d+[.)]|#+)\s*")
_TAG = re.compile(r"^\[?(?:USER|ASSISTANT|TOOL|SYSTEM|User|Assistant|Output|Ran|Note|Tool)\b[^:\]]*\]?:")
_META = re.compile(r"^(?:the result (?:of this step )?(?:was|is)(?: that)?|in this step,?|this step (?:was|is)|answer:|summary:)\s*", re.I)


def read_bullets(text: str, *, cut: bool, max_lines: int) -> list[str]:
    """The model's output as bullet texts. A result cut at the cap (`cut`) loses its unfinished
    tail (never used as-is); label lines ("Notes:") and repeats are dropped."""
    lines = (text or "").replace("\r", "").split("\n")
    if cut:  # drop the unfinished tail: the last line, or the last line's unfinished sentence
        last = lines.pop()
        ends = [m.end() for m in re.finditer(r"[.!?。！？](?=\s|$)", last)]
        if ends:
            lines.append(last[: ends[-1]])
    out: list[str] = []
    for line in lines:
        if line.strip().startswith("```") or _TAG.match(line.strip()):
            break  # the model started copying the transcript or writing code: stop reading
        item = _LEAD.sub("", line).strip().strip("*").strip()
        if not item or (item.endswith(":") and len(item) < 40):
            continue
        for sentence in re.split(r"(?<=[.!?。！？])\s+(?=[A-Z`\[(\"'])", item):
            sentence = _META.sub("", sentence.strip())
            if sentence and sentence[0].islower() and sentence != item:
                sentence = sentence[0].upper() + sentence[1:]
            if sentence and sentence not in out:
                out.append(sentence)
        if len(out) >= max_lines:
            break
    return out[:max_lines]
