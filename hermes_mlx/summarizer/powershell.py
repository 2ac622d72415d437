"""PowerShell's error records in what a terminal printed (Cursor's, Copilot's and Codex's terminals on
Windows): each record's message, read as error_lines.py reads any other error line. A record says
what failed and why, then where (`At line:1 char:14`, the code and its `+ ~~` caret), then its
fields (`+ CategoryInfo : ParserError: …`), the console wrapping every line at its width.
"""

from __future__ import annotations

import re
from collections.abc import Callable

# the record's parts: where (`At line:1 char:134`, a script's `At C:\x\deploy.ps1:12 char:5`), its fields
# (`+ CategoryInfo : ParserError: (:) [], …`, whose type name had been read as the error), a prompt's echo of
# the command (`PS E:\app> cd x && y`), what failed before its message (a cmdlet's `Get-Date : Parameter
# cannot be processed because …`, a script's path), the caret a parser's message (`The token '&&' is not a
# valid statement separator in this version.`) stands below, and a program's stderr wrapped as a record
_PS_AT = re.compile(r"^At (?:line:\d+|\S.{0,300}:\d+) char:\d+$")
_PS_FIELD = re.compile(r"^\s*\+ (?:CategoryInfo|FullyQualifiedErrorId)\s*:")
_PS_PROMPT = re.compile(r"^PS [^>\n]{1,260}> ")
_PS_SOURCE = re.compile(r"^[\w.\\/:~-]{1,200} : \S")
_PS_CARET = re.compile(r"^\+\s*~+\s*$")
_PS_NATIVE = re.compile(r"FullyQualifiedErrorId\s*:\s*NativeCommandError")


def powershell_records(lines: list[str], is_error_line: Callable[[str], bool]) -> tuple[dict[int, str], set[int]]:
    """Each PowerShell error record's message, joined from its wrapped lines, at its first line's
    index; and the indices of the record's other lines (wrapped parts, fields), which say no more.
    A cmdlet's message starts at its `Source : ` line above `At line:`; a parser's sits between the
    `+ ~~` caret and the fields. A program's stderr that PowerShell 5 wraps as a record
    (NativeCommandError: `git : Switched to a new branch 'x'`) is an error only if `is_error_line`
    says its line is one."""
    messages: dict[int, str] = {}
    skip: set[int] = set()
    for i, line in enumerate(lines):
        at, field = _PS_AT.match(line.strip()), _PS_FIELD.match(line)
        if field:  # the field and its wrapped rest (`   BindingException`)
            skip.add(i)
            k = i + 1
            while (
                k < len(lines) and lines[k][:1].isspace() and lines[k].strip() and not lines[k].strip().startswith("+")
            ):
                skip.add(k)
                k += 1
        if not at and not (field and "CategoryInfo" in line):
            continue
        block, stop = [], ""
        for j in range(i - 1, max(-1, i - 8), -1):  # up to a blank line, a caret's, a field or a prompt
            said = lines[j].strip()
            if not said or said.startswith("+") or _PS_AT.match(said) or j in skip or _PS_PROMPT.match(said):
                stop = said
                break
            block.insert(0, j)
        if at:  # from the last `Source : ` line on (the lines above it are output), else the line above `At`
            start = next((k for k in range(len(block) - 1, -1, -1) if _PS_SOURCE.match(lines[block[k]].strip())), None)
            # (a method's `You cannot call a method on a null-valued expression.`, a script's `throw`),
            # unless a prompt is right above: then the lines are its echo of the command
            block = block[start:] if start is not None else [] if _PS_PROMPT.match(stop) else block[-1:]
        elif not _PS_CARET.match(stop):
            block = []  # a parser's message stands right below its caret
        if not block:
            continue
        said = " ".join(lines[j].strip() for j in block)
        native = any(_PS_NATIVE.search(ln) for ln in lines[i : i + 12])
        if not native or is_error_line(said.split(" : ", 1)[-1]):
            messages[block[0]] = said
            skip.update(block[1:])
        else:
            skip.update(block)  # a program's notice on stderr, no error
    return messages, skip
