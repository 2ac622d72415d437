"""What the agent asked the user through a tool, and what the user chose.

Claude Code's AskUserQuestion answers in prose ("User has answered your questions: "Which
rig …?"="No rig""), which the summary keeps verbatim. Cursor's `ask_question` answers with option
ids (`{"answers": [{"questionId": "delete_scope", "selectedOptionIds": ["local"]}]}`), which name
nothing without the question's options; Codex's `request_user_input` records no answer at all,
and writes its questions as Go maps (`[map[header:… question:Which mode …?]]`). Either way the
user's choice constrains the work, so each question travels with what was chosen, in the user's
options' own words: `Asked: Which scope? → local folder (/data/x)`.
"""

from __future__ import annotations

import json
import re

_GO_QUESTION = re.compile(r"\b(?:question|prompt):([^\[\]]+)")
MAX_DEPTH = 8  # questions sit a level or three down; a hostile nesting is not walked


def asked(arguments: dict) -> list[tuple[str, str, dict[str, str]]]:
    """(id, question, {option id: label}) for each question in a tool call's arguments."""
    out: list[tuple[str, str, dict[str, str]]] = []

    def walk(value, depth: int = 0) -> None:
        if depth > MAX_DEPTH:
            return
        if isinstance(value, dict):
            text = value.get("question") or value.get("prompt")
            if isinstance(text, str) and text.strip():
                options = [o for o in value.get("options") or [] if isinstance(o, dict)]
                labels = {str(o.get("id") or o.get("label")): str(o.get("label") or o.get("id")) for o in options}
                out.append((str(value.get("id") or ""), " ".join(text.split()), labels))
                return
            for v in value.values():
                walk(v, depth + 1)
        elif isinstance(value, list):
            for v in value:
                walk(v, depth + 1)
        elif isinstance(value, str) and value.strip()[:1] in "[{":
            try:
                walk(json.loads(value), depth + 1)
            except (ValueError, RecursionError):  # not JSON: Codex's Go-formatted maps
                out.extend(("", " ".join(m.group(1).split()), {}) for m in _GO_QUESTION.finditer(value))

    walk(arguments)
    return out


# keys an answer's picks are under (Cursor's `selectedOptionIds`), never what was offered
# (Hermes's `choices_offered`), and keys its free text is under (Cursor's `freeformText`,
# Hermes's `user_response`, Codex's `answers`)
_PICK_KEY = re.compile(r"^(?!.*(?:offered|available)).*(?:select|chosen|choice|option)", re.I)
_FREE_KEY = re.compile(r"^(?:freeform_?text|text|answers?|(?:user_)?response)$", re.I)


def _picked(answer) -> list[str]:
    """What one answer chose or typed: option ids, labels or free text, as the tool gave them."""
    if isinstance(answer, str):
        return [answer.strip()] if answer.strip() else []
    if isinstance(answer, list):
        return [str(a).strip() for a in answer if isinstance(a, (str, int)) and str(a).strip()]
    if not isinstance(answer, dict):
        return []
    picks = next((v for k, v in answer.items() if _PICK_KEY.search(k) and isinstance(v, list)), [])
    free = next((v for k, v in answer.items() if _FREE_KEY.search(k) and isinstance(v, (str, list))), "")
    return _picked(picks) + _picked(free)


def chosen(result: str) -> dict[str, list[str]] | None:
    """Question id (or its position, as text) -> the option ids or free text the user gave, from
    a tool's JSON answer; None when the answer is no such JSON (prose, or nothing). The shapes:
    a list of answers (Cursor's `{"answers": [{"questionId", "selectedOptionIds"}]}`, Hermes's
    `{"responses": [{"question", "user_response"}]}`), a map from question id to its answer
    (Codex's `{"answers": {"mode": {"answers": ["macOS native"]}}}`), or one answer (Hermes's
    `clarify`: `{"question", "choices_offered", "user_response"}`)."""
    try:
        data = json.loads(result)
    except (ValueError, RecursionError):
        return None
    answers = data
    if isinstance(data, dict):
        answers = data.get("answers") or data.get("responses")
        if answers is None and any(_FREE_KEY.search(k) for k in data):
            answers = [data]
    if isinstance(answers, dict):
        return {str(k): _picked(v) for k, v in answers.items()}
    if not isinstance(answers, list):
        return None
    out: dict[str, list[str]] = {}
    for i, a in enumerate(x for x in answers if isinstance(x, dict)):
        key = str(a.get("questionId") or a.get("question_id") or a.get("id") or i)
        out[key] = _picked(a)
    return out


def asked_and_chosen(arguments: dict, result: str) -> list[str]:
    """`Asked: question → the labels chosen` per question, or `Asked: question` when the
    transcript holds no answer; [] when the answer is prose (kept verbatim as it is)."""
    questions = asked(arguments)
    picks = chosen(result) if result.strip() else {}
    if picks is None or not questions:
        return []
    lines = []
    for i, (qid, text, labels) in enumerate(questions):
        got = picks.get(qid) or picks.get(str(i)) or []
        answer = "; ".join(labels.get(p, p) for p in got)
        lines.append(f"Asked: {text} → {answer}" if answer else f"Asked: {text}")
    return lines
