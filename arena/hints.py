"""The usual mistake behind a bot's failure, in words its author can act on, and its stderr's warnings.

Pure functions of what a failed game records (its termination reason, detail and evidence, and for
an illegal action the legal actions the bot was offered), so `arena bot check` and `arena failures`
give the same hints:

- no `ready`, or no answer before the deadline: is stdout flushed after each line? (the idiom for
  Python, Node, C and Perl);
- a line on stdout that is not JSON: stdout is for the protocol, logs go to stderr;
- an illegal action: the legal action nearest to it and the field that differs (`"4"` the string
  where the legal action has `4` the integer, a key's name, a card's letter case).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

# (language, how its bot flushes each line): the kits' languages and Perl, the one authors try most.
FLUSH_IDIOMS: tuple[tuple[str, str], ...] = (
    ("Python", "print(line, flush=True), or sys.stdout.reconfigure(line_buffering=True) once"),
    ("Node", "process.stdout.write(line + \"\\n\") or console.log(line), with no buffering "
     "stream wrapped around stdout"),
    ("C", "fflush(stdout) after each line, or setvbuf(stdout, NULL, _IOLBF, 0) once at start"),
    ("Perl", "$| = 1; at the top (autoflush STDOUT)"),
)
# A manifest's `language` (lower case) -> the FLUSH_IDIOMS entry that fits it.
_LANGUAGES = {"python": "Python", "python3": "Python", "py": "Python", "node": "Node",
              "javascript": "Node", "js": "Node", "typescript": "Node", "ts": "Node", "c": "C",
              "c++": "C", "cpp": "C", "perl": "Perl", "pl": "Perl"}

LOG_TO_STDERR = ("stdout is for the protocol: log to stderr (Python: print(..., file=sys.stderr); "
                 "Node: console.error; C: fprintf(stderr, ...); Perl: print STDERR ...)")

# A stderr line that looks like a warning or an error (Perl's "Use of uninitialized value", a
# Python traceback, a deprecation, a C runtime's abort...).
WARNING_LINE = re.compile(
    r"warn|error|uninitiali[sz]ed|traceback|exception|deprecat|fatal|panic|segmentation fault|"
    r"abort|core dumped", re.IGNORECASE)
# The runner's own notes in a bot's log, and the marker where bytes were dropped: not the bot's.
_RUNNER_LINE = re.compile(r"^(arena: |\[… \d+ bytes dropped …\]$)")
_DROPPED = re.compile(r"\[… (\d+) bytes dropped …\]")


def flush_hint(language: str = "") -> str:
    """"Is stdout flushed after each line?" with the idiom of `language` (all four when unknown)."""
    wanted = _LANGUAGES.get(language.strip().lower())
    idioms = [i for i in FLUSH_IDIOMS if i[0] == wanted] or list(FLUSH_IDIOMS)
    return ("is stdout flushed after each line? A bot whose output sits in a buffer never "
            "answers. " + "; ".join(f"{lang}: {idiom}" for lang, idiom in idioms))


def hint(reason: str, detail: str = "", evidence: str = "", legal: list | None = None,
         language: str = "") -> str | None:
    """The usual mistake behind a failure of `reason` (a Termination value), or None."""
    if reason == "startup_failure":
        if "no ready within" in detail:
            return "no `ready` came: " + flush_hint(language)
        if "not valid JSON" in detail:
            return LOG_TO_STDERR
        if "exited" in detail or "closed" in detail:
            return ("the bot exited before its `ready`: its stderr says why (run its command by "
                    "hand and paste a `hello` line to see it start)")
        return None
    if reason == "timeout":
        if "did not read" in detail:
            return ("the bot stopped reading its stdin: read every line as it comes, even "
                    "while thinking")
        return ("no answer before the deadline: if the bot is not just slow, "
                + flush_hint(language))
    if reason == "bad_message":
        if "not valid JSON" in detail or not _is_json(evidence):
            return LOG_TO_STDERR
        return None
    if reason == "illegal_action" and legal:
        sent = sent_action(evidence)
        if sent is _NOTHING:
            return None
        return nearest_legal_hint(sent, legal)
    return None


_NOTHING = object()


def sent_action(evidence: str) -> Any:
    """The `action` of the line a bot sent (an illegal action's evidence), or _NOTHING."""
    try:
        message = json.loads(evidence)
    except (ValueError, TypeError):
        return _NOTHING
    if isinstance(message, dict) and "action" in message:
        return message["action"]
    return _NOTHING


def nearest_legal_hint(sent: Any, legal: list) -> str:
    """The legal action nearest to `sent` and what differs, in words."""
    if (isinstance(sent, int) and not isinstance(sent, bool) and 0 <= sent < len(legal)
            and not any(isinstance(a, int) for a in legal)):
        return (f"{_show(sent)} looks like an index into legal_actions: send the element itself, "
                f"e.g. {_show(legal[sent])}")
    best, diffs = nearest_legal(sent, legal)
    return f"the nearest legal action is {_show(best)}: " + "; ".join(diffs[:3])


def nearest_legal(sent: Any, legal: list) -> tuple[Any, list[str]]:
    """The legal action that differs least from `sent`, and the differences as phrases."""
    scored = [(_distance(sent, action, "action"), i) for i, action in enumerate(legal)]
    (cost, diffs), i = min(scored, key=lambda s: (s[0][0], s[1]))
    return legal[i], diffs or ["it differs only in JSON types the protocol keeps apart"]


def _distance(a: Any, b: Any, path: str) -> tuple[float, list[str]]:
    """How far the bot's value `a` is from the legal value `b`, and where (JSON paths)."""
    if type(a) is type(b) and a == b:
        return 0.0, []
    if isinstance(a, dict) and isinstance(b, dict):
        cost, diffs = 0.0, []
        extra = [k for k in a if k not in b]
        for key in b:
            if key in a:
                c, d = _distance(a[key], b[key], f"{path}.{key}")
                cost, diffs = cost + c, diffs + d
                continue
            near = next((k for k in extra if k.lower() == key.lower()
                         or k.rstrip("s") == key.rstrip("s")), None)
            if near is not None:
                extra.remove(near)
                c, d = _distance(a[near], b[key], f"{path}.{key}")
                cost += 0.5 + c
                diffs += [f"the key {_show(near)} where legal actions have {_show(key)}"] + d
            else:
                cost += 1
                diffs.append(f"{path}.{key} is missing")
        cost += len(extra)
        diffs += [f"{path}.{k} is not a key of legal actions" for k in extra]
        return cost, diffs
    if isinstance(a, list) and isinstance(b, list):
        cost, diffs = float(abs(len(a) - len(b))), []
        if len(a) != len(b):
            diffs.append(f"{path} has {len(a)} elements where the legal action has {len(b)}")
        for i, (x, y) in enumerate(zip(a, b)):
            c, d = _distance(x, y, f"{path}[{i}]")
            cost, diffs = cost + c, diffs + d
        return cost, diffs
    here = f"at {path}: " if path != "action" else ""
    if isinstance(a, str) and _is_number(b) and a.strip() == json.dumps(b):
        return 0.25, [f"{here}{_show(a)} the string where the legal action has {_show(b)} the "
                      f"{_kind(b)}"]
    if _is_number(a) and isinstance(b, str) and b == json.dumps(a):
        return 0.25, [f"{here}{_show(a)} the {_kind(a)} where the legal action has {_show(b)} "
                      "the string"]
    if isinstance(a, str) and isinstance(b, str) and a.lower() == b.lower():
        return 0.25, [f"{here}{_show(a)} where the legal action has {_show(b)} (letter case "
                      "differs)"]
    if type(a) is not type(b) and a == b:  # true for 1, 1.0 for 1: JSON keeps them apart
        return 0.25, [f"{here}{_show(a)} the {_kind(a)} where the legal action has {_show(b)} "
                      f"the {_kind(b)}"]
    same_kind = isinstance(a, type(b)) or isinstance(b, type(a))
    return (1.0 if same_kind else 2.0), [f"{here}{_show(a)} where the legal action has {_show(b)}"]


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    return "integer" if isinstance(value, int) else "number"


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except (ValueError, TypeError):
        return False
    return True


def _show(value: Any, limit: int = 120) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    return text if len(text) <= limit else text[:limit - 1] + "…"


def stderr_size(log: str) -> int:
    """Bytes the bot wrote to stderr: what a bounded log kept plus what its markers say it dropped."""
    kept = _DROPPED.sub("", log)
    return len(kept.encode()) + sum(int(n) for n in _DROPPED.findall(log))


def stderr_warnings(log: str) -> list[tuple[str, int]]:
    """The bot's stderr lines that look like warnings or errors: (line, times), first seen first."""
    counts = Counter(line.strip() for line in log.splitlines()
                     if WARNING_LINE.search(line) and not _RUNNER_LINE.match(line.strip()))
    return list(counts.items())
