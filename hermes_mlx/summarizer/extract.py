"""Finding facts in text: paths, URLs, identifiers, error lines and inline-code names (what a
tool result printed, its exit status and its help links are read in tool_results.py). Pure
functions over strings, so the ledger (which merges the facts) and the verifier (which looks for
invented ones) share one definition of each.

No fact is ever taken from cut text. Hermes shortens messages to a head and a tail around
`...[truncated]...`, we clip with `[... N characters ... cut ...]`, tools print `... 40 more lines`
or `(output truncated)`; a path, command or error line that runs into such a marker is a fragment
(`ion_2.py` of `db/migration_2.py`), so every finder first drops what touches one (`uncut`).
"""

from __future__ import annotations

import re
import shlex

from .error_lines import ERROR_LINE, at_any_line, at_source_line, is_error_line, scan_errors, without_place  # noqa: F401
from .vocabulary import FILE_KEYS, SPECIAL_FILES

_EXTS = (
    "py pyi pyx ipynb js mjs cjs ts tsx jsx vue svelte md mdx rst txt json jsonl yaml yml toml cfg ini "
    "conf env sh bash zsh fish ps1 bat rs go c h cc cpp hpp cxx java kt kts scala rb php html htm css scss "
    "less sql lock log csv tsv xml gradle swift m mm tf hcl proto lua pl r dart zig nix cs ex exs erl hs ml "
    "mk cmake gz zip tar tgz whl so dylib dll png jpg jpeg gif svg pdf db sqlite pem crt key patch diff "
    "safetensors gguf bin onnx pt pth npz npy parquet service timer plist xcconfig"
).split()
_NOT_PATHS = {
    "and/or",
    "input/output",
    "read/write",
    "true/false",
    "yes/no",
    "w/o",
    "n/a",
    "i/o",
    "tcp/ip",
    "client/server",
    "on/off",
    "either/or",
    "he/she",
    "s/he",
}
# objects whose members read like file names (`console.log`, `process.env`, `item.key`,
# `res.json`, `np.log`): such a name is code, never a file; `logger.py`, `response.json` are files
_CODE_OBJECTS = frozenset(
    "console process this self item event evt e obj res req math np torch window document import.meta".split()
)
_MEMBER_EXTS = frozenset("log env key json".split())
_PATH = re.compile(
    r"(?<![\w/.@:=\-}])("  # nor the tail of a brace pattern (`test_6{1,2}k.txt`: no `k.txt`)
    r"(?:~|\.{1,2})?/?(?:[\w.@+\-]+/)+[\w@+\-][\w.@+\-]*/?"  # has a slash
    r"|[\w@+\-][\w.@+\-]*\.(?:" + "|".join(_EXTS) + r")"  # bare name with a known extension
    r"|" + "|".join(sorted(SPECIAL_FILES)) + r")"
    r"(?=$|[\s`'\",;:)\]}>!?]|\.(?:\s|$))"
)
URL = re.compile(r"\b(?:https?|ftp|wss?)://[^\s<>\"'`)\]}\\]+")  # a backslash ends it (`\n` of escaped JSON)
_ISSUE = re.compile(r"(?<![\w&#/!])(?:[#!]\d{1,6}|(?:GH|PR|gh|pr)-\d{1,6})\b")
# a key of letters then digits: one letter and digits alone is a line range (Cursor's search hits
# `L480-2141`, GitHub's `#L10-20`) or a model's name, not a project's key
_JIRA = re.compile(r"\b(?![A-Z]\d+-)([A-Z][A-Z0-9]{1,9})-\d{1,6}\b")
_JIRA_STOP = {
    "UTF",
    "SHA",
    "ISO",
    "X",
    "GPT",
    "BASE",
    "TLS",
    "SSL",
    "IPV",
    "P",
    "V",
    "HTTP",
    "CP",
    "LATIN",
    "MD",
    "AES",
    "RSA",
    "ECDSA",
    "PEP",
}
_HEX = re.compile(r"(?<![\w\-])[0-9a-f]{7,40}(?![\w\-])")
_VERSION = re.compile(r"(?<![\w.\-])(?:v|go)?\d+\.\d+\.\d+(?:[\-+][0-9A-Za-z]+(?:\.[0-9A-Za-z]+)*)?(?!\w|\.\d)")
_UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")
TEST_ID = re.compile(r"([\w./\-]+\.py::[\w\[\]\-.:,]+)")
INJECTION = re.compile(
    r"\b(?:ignore|disregard|forget|override)\b.{0,30}\b(?:previous|prior|above|earlier|all|your|system)\b.{0,20}"
    r"\b(?:instructions?|prompts?|messages?|rules|context|guidelines)\b"
    r"|\byou are now\b|\bnew instructions?\s*:|\bsystem prompt\b|\bdo not (?:tell|inform|show) the user\b"
    r"|\breveal (?:your|the) (?:system|hidden|secret)\b|\bjailbreak\b|<\|im_start\|>|<\|system\|>|<\|endoftext\|>"
    r"|\bas an ai\b|\bfrom now on\b",
    re.I,
)


CUT = re.compile(
    r"\.{3} ?\[truncated\](?: ?\.{3})?"  # Hermes: head + "\n...[truncated]...\n" + tail; "text ...[truncated]"
    r"|(?<=[^\n]{100}) \.{3} (?=[^\n]{100})"  # Hermes: text[:420] + " ... " + text[-160:], one long line
    r"|\[(?:\.{3}|…)[^\[\]\n]{0,80}\]"  # ours: [... 1,234 characters, 12 lines cut ...], [...]
    r"|[\[(<][^\[\]()<>\n]{0,30}\b(?:truncated|omitted|elided|snipped|more lines)\b[^\[\]()<>\n]{0,100}[\])>]"  # [truncated]
    r"|\.{3}\[summary input truncated[^\]\n]{0,200}\]\.{3}"  # Hermes 0.22 bounding its summary input
    r"|<response clipped>(?:<NOTE>[^\n]{0,400}?</NOTE>)?"  # the str_replace_editor of SWE-agent and OpenHands
    r"|⟪HERMES-CONTEXT-COMPRESSION:[^⟫\n]{0,200}⟫?"  # Hermes 0.22: "⟪HERMES-CONTEXT-COMPRESSION: 1,234 of 5,678 chars omitted …⟫"
    r"|(?:\.{3}|…)[ \t]*[(\[]?(?:and )?\+?[\d,]{1,12} (?:more |additional )?(?:lines?|rows?|items?|entries|results|matches|files)\b[^\n]{0,40}"
    r"|^[ \t]*…|…[ \t]*$|(?<=[A-Za-z0-9_./\-])…(?=[A-Za-z0-9_./\-])",  # clipped: "line…", "\n…\n", "migrat…ion_2.py"
    re.I | re.M,
)
_CUT_WORDS = (
    "truncated", "omitted", "elided", "snipped", "more lines", "[...", "[…", "hermes-context-compression", "response clipped"
)  # fmt: skip
_CUT_COUNT = re.compile(r"(?:\.{3}|…)[ \t]*[(\[]?(?:and )?\+?\d")
_LINE_CUT = re.compile(r"\b(?:lines?|rows?|items?|entries|results|matches|files)\b", re.I)


def has_cut(text: str) -> bool:
    """True when text carries a cut marker: part of it is missing."""
    if not text:
        return False
    if "…" not in text:  # plain string tests first: the marker regex is slow on long text
        low = text.lower()
        if not any(w in low for w in _CUT_WORDS) and not (
            "..." in text and (" ... " in text or _CUT_COUNT.search(text))
        ):
            return False
    return bool(CUT.search(text))


def cut_pieces(text: str, unit: str = "token") -> list[str]:
    """Text split at its cut markers, each piece less the fragment a cut broke: at a cut, the
    run of characters up to the nearest whitespace (`unit="token"`: paths, URLs, ids) or the
    nearest line break (`unit="line"`: error lines, commands) is dropped. A marker that counts
    lines (`... 40 more lines`) cuts whole lines; one that counts characters, or says nothing,
    took its neighbouring newline with it, so the line next to it is a fragment."""
    text = text or ""
    if not has_cut(text):
        return [text]
    sep = "\n" if unit == "line" else None
    pieces, pos, cut_before = [], 0, False
    for m in CUT.finditer(text):
        start, end = m.span()
        if not (_LINE_CUT.search(m.group(0)) and not re.search(r"char|byte", m.group(0), re.I)):
            while start > pos and text[start - 1] in " \n":  # the cut took the whitespace with it:
                start -= 1  # the words on either side are fragments, however many blanks the
            while end < len(text) and text[end] in " \n":  # marker was framed with
                end += 1
        pieces.append(_drop_edges(text[pos:start], cut_before, True, sep))
        pos, cut_before = end, True
    pieces.append(_drop_edges(text[pos:], cut_before, False, sep))
    return pieces


def _drop_edges(piece: str, head_cut: bool, tail_cut: bool, sep: str | None) -> str:
    if head_cut:
        m = re.search(r"\s" if sep is None else sep, piece)
        piece = piece[m.start() :] if m else ""
    if tail_cut:
        i = max(piece.rfind(c) for c in (" \t\n\r\f\v" if sep is None else sep))
        piece = piece[: i + 1] if i >= 0 else ""
    return piece


def uncut(text: str, unit: str = "token") -> str:
    """Text with its cut markers turned into line breaks and the fragments beside them dropped."""
    return "\n".join(cut_pieces(text, unit))


def whole_head(text: str) -> str:
    """The whole lines before the first cut: all of a command that can be trusted."""
    return cut_pieces(text, "line")[0].strip()


def strip_injections(text: str) -> str:
    """Blank out each paragraph of tool output that addresses the agent with instructions, so
    neither the ledger nor the model picks up its URLs, paths or commands as facts."""
    if not text or not INJECTION.search(text):
        return text
    parts = re.split(r"(\n\s*\n)", text)
    return "".join("[instruction-like text omitted]" if INJECTION.search(p) else p for p in parts)


def clip_line(text: str, n: int = 240) -> str:
    """`text` on one line (whitespace folded), at most `n` characters, ending in "…" when cut."""
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


# a folder whose name has spaces, between two slashes: macOS's `Application Support`, Windows's
# `Program Files (x86)`: a path through it is no path on either side of its space
_SPACED_FOLDER = re.compile(r"(?<=/)[A-Z][\w\-]*(?: [A-Z0-9(][\w\-)]*)+(?=/)")


_SPACED_NAME = re.compile(r"^[A-Z0-9(\[][^\s]*(?: [A-Z0-9(\[+&][^\s]*)+$")  # `ReAct Pattern (Reason + Act)`
_QUOTED = re.compile(r"`([^`\n]{3,300})`|\"([^\"\n]{3,300})\"")


def whole_path(text: str) -> str:
    """`text` itself when it is one path through folders whose names have spaces (`Single Agent
    Pattern/x/agent.ts`, `Program Files (x86)/App/app.exe`): each spaced folder name's words start
    as names do (a capital, a digit, a bracket), and the last name has an extension. Else ""."""
    text = text.strip()
    parts = text.split("/")
    if " " not in text or len(parts) < 2 or len(text) > 300 or not re.search(r"\.[A-Za-z]\w{0,9}$", parts[-1]):
        return ""
    folders = [f for f in parts[:-1] if " " in f]
    return text if folders and all(_SPACED_NAME.match(f) for f in folders) else ""


_SPACED_FILE = re.compile(r"^[\w ()\[\]&+,@~/\\.-]+\.\w{1,12}$")  # a file name's characters: no `=`, quote or `:`


def quoted_paths(cmd: str) -> list[str]:
    """The paths a shell command's quoting gives whole though they hold spaces (`cat 'LM Studio
    configuration.md'`): an argument with a space that ends in an extension."""
    try:
        words = shlex.split(cmd[:2000])
    except ValueError:  # an unclosed quote: nothing is given whole
        return []
    return [w for w in words if " " in w and len(w) <= 300 and _SPACED_FILE.match(w) and w.rsplit(".", 1)[1] in _EXTS]


def find_paths(text: str) -> list[str]:
    """Path-like tokens in text (URLs removed first), none from a fragment beside a cut; a path
    with spaces in it counts when it is quoted whole (`whole_path`)."""
    text = URL.sub(" ", uncut(text or ""))
    out = []
    spaced = [m.span() for m in _SPACED_FOLDER.finditer(text)]
    for m in _QUOTED.finditer(text):
        whole = whole_path(m.group(1) or m.group(2))
        if whole:
            spaced.append(m.span())
            if whole not in out:
                out.append(whole)
    for m in _PATH.finditer(text):
        p = m.group(1).rstrip(".")
        low = p.lower()
        if low in _NOT_PATHS or not re.search(r"[A-Za-z]", p) or "//" in p or len(p) > 300:
            continue
        stem, _, ext = low.rpartition(".")
        if "/" not in p and stem in _CODE_OBJECTS and ext in _MEMBER_EXTS:
            continue  # `console.log`, `process.env`
        if "/" in p and not re.search(r"\.[A-Za-z]\w*/?$|^[~./]", p) and any(seg.isdigit() for seg in p.split("/")):
            continue  # dates and fractions like 2026/11/27
        if any(a < m.end(1) and m.start(1) <= b for a, b in spaced):
            continue  # a piece of a path with a space in it (`~/Library/Application Support/Houdoku`)
        if p not in out:
            out.append(p)
    return out


_XMLNS = re.compile(r"(?:xmlns(?::[\w-]+)?|schemaLocation)\s*=\s*\\?[\"']$")  # a namespace's name, never fetched


def find_urls(text: str) -> list[str]:
    out = []
    text = uncut(text or "")
    for m in URL.finditer(text):
        url = m.group(0).rstrip(".,;:!?*_")
        if "{" in url:  # a template in code (`http://127.0.0.1:${PORT}/api`, `…/films_of_{year}`): no address
            continue
        if url not in out and not _XMLNS.search(text[max(0, m.start() - 40) : m.start()]):
            out.append(url)
    return out


def find_ids(text: str, *, strict: bool = False) -> list[str]:
    """Issue refs, ticket keys, UUIDs, commit hashes and versions. `strict` is for tool output:
    hashes only on git-looking lines and no versions, since logs are full of both."""
    text = uncut(text or "")
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
        if strict and not re.search(
            r"\bcommit\b|^\[[\w./\-]+ [0-9a-f]{7,}\]|^[0-9a-f]{7,40} |\bHEAD\b|\bmerge\b", line, re.I
        ):
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


def tool_label(call) -> str:
    """A non-shell call as the Errors section names it: the tool and the file it worked on."""
    if call is None:
        return ""
    path = next((call.arguments[k] for k in FILE_KEYS if isinstance(call.arguments.get(k), str)), "")
    return f"{call.name} {path}".strip()


def error_report(result: str, limit: int = 6) -> tuple[list[str], int]:
    """Error lines of a tool result (see error_lines.py), none from a line a cut broke:
    (the `limit` most specific, how many others there were)."""
    return scan_errors(uncut(result or "", "line"), limit)


# a compiler's or checker's diagnostic on a source line, warnings too (gcc's `gui.c:52:107: warning: unused
# parameter 'currentState'`, tsc's `src/a.ts(3,5): error TS2322: …`): pasted by a user, what they ask about
_DIAGNOSTIC = re.compile(r"^\s*[\w./\\-]+(?::\d+(?::\d+)?:|\(\d+,\d+\):)\s*(?:fatal )?(?:error|warning)\b.{0,300}$")


def pasted_problems(text: str, limit: int = 3, skip: str = "") -> list[str]:
    """The error lines, then the warnings, of what a user pasted (a build log, a traceback): at most
    `limit` that `skip` does not show whole, one of each shape (`gui.h:38:5` and `gui.h:39:5` saying
    the same is one), in the order the text has them: what a clipped message keeps (`ledger.user_message`)."""
    lines = uncut(text or "", "line").splitlines()[:4000]
    diagnostics = [" ".join(ln.split()) for ln in lines if _DIAGNOSTIC.match(ln)]
    # error_report's lines less the place it notes after a traceback's error (`[at main.py:5, in main]`)
    errors = [without_place(" ".join(x.split())) for x in error_report(text, 2 * limit)[0]]
    ranked = [*errors, *[d for d in diagnostics if " error" in d], *diagnostics]
    folded = " ".join((text or "").split())
    out, shapes = [], set()
    for line in dict.fromkeys(ranked):
        keys = {at_any_line(line), at_source_line(line)} - {""}
        if len(out) < limit and line in folded and line not in skip and not keys & shapes:  # verbatim only
            shapes |= keys
            out.append(line)
    return sorted(out, key=folded.find)


def error_lines(result: str, limit: int = 6) -> list[str]:
    """Error lines of a tool result, verbatim (whitespace folded), most specific first."""
    return error_report(result, limit)[0]
