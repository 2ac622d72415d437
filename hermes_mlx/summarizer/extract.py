"""Finding facts in text: paths, URLs, identifiers, exit statuses, error lines, inline-code
names and the user's directives. Pure functions over strings, so the ledger (which merges the
facts) and the verifier (which looks for invented ones) share one definition of each.
"""

from __future__ import annotations

import json
import re

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
URL = re.compile(r"\b(?:https?|ftp|wss?)://[^\s<>\"'`)\]}]+")
_ISSUE = re.compile(r"(?<![\w&#/!])(?:[#!]\d{1,6}|(?:GH|PR|gh|pr)-\d{1,6})\b")
_JIRA = re.compile(r"\b([A-Z][A-Z0-9]{1,9})-\d{1,6}\b")
_JIRA_STOP = {"UTF", "SHA", "ISO", "X", "GPT", "BASE", "TLS", "SSL", "IPV", "P", "V", "HTTP", "CP", "LATIN", "MD", "AES", "RSA", "ECDSA", "PEP"}
_HEX = re.compile(r"(?<![\w\-])[0-9a-f]{7,40}(?![\w\-])")
_VERSION = re.compile(r"(?<![\w.\-])(?:v|go)?\d+\.\d+\.\d+(?:[\-+][0-9A-Za-z]+(?:\.[0-9A-Za-z]+)*)?(?!\w|\.\d)")
_UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")
ERROR_LINE = re.compile(
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
TEST_ID = re.compile(r"([\w./\-]+\.py::[\w\[\]\-.:,]+)")
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

INJECTION = re.compile(
    r"\b(?:ignore|disregard|forget|override)\b.{0,30}\b(?:previous|prior|above|earlier|all|your|system)\b.{0,20}"
    r"\b(?:instructions?|prompts?|messages?|rules|context|guidelines)\b"
    r"|\byou are now\b|\bnew instructions?\s*:|\bsystem prompt\b|\bdo not (?:tell|inform|show) the user\b"
    r"|\breveal (?:your|the) (?:system|hidden|secret)\b|\bjailbreak\b|<\|im_start\|>|<\|system\|>|<\|endoftext\|>"
    r"|\bas an ai\b|\bfrom now on\b",
    re.I,
)


def strip_injections(text: str) -> str:
    """Blank out each paragraph of tool output that addresses the agent with instructions, so
    neither the ledger nor the model picks up its URLs, paths or commands as facts."""
    if not text or not INJECTION.search(text):
        return text
    parts = re.split(r"(\n\s*\n)", text)
    return "".join("[instruction-like text omitted]" if INJECTION.search(p) else p for p in parts)


def _clip(text: str, n: int = 240) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def find_paths(text: str) -> list[str]:
    """Path-like tokens in text (URLs removed first)."""
    text = URL.sub(" ", text or "")
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
    for m in URL.finditer(text or ""):
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
        if not line or len(line) < 6 or not ERROR_LINE.search(line):
            continue
        if line.startswith("Traceback"):
            continue  # the exception line below it carries the information
        line = _clip(line)
        if line not in found:
            found.append(line)
    return found[:limit]


def code_names(text: str, exclude: set = frozenset(), limit: int = 8) -> list[str]:
    """Short inline-code spans (`ROUND_HALF_UP`, `retry_async`, `httpx>=0.23,<0.28`): names the
    assistant singled out, so likely to be needed verbatim later."""
    out = []
    for m in re.finditer(r"(?<!`)`([^`\s]{3,80})`(?!`)", text or ""):
        name = m.group(1)
        if name in exclude or name in out or not re.search(r"[A-Za-z]", name) or URL.match(name):
            continue
        if not re.search(r"[_.:/=<>~\d\[\]()-]|[a-z][A-Z]|^[A-Z]{2,}$", name):
            continue  # a plain word (`taxes`, `total`): not an identifier worth carrying
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
