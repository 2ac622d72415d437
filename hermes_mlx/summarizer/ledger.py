"""The fact ledger: exact strings that must survive compaction, extracted and merged by code.

A 135M model paraphrases paths, drops exit codes and invents test names; so files, commands with
their exit status, error lines, URLs, identifiers and the user's own constraints never pass
through it. They are pulled from the full (untrimmed, redacted) text here, de-duplicated, and an
error moves to `resolved` once a later run of the same command or test passes.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from .text import Turn

# ---------------------------------------------------------------- patterns

_EXTS = (
    "py pyi pyx ipynb js mjs cjs ts tsx jsx vue svelte md mdx rst txt json jsonl yaml yml toml cfg ini "
    "conf env sh bash zsh fish ps1 bat rs go c h cc cpp hpp cxx java kt kts scala rb php html htm css scss "
    "less sql lock log csv tsv xml gradle swift m mm tf hcl proto lua pl r dart zig nix cs ex exs erl hs ml "
    "mk cmake gz zip tar tgz whl so dylib dll png jpg jpeg gif svg pdf db sqlite pem crt key patch diff "
    "safetensors gguf bin onnx pt pth npz npy parquet service timer plist xcconfig"
).split()
_SPECIAL_FILES = {"Makefile", "Dockerfile", "Containerfile", "Justfile", "Procfile", "Gemfile", "Rakefile", "LICENSE", "Vagrantfile"}
_NOT_PATHS = {"and/or", "input/output", "read/write", "true/false", "yes/no", "w/o", "n/a", "i/o", "tcp/ip", "client/server", "on/off", "either/or", "he/she", "s/he"}
_PATH = re.compile(
    r"(?<![\w/.@:=\-])("
    r"(?:~|\.{1,2})?/?(?:[\w.@+\-]+/)+[\w@+\-][\w.@+\-]*/?"  # has a slash
    r"|[\w@+\-][\w.@+\-]*\.(?:" + "|".join(_EXTS) + r")"  # bare name with a known extension
    r"|" + "|".join(sorted(_SPECIAL_FILES)) + r")"
    r"(?=$|[\s`'\",;:)\]}>!?]|\.(?:\s|$))"
)
_URL = re.compile(r"\b(?:https?|ftp|wss?)://[^\s<>\"'`)\]}]+")
_ISSUE = re.compile(r"(?<![\w&#/!])(?:[#!]\d{1,6}|(?:GH|PR|gh|pr)-\d{1,6})\b")
_JIRA = re.compile(r"\b([A-Z][A-Z0-9]{1,9})-\d{1,6}\b")
_JIRA_STOP = {"UTF", "SHA", "ISO", "X", "GPT", "BASE", "TLS", "SSL", "IPV", "P", "V", "HTTP", "CP", "LATIN", "MD", "AES", "RSA", "ECDSA", "PEP"}
_HEX = re.compile(r"(?<![\w\-])[0-9a-f]{7,40}(?![\w\-])")
_VERSION = re.compile(r"(?<![\w.\-])(?:v|go)?\d+\.\d+\.\d+(?:[\-+][0-9A-Za-z]+(?:\.[0-9A-Za-z]+)*)?(?!\w|\.\d)")
_UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")
_ERROR_LINE = re.compile(
    r"^(?:FAILED|ERROR)\s+\S"
    r"|\b[A-Z][A-Za-z0-9_]*(?:Error|Exception|Failure|Exit)\b(?::|$)"
    r"|^\s*(?:error|fatal|panic|FATAL|ERROR|Error)(?:\[[\w\-]+\])?:"
    r"|npm ERR!"
    r"|:\d+(?::\d+)?:\s*(?:fatal )?error\b"
    r"|\bHTTP(?:/[\d.]+)?\s+[45]\d\d\b|\bstatus(?: code)?[:= ]+[45]\d\d\b"
    r"|command not found|No such file or directory|Permission denied|Segmentation fault"
    r"|\bTraceback \(most recent call last\)"
    r"|^WARNING: DATA RACE|^--- FAIL:|^FAIL\s|^\s*[\w./\-]+_test\.go:\d+:"
)
_TEST_ID = re.compile(r"([\w./\-]+\.py::[\w\[\]\-.:,]+)")
_EXIT_TEXT = re.compile(
    r"(?:exit(?:ed)?(?: with)?(?: code| status)?[:= ]+|returned non-zero exit status |\[exit(?: code)? |exit_code[\"']?\s*[:=]\s*|returncode[\"']?\s*[:=]\s*)(-?\d{1,3})\b",
    re.I,
)
_DIRECTIVE = re.compile(
    r"\b(?:don'?t|do not|never|always|must|mustn'?t|should(?:n'?t)?|make sure|ensure|avoid|only|instead|"
    r"prefer|keep|use|no need|without|required?|stick to|not allowed|please|no|not|leave|go with|let'?s|we|"
    r"rather|want|need|fine|frozen|until|approved?|yes|ok|okay|go ahead)\b"
    r"|不要|别|必须|一定|务必|请|只能|保留|不能|禁止|しないで|必ず|ください|だけ|禁止",
    re.I,
)
_NOISE_PATH = ("site-packages/", "dist-packages/", "/usr/lib/", "/proc/", "node_modules/", ".venv/", "/lib/python", "<frozen")
_FILE_KEYS = ("path", "file_path", "filepath", "filename", "file", "target_file", "old_path", "new_path", "dest", "destination", "source")
_ACTION_RANK = {"mentioned": 0, "read": 1, "edited": 2, "created": 3, "deleted": 3}


def _clip(text: str, n: int = 240) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def find_paths(text: str) -> list[str]:
    """Path-like tokens in text (URLs removed first)."""
    text = _URL.sub(" ", text or "")
    out = []
    for m in _PATH.finditer(text):
        p = m.group(1).rstrip(".")
        low = p.lower()
        if low in _NOT_PATHS or not re.search(r"[A-Za-z]", p) or "//" in p:
            continue
        if "/" in p and not re.search(r"\.[A-Za-z]\w*/?$|^[~./]", p) and any(seg.isdigit() for seg in p.split("/")):
            continue  # dates and fractions like 2026/11/27
        if p not in out:
            out.append(p)
    return out


def find_urls(text: str) -> list[str]:
    out = []
    for m in _URL.finditer(text or ""):
        url = m.group(0).rstrip(".,;:!?*_")
        if url not in out:
            out.append(url)
    return out


def find_ids(text: str, *, strict: bool = False) -> list[str]:
    """Issue refs, ticket keys, UUIDs, commit hashes and versions. `strict` is for tool output:
    hashes only on git-looking lines and no versions, since logs are full of both."""
    text = text or ""
    out: list[str] = []

    def add(x: str) -> None:
        if x not in out:
            out.append(x)

    for m in _ISSUE.finditer(text):
        add(m.group(0))
    for m in _JIRA.finditer(text):
        if m.group(1) not in _JIRA_STOP:
            add(m.group(0))
    for m in _UUID.finditer(text):
        add(m.group(0))
    for line in text.splitlines() if strict else [text]:
        if strict and not re.search(r"\bcommit\b|^\[[\w./\-]+ [0-9a-f]{7,}\]|^[0-9a-f]{7,40} |\bHEAD\b|\bmerge\b", line, re.I):
            continue
        for m in _HEX.finditer(line):
            h = m.group(0)
            if re.search(r"\d", h) and re.search(r"[a-f]", h) and not any(h in u for u in out):
                add(h)
    for line in text.splitlines() if strict else [text]:
        if strict and not re.search(r"\bversion\b|\binstalled\b|\bupgraded?\b|\bbump", line, re.I):
            continue
        for m in _VERSION.finditer(line):
            add(m.group(0))
    return out


def exit_status(result: str) -> int | None:
    """Exit status reported in a tool result, JSON or text; None when it says nothing."""
    stripped = (result or "").strip()
    if stripped.startswith("{"):
        try:
            data = json.loads(stripped)
        except ValueError:
            data = None
        if isinstance(data, dict):
            for key in ("exit_code", "exitCode", "returncode", "return_code", "exit_status", "status_code"):
                if isinstance(data.get(key), int) and not isinstance(data.get(key), bool):
                    return data[key]
    m = _EXIT_TEXT.search(stripped[-4000:]) or _EXIT_TEXT.search(stripped[:4000])
    return int(m.group(1)) if m else None


def error_lines(result: str, limit: int = 6) -> list[str]:
    """Error lines of a tool result, verbatim (whitespace folded), most specific first."""
    found: list[str] = []
    for raw in (result or "").splitlines():
        line = raw.strip()
        if line.startswith("E ") and not line.startswith("E   ") and ":" not in line:
            continue
        line = re.sub(r"^E\s{2,}", "", line)
        if not line or len(line) < 6 or not _ERROR_LINE.search(line):
            continue
        if line.startswith("Traceback"):
            continue  # the exception line below it carries the information
        line = _clip(line)
        if line not in found:
            found.append(line)
    return found[:limit]


# ---------------------------------------------------------------- the ledger


@dataclass
class Command:
    cmd: str
    statuses: list = field(default_factory=list)  # int or None ("?"), oldest first, last 3 kept

    def status_text(self) -> str:
        if not self.statuses:
            return "exit ?"
        return "exit " + " → ".join("?" if s is None else str(s) for s in self.statuses)


@dataclass
class ErrorItem:
    line: str
    cmd: str = ""
    test: str = ""


@dataclass
class Ledger:
    files: dict = field(default_factory=dict)  # path -> action
    commands: list = field(default_factory=list)  # [Command]
    errors: list = field(default_factory=list)  # [ErrorItem]
    resolved: list = field(default_factory=list)  # [str]
    urls: list = field(default_factory=list)
    ids: list = field(default_factory=list)
    constraints: list = field(default_factory=list)

    # ---- adding

    def add_file(self, path: str, action: str = "mentioned") -> None:
        path = path.strip().strip("`'\"")
        if not path or len(path) > 300 or any(n in path for n in _NOISE_PATH):
            return
        old = self.files.get(path)
        if old is None or _ACTION_RANK.get(action, 0) > _ACTION_RANK.get(old, 0):
            self.files[path] = action

    def add_command(self, cmd: str, status: int | None) -> None:
        cmd = cmd.strip()
        if not cmd:
            return
        for c in self.commands:
            if c.cmd == cmd:
                self.commands.remove(c)  # move to the end: most recent last
                c.statuses = (c.statuses + [status])[-3:]
                self.commands.append(c)
                return
        self.commands.append(Command(cmd, [status]))

    def add_error(self, line: str, cmd: str = "", test: str = "") -> None:
        if not test:
            m = _TEST_ID.search(line)
            test = m.group(1) if m else ""
        for e in self.errors:
            if e.line == line:
                e.cmd, e.test = cmd or e.cmd, test or e.test
                return
        if line in self.resolved:
            self.resolved.remove(line)  # it came back
        self.errors.append(ErrorItem(line, cmd, test))

    def add_list(self, name: str, items) -> None:
        """Append new items in order; facts are never capped here (per-source caps apply)."""
        target = getattr(self, name)
        for item in items:
            if item and item not in target:
                target.append(item)

    def resolve(self, cmd: str, output: str = "") -> None:
        """A command passed: errors it (or a broader run of it) covered move to `resolved`."""
        still = []
        for e in self.errors:
            if _covers(cmd, e) or (e.test and re.search(re.escape(e.test) + r"\s+PASSED", output)):
                if e.line not in self.resolved:
                    self.resolved.append(e.line)
            else:
                still.append(e)
        self.errors = still

    # ---- extraction

    def absorb(self, turns: list[Turn]) -> None:
        """Extract the facts of these turns, in order, so later passes resolve earlier errors."""
        calls = {}
        pending = []
        for t in turns:
            if t.role == "tool":
                call = calls.get(t.tool_call_id) if t.tool_call_id else None
                if call is None and pending:
                    call = pending.pop(0)
                elif call in pending:
                    pending.remove(call)
                self._absorb_result(call, t.text)
                continue
            for call in t.tool_calls:
                calls[call.id] = call
                pending.append(call)
                self._absorb_call(call)
            self._absorb_text(t)
        for call in pending:  # calls whose result never came
            if call.text and _is_command(call):
                self.add_command(call.text, None)

    def _absorb_call(self, call) -> None:
        name = call.name.lower()
        action = (
            "read" if re.search(r"read|view|open|cat|show|get|search|grep|list", name)
            else "created" if re.search(r"create|new|write", name)
            else "deleted" if re.search(r"delete|remove", name)
            else "edited" if re.search(r"edit|patch|replace|apply|update|insert|modify|move|rename", name)
            else "mentioned"
        )
        for key in _FILE_KEYS:
            value = call.arguments.get(key)
            if isinstance(value, str) and value.strip() and "\n" not in value.strip():
                self.add_file(value, action)
        paths = call.arguments.get("paths")
        if isinstance(paths, str):
            for p in find_paths(paths):
                self.add_file(p, action)
        for key in ("url", "uri", "href", "query"):
            value = call.arguments.get(key)
            if isinstance(value, str):
                self.add_list("urls", find_urls(value))
        self.add_list("urls", find_urls(call.text))
        self.add_list("ids", find_ids(call.text) if _is_command(call) else [])
        for value in call.arguments.values():  # names of tests the agent wrote
            if isinstance(value, str):
                self.add_list("ids", re.findall(r"\bdef (test_\w+)", value)[:5])

    def _absorb_result(self, call, text: str) -> None:
        status = exit_status(text)
        output = text
        if text.strip().startswith("{"):
            try:
                data = json.loads(text)
                if isinstance(data, dict):
                    output = "\n".join(str(data.get(k) or "") for k in ("output", "stdout", "stderr", "error", "content", "result"))
                    output = output.strip() or text
            except ValueError:
                pass
        cmd = call.text if call is not None and _is_command(call) else ""
        if cmd:
            self.add_command(cmd, status)
        errors = error_lines(output)
        if status not in (0, None) or errors and status is None:
            for line in errors:
                self.add_error(line, cmd)
        elif status == 0 and cmd:
            self.resolve(cmd, output)
        # paths and URLs in tool output: only where they name a problem or a change
        for line in output.splitlines()[:4000]:
            if _ERROR_LINE.search(line) or re.search(r"^\s*(?:modified|new file|deleted|renamed|created|wrote|saved|writing)\b", line, re.I):
                for p in find_paths(line)[:4]:
                    self.add_file(p, "mentioned")
        self.add_list("urls", [u for u in find_urls(output) if not re.search(r"pythonhosted|pypi\.org/simple|registry\.npmjs", u)][:3])
        self.add_list("ids", find_ids(output, strict=True)[:3])

    def _absorb_text(self, t: Turn) -> None:
        text = t.text
        if not text.strip():
            return
        for p in find_paths(text):
            self.add_file(p, "mentioned")
        self.add_list("urls", find_urls(text))
        self.add_list("ids", find_ids(text))
        if t.role == "assistant":
            for line in text.splitlines():
                m = re.match(r"^\s*\$ (\S.*)$", line)
                if m:
                    self.add_command(m.group(1).strip(), None)
        if t.role == "user":
            self.add_list("constraints", user_constraints(text))
        if t.role == "assistant":
            self.add_list("ids", code_names(text, exclude=set(self.files) | {c.cmd for c in self.commands}))

    def compact(self, resolved_keep: int = 30) -> int:
        """Shrink without losing a string: drop ids and mentioned files that other entries
        already spell out, read-only commands that succeeded, and the oldest resolved errors
        beyond `resolved_keep`. Returns how many entries went."""
        before = len(self.items()) + len(self.resolved)
        trivial = re.compile(r"^(?:git (?:status|diff|log|show|branch)|ls|pwd|cat|head|tail|echo|which|wc|tree|find)\b(?!.*[|>;&])")
        self.commands = [c for c in self.commands if not (trivial.match(c.cmd) and c.statuses and c.statuses[-1] == 0)]
        del self.resolved[: max(0, len(self.resolved) - resolved_keep)]
        spelled = "\n".join([c.cmd for c in self.commands] + [e.line for e in self.errors] + self.resolved + self.urls + self.constraints)
        self.files = {p: a for p, a in self.files.items() if a != "mentioned" or p not in spelled}
        spelled += "\n" + "\n".join(self.files)
        self.ids = [i for i in self.ids if i not in spelled]
        return before - len(self.items()) - len(self.resolved)

    # ---- views

    def items(self) -> list[str]:
        """The exact strings a summary must contain for this ledger to count as carried."""
        return (
            list(self.files)
            + [c.cmd.splitlines()[0] for c in self.commands]
            + [e.line for e in self.errors]
            + list(self.urls)
            + list(self.ids)
            + list(self.constraints)
        )

    def is_empty(self) -> bool:
        return not self.items() and not self.resolved


def code_names(text: str, exclude: set = frozenset(), limit: int = 8) -> list[str]:
    """Short inline-code spans (`ROUND_HALF_UP`, `retry_async`, `httpx>=0.23,<0.28`): names the
    assistant singled out, so likely to be needed verbatim later."""
    out = []
    for m in re.finditer(r"(?<!`)`([^`\s]{3,80})`(?!`)", text or ""):
        name = m.group(1)
        if name in exclude or name in out or not re.search(r"[A-Za-z]", name) or _URL.match(name):
            continue
        out.append(name)
    return out[:limit]


def user_constraints(text: str, limit: int = 6) -> list[str]:
    """What the user said that directs or constrains the work, verbatim: a short message whole
    (user turns are the source of truth), else its directive sentences."""
    folded = " ".join(text.split())
    if 8 <= len(folded) <= 400:
        return [folded]
    out = []
    for sentence in re.split(r"(?<=[.!?])\s+|(?<=[。！？])|\n+", text):
        sentence = sentence.strip(" -*>\t")
        if 8 <= len(sentence) <= 400 and _DIRECTIVE.search(sentence):
            sentence = _clip(sentence, 300)
            if sentence not in out:
                out.append(sentence)
    return out[:limit]


def _is_command(call) -> bool:
    from .text import command_of

    return bool(command_of(call.name, call.arguments))


def _covers(passing: str, err: ErrorItem) -> bool:
    if not err.cmd and not err.test:
        return False
    if err.cmd == passing:
        return True
    if err.test and (err.test in passing or err.test.split("::")[0] in passing.split()):
        return True
    if err.cmd:
        a, b = passing.split(), err.cmd.split()
        head = 2 if len(a) > 1 and a[0] in ("python", "python3", "uv", "npx", "npm", "yarn", "pnpm", "cargo", "go", "make", "poetry") else 1
        if a[:head] == b[:head] and set(a[head:]) <= set(b[head:]) and not any(x.startswith("-k") for x in a):
            return True  # a broader run of the same tool passed
    return False
