"""The one vocabulary the summary's rules share: word lists and shapes, each written once.

A rule that needs to know what an announcement, a cause, a decision, a shell tool or an exit
status looks like reads it here, so two rules cannot disagree about it; what a shell command does
to the files it names (a read, an edit, a blind step) is in `shell_words`, below this module. Cues
are given in the languages users write where a rule can use them (English, and the common Chinese,
Japanese and Russian forms; Korean's of cause, result and choice); rules that hold in any language
(numbers, hashes, paths, code spans) need no cue at all.
"""

from __future__ import annotations

import re

from .shell_words import read_only

# ---------------------------------------------------------------- the agent's own sentences

# how a Chinese sentence says what the agent does next ("让我…", "接下来…"): an announcement's
# lead, and a change's when a change verb follows
_ZH_NEXT = "让我|我来|我先|接下来|现在我|我现在|下面我"
_OPENERS = (  # the words an announcement or an aside may open with ("Now, let me ...", "So my next step ...")
    r"^(?:(?:now|next|first|then|finally|after that|after this|afterwards?|okay|ok|great|good|perfect|alright|all right|"
    r"excellent|so|also|and|yes|right|hmm|wait|actually)\b\s*[,!.:\-—–]?\s*)*"
)
# "Now let me check the API.", "I'll run the tests": what the agent will do, never a result
ANNOUNCE = re.compile(
    _OPENERS
    + r"(?:let me|let['’]?s|let us|i['’]?ll|i will|i['’]?m going to|i am going to|i['’]?m gonna|i need to|i want to|"
    r"i should (?:check|look|read|run|verify|see|examine|explore|test|try|start|first|also|now)|we need to (?:check|look|see|run|find|examine|verify)|"
    r"time to|going to|i can now|i['’]?ll now|now i['’]?ll|now i need|i have a clear|i now have|i have enough|"
    r"i['’]?m now|i am now|here['’]?s (?:the|my) plan|the plan is|my plan|my thinking)\b"
    r"|^(?:" + _ZH_NEXT + r"|まず|次に|では|Давайте|Сейчас я|Теперь я|Проверю|Посмотрю)",
    re.I,
)
# a Korean sentence that ends saying what the agent will do ("이제 pytest를 실행하겠습니다.", "Docker 설정을
# 볼게요."): Korean puts the announcement in its ending, where ANNOUNCE reads a sentence's lead
WILL_DO_END = re.compile(r"(?:하겠습니다|해보겠습니다|보겠습니다|[할볼]게요|하겠어요|합시다)[.!。]?\s*$")
# a reasoning summary's narration of what the model is doing (Cursor's GPT, Gemini CLI: "I'm
# currently focused on the `course_log.md` file.", "My next step is ...", "Maybe I'll check for
# `.sln` files"): 1 in 64 held a fact, against 1 in 22 of all findings; one that decides is read
# a sentence that opens on an activity ("Reviewing the config now.", "Running the export tests."): what
# the agent is doing, unless it says a cause or result (findings, sentences read it so)
ACTIVITY = re.compile(r"[A-Z][a-z]+ing\b")
NARRATION = re.compile(
    _OPENERS + r"(?:(?:maybe|perhaps),? (?:i['’]?ll|i will|i should|i could|i can|i might|we can|we could)|"
    r"i['’]?m (?:currently |still )?(?:trying|focus(?:ed|ing)|aiming|looking|working|examining|considering|thinking|"
    r"planning|dwelling|reviewing|checking|exploring|investigating|assessing|evaluating|weighing|wondering|contemplating)|"
    r"my (?:current )?(?:focus|next step|primary action|aim|priority)|i plan to|i['’]?ve (?:initiated|started|begun))\b",
    re.I,
)
# a second thought, an aside or a hope ("Actually, looking at the code again, ...", "Now I'm installing
# dependencies", "This should fix the tooltip."): none of 68 such findings, from all eight agents, held a
# fact; one that decides or names code or a number in a result ("Actually, `parse()` drops a row.") is read
ASIDE = re.compile(
    _OPENERS + r"(?:this should|actually,? (?:i|looking)|now i['’]?m|i['’]?m also|but wait|if you)\b", re.I
)
# an offer, never work done, whatever it names: "If you want, I can also patch `release:dmg` …"
OFFER = re.compile(_OPENERS + r"(?:if you(?:['’]d)? (?:want|like|prefer)|want me to|would you like|shall i)\b", re.I)
# the change an agent says it will make next ("Let me rewrite it to be a macro:", "I'll remove the
# old folders", "I'm making that test self-contained by ...", "让我改为…"): after what it found, the
# decision that finding led to, never a read or a check ("Let me check the API")
CHANGE_VERBS = (
    "rewrite switch replace remove delete add make move rename change update fix implement create convert "
    "refactor wrap drop revert use extract split merge migrate simplify restore patch modify inline generate "
    "install pin downgrade upgrade disable enable guard skip defer stop"
).split()


def _ing(verb: str) -> str:
    """make -> making, drop -> dropping, fix -> fixing."""
    if verb.endswith("e") and not verb.endswith("ee"):
        return verb[:-1] + "ing"
    if len(verb) <= 5 and re.fullmatch(r"[a-z]*[^aeiou][aeiou][bdgmnprt]", verb):
        return verb + verb[-1] + "ing"
    return verb + "ing"


CHANGE_INTENT = re.compile(
    r"^(?:(?:now|next|so|then|instead|also|ok(?:ay)?|first)\b\s*[,!.:\-—–]?\s*)*"
    r"(?:(?:let me|let['’]?s|i['’]?ll|i will|i['’]?m going to|i am going to|we['’]?ll|we will|"
    r"i need to|we need to|i should|we should)\s+(?:now\s+|also\s+|just\s+|instead\s+|first\s+)?"
    r"(?:" + "|".join(CHANGE_VERBS) + r")"
    r"|(?:i['’]?m|i am|we['’]?re|we are)\s+(?:now\s+|also\s+)?(?:"
    + "|".join(map(_ing, CHANGE_VERBS))
    + r"))\b(?!\s+sure\b)"
    r"|^(?:(?:"
    + _ZH_NEXT
    + r")|(?:我们|我)?(?:需要|必须|得)\**(?:先|再)?\**)(?:改为|改成|修改|删除|移除|添加|替换|重写|切换|使用|恢复|更新|补充|修复|创建|新增|实现|重构)",
    re.I,
)
# what must happen, said as a need ("We need to handle empty tables", "it has to run first")


def _past(verb: str) -> str:
    """fix -> fixed, drop -> dropped, make -> made, simplify -> simplified."""
    irregular = {"make": "made", "rewrite": "rewrote|rewritten", "split": "split", "defer": "deferred"}
    if verb in irregular:
        return irregular[verb]
    if verb.endswith("e"):
        return verb + "d"
    if verb.endswith("y") and verb[-2] not in "aeiou":
        return verb[:-1] + "ied"
    if len(verb) <= 5 and re.fullmatch(r"[a-z]*[^aeiou][aeiou][bdgmnprt]", verb) and not verb.endswith(("er", "en")):
        return verb + verb[-1] + "ed"  # drop -> dropped; lower -> lowered
    return verb + "ed"


_RESIZE_VERBS = "reduce increase adjust bump lower raise shorten tighten loosen clean".split()  # changes of a value

# a change the agent says it made, as a sentence opens ("**Deleted** `OfficerLockState.cs` (it was
# unused …)", "I've added the missing closing tag", "Refactored the state management into …", "so I
# generated `X.sln` and added all projects"): a report of work done, which held a fact nearly three times
# as often as other findings (18 of 111 on both corpora, in six agents' sessions: 197 of 3,298 others).
# Not a participle that describes ("Changed files are listed below.", "Installed version is 1.2.3")
CHANGE_MADE = re.compile(
    r"(?:^|(?<=[.!?:]\s)|(?<=:\*\*\s)|\b(?:so|and|then)\s+(?=(?:i|we)\b))(?:[-*•]\s+|\d+[.)]\s+)?(?:\*\*)?"
    r"(?:(?:i|we)(?:['’]ve| have)?\s+(?:also\s+|now\s+|just\s+)?)?(?:also\s+)?"
    r"(?:" + "|".join(_past(v) for v in [*CHANGE_VERBS, *_RESIZE_VERBS] if v != "use") + r"|wrote|written)\b"
    r"(?!\s+sure\b|\s+\w+\s+(?:is|are|was|were|remains?|still)\b)"  # not "made sure", "Changed files are …"
    r"|(?:已经?|我)(?:修改|删除|移除|添加|替换|重写|切换|创建|修复|更新|新增)了?|已经?[将把][^。，,\n]{1,40}?(?:改为|改成|替换为|更新为)"
    r"|を?(?:追加|削除|修正|変更|作成|更新)しました|(?:수정|추가|삭제|변경|생성)했습니다"
    # the same report in the European languages users and agents write in: "J'ai identifié et corrigé la boucle
    # infinie", "He añadido …", "Adicionei …", "Ich habe … hinzugefügt", "Исправил …"
    # (never denied: "Je n'ai rien modifié", "No he modificado nada", "Ich habe nichts geändert", "Я ничего не изменил")
    r"|\bj['’]ai (?:(?:aussi|également|maintenant|bien|\w+ et) )?(?:ajouté|corrigé|modifié|supprimé|créé|remplacé|"
    r"mis à jour|déplacé|renommé|réécrit|implémenté|refactorisé|retiré|converti|installé)\b"
    r"|(?<!\bno )\bhe (?:(?:también|ya) )?(?:añadido|agregado|corregido|modificado|eliminado|creado|actualizado|"
    r"reemplazado|cambiado|implementado|movido|renombrado)\b"
    r"|(?<!\bnão )(?<!\bnao )\b(?:adicionei|corrigi|modifiquei|removi|criei|atualizei|substituí|alterei|implementei|"
    r"renomeei|troquei)\b"
    r"|\b(?:habe|hab)\b(?: (?!nicht|nichts|kein)[^\s.!?]+){0,6}? (?:hinzugefügt|behoben|geändert|entfernt|erstellt|"
    r"aktualisiert|ersetzt|implementiert|verschoben|umbenannt|gelöscht|korrigiert)\b"
    r"|(?:^|(?<=[.!?]\s)|(?<!\w)(?:я|мы) )(?:добавил|удалил|исправил|создал|обновил|заменил|изменил|переименовал|"
    r"перенёс|реализовал)[аи]?(?!\w)",
    re.I,
)
NEED = re.compile(r"\b(?:needs? to|have to|has to|requires?|нужно|надо)\b|需要|必须|必要", re.I)
# "Now update `x`": an order the agent gives itself
IMPERATIVE = re.compile(
    r"(?i)^(?:now|next|then|first|finally)\b[,:]?\s+(?!(?:the|that|this|these|those|it|its|all|we|i|there|both|each|every|"
    r"our|my|a|an|no|only|everything|nothing|tests?|which|when|if)\b)[a-z]+\b"
    r"|^(?:i['’]?ve (?:already )?(?:done|got|gathered|explored|read)|i (?:now )?have (?:a|enough|all)|now i have)\b"
)
# words of cause and result: what makes a sentence a finding
SIGNAL = re.compile(
    r"\b(?:because|since|so|which|but|however|instead|actually|turns out|the (?:issue|problem|bug|cause|fix|error|reason)|"
    r"root cause|means|expects?|requires?|needs|doesn['’]?t|does not|isn['’]?t|is not|aren['’]?t|not|no longer|only|must|"
    r"should|breaks?|broke|fails?|failed|failing|passes|passed|pass|works|worked|fixed|missing|wrong|"
    r"cannot|can['’]?t|couldn['’]?t|unable|won['’]?t|wasn['’]?t|weren['’]?t|didn['’]?t|never|"
    r"returns?|raises?|crash(?:es)?|conflict|ignored|blocked|false positive|succeeded|success(?:ful)?|"
    r"messed up|lost|issues?|problems?|complain(?:s|ing)?|oops|broken|error|unexpected|instead of|"
    r"all \d+|\d+ (?:tests?|failures?|errors?|passed))\b"
    r"|因为|所以|原因|根因|导致|失败|成功|错误|修复|已|不支持|无法|问题|(?:测试|全部|都|已)通过|跑通|正常|报错|拒绝|下降|阻塞"
    r"|需要|必须|应该|没有|不是|缺少|缺失"  # the English list's needs, must, should, not, isn't, missing
    r"|ため|(?<!も)ので(?!す|しょう|は)|できな(?:い|かった)|失敗|成功|エラー|修正|原因|通過|完了"
    r"|때문|그래서|실패|성공|오류|에러|(?<![가-힣])원인|문제|않습니다|없습니다|못했|불가(?!피)|부정확|잘못"
    r"|потому|поэтому|ошибк|исправ|не работает|работает|нет\b",
    re.I,
)
# a change of approach, said with what the new one does ("Let me use a different approach to count speaker
# notes." after a grep failed, OpenCode; "Let me try a different approach and analyze the issues based on
# what I can see from the files", Cursor, its shell broken): both held-out sessions' facts
NEW_APPROACH = (
    r"\b(?:use|try|take|switch to|go with) (?:a different|another|a simpler) approach\b(?= +(?:to|and|by|—|-) +\w)"
)
# a decision and its reason: "X doesn't support Y, so …", "Instead, …", "I'd keep A", "(推荐)"
DECISION_CUE = re.compile(
    r"\b(?:so|instead|rather than|recommend(?:ed|ation)?|decid(?:e|ed)|chose|choose|prefer(?:red)?|"
    r"i['’]?d (?:keep|go|use|suggest)|the (?:cleanest|simplest|best|safest) (?:option|approach|fix|way)|"
    r"went with|switch(?:ed)? to|opted|trade-?off)\b|"
    + NEW_APPROACH
    + r"|推荐|建议|决定|改为|选择|所以|因此|おすすめ|推奨|決定|代わりに|추천|권장|결정(?!론)|대신|поэтому|вместо|рекоменд|решил",
    re.I,
)
# a choice the agent says it made, in an announcement's words too: "I have enough to recommend `launchctl`",
# "I've decided against `@mipmap/ic_launcher`", "推荐安装 CUDA 12.8" (not "the recommended settings")
_CHOSE = r"\b(?:i|we)(?:['’](?:ve|d|ll))?\s+(?:\w+\s+){0,4}?(?:recommend|decided|chose|prefer|went with|opted)\b"
CHOICE_MADE = re.compile(_CHOSE + "|" + NEW_APPROACH + r"|\bmy recommendation\b|推荐|建议|决定", re.I)
# a greeting, a go-ahead or an approval in so many words ("ok", "Go on.", "thanks", "Approved as-is.",
# "Not blocking.", "ok, try that"): never a goal (`faithful.is_go_ahead`) and no constraint
# (`directives.user_constraints`; the user's message still travels whole in User Messages). Three
# agents' reviewing users wrote them between real directives (Codex's "Approved." five times)
GO_AHEAD = re.compile(
    r"^\s*+(?:please\s+)?(?:(?:ok(?:ay)?|yes|yep|sure|thanks?(?: you)?|thx|great|good|nice|cool|perfect|go on|go ahead|"
    r"continue|carry on|keep going|proceed|next|done|lgtm|hi|hello|hey|fine|sounds good|looks good|do it|please do|"
    r"approved?|not blocking|y|好的?|继续|下一步|可以|はい|続けて|次へ|네|계속|"
    # the same in the European languages users write to agents in (a Russian user's "продолжай", "далее");
    # a longer word before its prefix, as the group never backtracks ("далее" before "да")
    r"далее|дальше|давай|да|ок|продолжа[йи](?:те)?|продолжить|начинай(?:те)?|готово|спасибо|хорошо|отлично|"
    r"sim|sí|si|vale|dale|sigue|continúa|adelante|listo|gracias|continua|segue|pode|obrigad[oa]|"
    r"oui|d['’]accord|vas-y|merci|suivant|ja|weiter|mach weiter|danke|passt)[\s.!,]*+)++"
    r"(?:as[- ]is|(?:please )?(?:try|do) (?:that|it)|thanks?|please)?[\s.!]*+$",
    re.IGNORECASE,
)  # possessive: "ok" and 100,000 dots had backtracked for a minute


def is_go_ahead(text: str) -> bool:
    """A greeting or go-ahead in so many words (GO_AHEAD, the text folded to one line): "ok", "Go on.",
    "продолжай"; a short result ("Tests pass.", "Committed a1b2c3d.") is none."""
    return bool(GO_AHEAD.match(" ".join((text or "").split())))


# the box-drawing characters a terminal draws a table or a frame with (Claude Code's exported
# `│ tela-time.png │ Rep cards … │`): a line that starts with one is no sentence
BOX_DRAWING = tuple(chr(c) for c in range(0x2500, 0x2580))
# where a user's sentence ends: the Goal is the request's asks sentence by sentence
# (`faithful.goal_of`), Constraints its directives (`directives.user_constraints`, at line breaks
# too), and a constraint is listed less the sentences the Goal shows (`summary.beside_goal`)
USER_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])")
# what makes a sentence name something: a code span, a number, a path, a name in code shape (a
# call too: "we need to call super().write() first"), a quoted string; a CJK sentence names what it
# names in its own script, and a capitalised or code-shaped Latin word beside its script is a name (Hermes
# on Slack in Korean: "Codex는 기본적으로 이미지 생성용이 아니라 …" had been a musing; "이건 큰 작업입니다."
# and "はい、commitします。" still are)
_NAMED = r"(?:[A-Z][A-Za-z0-9]{2,}|[a-z]+[A-Z0-9]\w*)"  # `Codex`, `ChatGPT`, `gpt4`: not `ok`, `pytest`, `commit`
SPECIFIC = re.compile(
    r"`[^`]+`|\d|(?<![\w.-])[\w.-]+/[\w.-]+|\b\w+\.\w{1,5}\b|\b[a-z]+[A-Z]\w*\b|\b[A-Z]\w*[A-Z]\w*\b|\b\w+_\w+\b"
    r"|\b[A-Za-z_]\w*\((?:\)|[\w'\"])"
    r"|\"[^\"]{2,}\"|“[^”]{2,}”|[\u3400-\u9fff]{4,}"
    r"|(?<![A-Za-z])" + _NAMED + r"(?= ?[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af])"
    r"|(?<=[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]) ?" + _NAMED + r"(?![A-Za-z])"
    r"|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|hundred|thousand|dozen)\b"
)
# a source or config file named in plain words, outside code spans ("one-line fix in memory_tool.py",
# "The Mypy errors in test_search_route.py are unrelated"): it names code as a code span does
FILE_NAME = re.compile(
    r"(?<![\w./-])[\w./-]*\w\.(?:py|ts|tsx|js|jsx|rs|go|cs|kt|java|rb|ex|exs|md|json|ya?ml|toml|sh|sql)\b"
)
# a line of code or a setting, as an agent quotes one in a code span with spaces (`autoSkip: false`,
# `{:dialyxir, "~> 1.4", only: [:dev, :test]}`, `if (yPos > height - 20) break`): brackets, an
# assignment, a `key: value` or an arrow, where a phrase in backticks (`the config file`) has none
CODE_SNIPPET = re.compile(r"[(){}\[\];]|(?<![<>!=])=(?!=)|^[\w.\-]+:\s+\S|->|=>")

# ---------------------------------------------------------------- tools, commands and results

# an agent's one tool for every MCP server's tools (Cline's, Roo Code's, IBM Bob's `use_mcp_tool`): the call it
# wraps is read as the tool it names (text._unwrapped_mcp)
MCP_WRAPPER_TOOLS = frozenset({"use_mcp_tool"})
# tools whose call is a shell command, and the argument keys a command is read from
SHELL_TOOLS = frozenset({"terminal", "bash", "shell", "run_command", "execute_command", "exec", "run", "sh", "cmd"})
COMMAND_KEYS = ("command", "cmd", "script", "commands")
# the same keys as other tools spell them (Windsurf's and Antigravity's `run_command` take
# `{"CommandLine": ...}`; a `command_line`, a `Command`): read without case or separators
_COMMAND_KEY_SPELLINGS = {"commandline": "command", **{k: k for k in COMMAND_KEYS}}


def with_command_keys(args: dict) -> dict:
    """A tool call's arguments with a command under another spelling of COMMAND_KEYS renamed to it
    (`CommandLine` → `command`), unless the call has that key too."""
    out = {}
    for key, value in args.items():
        name = _COMMAND_KEY_SPELLINGS.get(re.sub(r"[_\-\s]", "", str(key)).lower(), "")
        out[name if name and name not in args and name not in out else key] = value  # two spellings: the first
    return out


# tools that run the code they are given (Hermes's `execute_code`, OpenHands' `execute_ipython_cell`,
# a `python_repl` or `code_interpreter`): the code is a script the agent ran, as a shell's command is
CODE_TOOL = re.compile(r"execute_?code|execute_?ipython|run_?python|python_?repl|code_?interpreter|run_?code", re.I)
# argument keys that name the file a tool reads or changes
FILE_KEYS = tuple(
    "path file_path filepath filename file target_file notebook_path old_path new_path dest destination source".split()
)
# any other key that names a file in a tool's own words (Cline's `absolutePath`, `targetFile`,
# `relative_workspace_path`): one ending in path, file, filename or filepath, and not a folder's
FILE_KEY_SHAPE = re.compile(
    r"^(?:path|file|filename|filepath)$|_(?:path|file|filename|filepath)$|[a-z0-9](?:Path|File|File[Nn]ame|File[Pp]ath)$"
)
_FOLDER_KEY = re.compile(r"dir|folder|cwd|root|search|glob|pattern", re.I)


def is_file_key(key: str) -> bool:
    """An argument key that names a file (FILE_KEYS, or one of FILE_KEY_SHAPE)."""
    return key in FILE_KEYS or bool(FILE_KEY_SHAPE.search(key)) and not _FOLDER_KEY.search(key)


# a JSON tool result's exit status, under any of the names tools use
EXIT_STATUS_KEYS = ("exit_code", "exitCode", "returncode", "return_code", "exit_status", "status_code")
# a harness saying the user turned the call down, as the result's first words (Cline's, Roo Code's and Kilo
# Code's `toolDenied`: "The user denied this operation." with what it did not do; Claude Code's "The user
# doesn't want to proceed with this tool use."; Codex's "exec command rejected by user"): nothing was done
USER_REFUSED = re.compile(
    r"(?:\A|^\[[^\]\n]{1,300}\] Result:[ \t]*\n)\s*"  # the result's first words, or first after Cline's label
    r"(?P<said>The user denied this operation\b[^\n]{0,200}|The user doesn['’]t want to proceed with this tool use\."
    r"|(?:exec command|patch) rejected by user\b[^\n]{0,200})",
    re.M,
)
# a JSON tool result that says it failed: {"success": false, "error": "..."} (Hermes's file tools)
FAILED_FIELDS = {"success": False, "ok": False}
FAILED_STATUS = frozenset({"error", "failed", "failure"})
# file names that are files without an extension
SPECIAL_FILES = frozenset(
    {"Makefile", "Dockerfile", "Containerfile", "Justfile", "Procfile", "Gemfile", "Rakefile", "Vagrantfile",
     "Brewfile", "Pipfile", "Jenkinsfile", "Caddyfile", "Podfile", "LICENSE"}
)  # fmt: skip


# a document of prose (a README, a spec, an agent's CLAUDE.md): what the agent writes there is sentences; not a
# licence's boilerplate, nor a `.txt` (CMakeLists.txt, requirements.txt, a log: no prose)
PROSE_FILE = re.compile(r"(?:^|[\\/])(?!(?:LICEN[CS]E|COPYING|NOTICE)\b)[^\\/]*\.(?:md|mdx|markdown|rst|adoc)$", re.I)


# what an edit tool writes in place of what (Claude Code's and Hermes's `new_string`/`old_string`,
# Anthropic's text editor's and OpenHands' `new_str`/`old_str`, a `search`/`replace` pair, `new`/`old`)
EDIT_NEW_KEYS = ("new_string", "new_str", "newString", "new_text", "newText", "replace", "replacement", "new")
EDIT_OLD_KEYS = ("old_string", "old_str", "oldString", "old_text", "oldText", "search", "old")

# tools whose output is a file's (or a listing's) contents: what it holds is no error, result or URL
READ_TOOL = re.compile(r"read|view|open|cat|show|get|search|grep|glob|list|find|fetch|extract")
# what a tool does to the files it names, read off its name, first match wins: a change before a read
# (`search_and_replace` edits); a search's path is where it looked, no file it read
TOOL_ACTIONS = (
    ("created", re.compile(r"create|new|write")),
    ("deleted", re.compile(r"delete|remove")),
    ("edited", re.compile(r"edit|patch|replace|apply|update|insert|modify|move|rename|undo")),
    ("mentioned", SEARCH_TOOL := re.compile(r"search|grep|glob|list|find")),
    ("read", READ_TOOL),
)
# an editor tool's sub-command: Anthropic's text editor and OpenHands' and SWE-agent's
# `str_replace_editor` take `{"command": "view", "path": ...}`, one word beside a file, no shell
_SUBCOMMAND = re.compile(r"^[a-z][a-z_]{1,30}$")


def editor_subcommand(name: str, args: dict) -> str:
    """The one-word action an editor tool was given (`view`, `str_replace`, `create`), or ""."""
    if name.lower() in SHELL_TOOLS or not any(isinstance(args.get(k), str) for k in FILE_KEYS):
        return ""
    word = next((args[k] for k in ("command", "cmd", "action", "operation") if isinstance(args.get(k), str)), "")
    return word.strip() if _SUBCOMMAND.match(word.strip()) else ""


def tool_action(name: str, args: dict) -> str:
    """What a tool call does to the files it names: read, created, deleted, edited, or mentioned.
    An editor's sub-command says it before the tool's name does (`str_replace_editor` views too)."""
    for text in (editor_subcommand(name, args), name.lower()):
        for action, pattern in TOOL_ACTIONS if text else ():
            if pattern.search(text):
                return action
    return "mentioned"


# the arguments in which an editing tool states its change in one sentence (Cursor's `edit_file`
# `instructions`: "A single sentence instruction describing what you are going to do for the sketched
# edit", as Morph-style apply tools ask; Gemini CLI's `replace` `instruction`)
CHANGE_NOTE_KEYS = ("instructions", "instruction")
# the arguments in which a call states why it is made (Codex CLI's escalated `shell` `justification`,
# "Need to update git refs to determine next feature branch number"; Roo Code's `switch_mode` `reason`).
# Not an `explanation`: Cursor gives one on every call, mostly what it is about to do in the imperative
# ("Run the tests to verify the fix works.", "Give ImportMeta its env type."), which outranked findings
REASON_KEYS = ("justification", "reason")
# reading tools whose output is what a program printed, not a file (Copilot's `get_terminal_output`,
# `read_process_output`, `getTerminalOutput`): its lines are a run's result and errors
PROGRAM_OUTPUT_TOOL = re.compile(r"terminal|process|output")
# tools whose output is another agent's report (Claude Code's Task, Hermes's delegate_task)
DELEGATE_TOOL = re.compile(r"delegate|subagent|^task$|^agent$|spawn_agent")
# tools whose output is the user's own answer, and tools whose output lists what a search found
# (Claude Code's AskUserQuestion, Cursor's ask_question, Codex's request_user_input, Cline's ask_followup_question)
ASKS_USER_TOOL = re.compile(r"ask_?user|ask_?human|user_?question|clarif|ask_?question|user_?input|followup_?question")
# tools an agent tells the user through (Hermes's `send_message`, Cline's and Roo Code's
# `attempt_completion`, OpenHands' `finish`, a `notify_user` or `final_answer`), and the keys its
# words are under there: what it says through them is its report, as if it had written it
REPORT_TOOL = re.compile(
    r"send_?message|message_?user|notify_?user|attempt_?completion|final_?answer|^finish$|^(?:respond|reply)(?:_|$)",
    re.I,
)
REPORT_KEYS = ("message", "result", "text", "final_answer", "answer", "summary")
# tools that save what the agent wants to remember (Hermes's `memory`, Cursor's `update_memory`,
# Windsurf's `create_memory`, the MCP memory server's `add_observations`, a task tracker's decision or
# note on a task: OpenCode's `arbeit_context_add {"type": "decision", "content": …}`), the keys their
# text is under, and the actions that save nothing (a removal, a search)
MEMORY_TOOL = re.compile(r"memor|remember|observations|save_?note|add_?note|context_?add|add_?context", re.I)
MEMORY_KEYS = ("content", "knowledge_to_store", "memory", "text", "observations", "contents", "note", "fact")
MEMORY_NOT_SAVED = re.compile(r"remove|delete|forget|search|read|get|list|view|query|recall|retriev", re.I)
# a program pointing its reader to help, on the line of the link it prints (credo's `Please report incorrect
# results: https://…`, pip's `It is recommended to use a virtual environment instead: https://…`, pytest's
# `-- Docs: https://…`, Gradle's `Get more help at https://…`, `See https://…`): no URL of the work
HELP_POINTER = re.compile(
    r"\b(?:docs?|documentation|(?:get )?more help|help at|learn more|more (?:info(?:rmation)?|details)|report|"
    r"troubleshoot\w*|deprecat\w*|recommended|read more|see)\b",
    re.I,
)
FOUND_URLS_TOOL = re.compile(r"search|web|browse|fetch|extract|crawl")
# runners whose second word names what runs (`npm test`, `python -m pytest`): a broader run covers a narrower one
RUNNERS = ("python", "python3", "uv", "npx", "npm", "yarn", "pnpm", "cargo", "go", "make", "poetry")
# a read's output printed in full: longer than this, it is the file, not a short answer (EISDIR)
READ_ANSWER_CHARS = 400


def reads_contents(tool: str, cmd: str, args: dict | None = None) -> bool:
    """A call whose output is what it read: a reading or search tool's (not a command), or a read-only command's."""
    action = "" if cmd else tool_action(tool, args or {})
    return action == "read" or action == "mentioned" and bool(SEARCH_TOOL.search(tool.lower())) or read_only(cmd)


# a line of a file as a read prints it, after its number (SWE-agent's `73:`, Claude Code's `  73→`,
# Hermes's `73|`, `cat -n`'s `73<tab>`, `search_file`'s `Line 15:`): the file's text, never an error
NUMBERED_LINE = re.compile(r"^\s*(?:Line )?\d+(?::|\||→|\t)")
# ... and the forms only a file's echo has (`cat -n`'s tab, Claude Code's `→`), whichever tool printed it
NUMBERED_ECHO = re.compile(r"^\s*\d+(?:→|\t)")
# pytest's mark before the lines of a failure in its traceback (`E   httpcore.ConnectError: All connection …`)
PYTEST_ERROR_MARK = re.compile(r"^E\s{2,}")
# a log of a run, read back: its result line is the run's ("cat build.log", "tail -50 test-output.txt")
RUN_LOG = re.compile(r"\.(?:log|out|err)\b|\b(?:test|build|ci|pytest|jest|junit)[\w.-]*\.(?:txt|xml|json)\b", re.I)
# a program saying it failed, in the Unix shape `prog: [what: ]why` ("rm: cannot remove 'x': Device
# or resource busy", "sudo: a password is required"), in prose ("NVIDIA-SMI has failed because ...") or in
# PowerShell's words for a program it could not start ("Program 'rg.exe' failed to run: Access is denied")
PROGRAM_FAILED = re.compile(
    r"^(?-i:[a-z][\w.+-]{0,30}): .{0,300}?\b(?:cannot|can't|could not|couldn't|unable to|failed to|"
    r"a (?:password|terminal) is required|invalid (?:option|argument)|not permitted|refused|resource busy)\b"
    r"|\bhas failed because\b|\bfailed because\b|^Program '[^'\n]{1,260}' failed to run: ",
    re.I,
)
# a read's line that says why it failed in words (`The system cannot find the file specified.`, `Access is
# denied.`, `ffmpeg not found`): read only where the read printed a line or two (a file's own lines say
# "error" too); a line the read's own program leads (`cat: Cargo.toml: Is a directory`) says why whatever
READ_FAILED_WHY = re.compile(
    r"\b(?:cannot|can['’]t|could not|couldn['’]t|not found|denied|no such|error|invalid|unknown|failed|unable|"
    r"not recognized|does not exist|is a directory|permission)\b",
    re.I,
)
# a line that says only that a run failed, not why (Gradle's and Maven's BUILD FAILED, cargo's
# `could not compile`, make's `*** [all] Error 1`, npm's lifecycle lines, yarn's and CI runners'
# exit lines): an error of its own only when nothing else in the output says more
GENERIC_FAILURE = re.compile(
    r"^\s*(?:\[\w+\]\s*|\*\*\s*)?BUILD FAIL(?:ED|URE)\b(?:\s+in\s+\S+)?\s*\**\s*$"
    r"|^\s*FAILURE: Build (?:failed with an exception|completed with \d+ failures?)\.?\s*$"
    r"|^\s*Build FAILED\.?\s*$"
    r"|^\s*error: could not compile\b"
    r"|^\s*(?:npm ERR!|npm error) (?:code E?LIFECYCLE|errno \d+|Exit status \d+|Failed at the \S+ script|"
    r"(?:A complete log|Lifecycle script)\b)"
    r"|^\s*(?:g?make(?:\[\d+\])?: )?\*\*\* \[[^\]\n]{0,200}\] Error \d+\s*$"
    r"|^\s*error Command failed with exit code \d+\.?\s*$"
    r"|^\s*(?:Error: )?Process (?:completed|finished) with exit code \d+\.?\s*$",
    re.I,
)
# a comment line in a script passed as one command (`python3 <<'EOF'` ... `# Reproduce the 64KB hang`):
# what the script is for, in the agent's words; a markdown heading written by a heredoc is none
SCRIPT_COMMENT = re.compile(r"^\s*(?:#(?![#!])|//)\s*(\S+(?:\s+\S+){2,})\s*$")
# a command the user typed to the agent itself (`/add x`, `/undo`, `/clear`): no work of the agent's. A chat
# command's words in another script may follow with no space (`/ask从代码结构来看…`), a folder's never do (`/backend下的…`)
SLASH_COMMAND = re.compile(
    r"^\s*/(?:[a-z][\w-]*(?=\s|$)|(?:ask|code|architect|add|drop|run|test|undo|clear|commit|help|web|compact|init)"
    r"(?=[^\x00-\x7f]))"
)
