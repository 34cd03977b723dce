"""A paste's own words: which lines of a message are tool output (tables, logs, JSON, "key: value" reports) and which
are the person's words around it, and whether a message holds tool output at all."""

from __future__ import annotations

import re

_TOOL_LINE = re.compile(
    r"llama_print_timings|llama_perf|prompt eval (?:rate|time|count|duration)|^\s*eval (?:rate|count|duration)|"
    r"load duration|total duration|^\s*\|.*\|\s*$|tokens-per-sec|peak memory|\"(?:prompt_per_second|"
    r"predicted_per_second|eval_count|eval_duration|prompt_eval_count|tokensPerSecond|timeToFirstTokenSec|"
    r"predictedTokensCount|promptTokensCount|avg_ts|prompt_eval_duration|total_duration|load_duration|n_prompt|"
    r"n_gen|model_filename|build_commit)\"|successful requests|"
    r"throughput \(|avg generation throughput:|preempted by preemptionmode|^\s*(?:ggml|llm_load|llama_model_load|main|system_info)\w*:|^\s*Device\s+\d+:", re.I | re.M)


# Not the person's words: tables, JSON, "====" rules, "key: value" lines of a tool's report ("Mean TPOT (ms): 40.0"),
# flags. A "TP=2" inside a sentence is still a sentence.
_NOT_PROSE = re.compile(r"[|{}]|={2,}|(?<![\w)])=|^\s*\w+=|\":|^\s*(?:\w+_)+\w*\s*:|"
                        r"^\s*[\w ()/%.-]{1,40}:\s+[\d.,]+\s*\S*\s*$", re.M)
# "TP=2 on 2x H100 SXM, Llama 3.3 70B FP8, 32 users": a setting followed by a sentence is the person's words
_KEY_THEN_WORDS = re.compile(r"^\s*\w+=\S+\s+(?:\S+\s+){3,}\S", re.I)
_FLAG = re.compile(r"--\w")  # a command's flag: words only when the line has four or more words besides


# A short line naming a machine beside a paste ("RTX 3060 12GB", "M2 Max 64GB", "on my 4090"): a word and a number.
# A heading's colon is not part of it ("RTX 4090:", "M2 Max 64GB:"); a card's bare number alone ("4090") is a name too.
_SHORT_NAME = re.compile(r"^(?:(?=.*[A-Za-z]{2})(?=.*\d)(?!.*:\s)[\w .,;:+/()@?!-]{3,60}|\d{3,4}(?:\s?(?:ti|xtx|xt|super))?)$",
                         re.I)  # "RTX 4090, llama 3.1 8b"


# A command line with words after it: "ollama run gemma3:27b --verbose on my Mac Studio M2 Max 32GB, feels slow:".
_COMMAND_THEN_WORDS = re.compile(r"^\s*\$?\s*(?:ollama\s+run|llama-(?:cli|server|bench)|\./\S+|mlx_lm[.\w]*|python3?\s+-m\s+\S+)"
                                 r"(?:\s+(?:--?[\w-]+(?:[= ]\S+)?|\S+:\S+|\S+\.gguf|\S+/\S+))*\s+(?P<words>(?:on|with|using|in|for)\b.*)$",
                                 re.I)


def _after_command(line: str) -> str:
    """The words after a command line's arguments ("… --verbose on my M2 Max, feels slow" → "on my M2 Max, feels
    slow"); other lines unchanged."""
    m = _COMMAND_THEN_WORDS.match(line)
    return m.group("words") if m else line


def prose_lines(text: str) -> str:
    """The user's own words around a pasted tool output: lines that are not tables, JSON or logs (sentences of three
    words or more, or a short line with a name and a number, such as the machine)."""
    from advisor.importers._normalise import PROSE_BEFORE_TABLE

    lines = [m.group(1) if (m := PROSE_BEFORE_TABLE.match(ln)) else _after_command(ln) for ln in text.splitlines()]
    keep = [ln for ln in lines if not _TOOL_LINE.search(ln)
            and (not _NOT_PROSE.search(ln) or _KEY_THEN_WORDS.match(ln))
            and (not _FLAG.search(ln) or len(re.findall(r"(?<![-\w])[A-Za-z]{2,}", ln)) >= 4)
            and (len(re.findall(r"[A-Za-z]{2,}", ln)) >= 3 or _SHORT_NAME.match(ln.strip().rstrip(":-–— ")))]
    return "\n".join(keep)


def looks_like_tool_output(text: str) -> bool:
    """True when the text holds several lines of a benchmark tool's output (llama-bench, ollama, ...)."""
    if _BENCH_ROW.search(text) or _BENCH_CSV.search(text):  # one llama-bench row; llama-bench -o csv's header
        return True
    if text.count("\n") < 2:
        return False
    return len(_TOOL_LINE.findall(text)) >= 2


_BENCH_CSV = re.compile(r"^\s*\"?build_commit\"?\s*,|,\s*\"?avg_ts\"?\s*,\s*\"?stddev_ts\b", re.M)
_BENCH_ROW = re.compile(r"^[^|\n]*\|(?:[^|\n]*\|){3,}\s*(?:pp|tg|pg)\s*\d+[^|\n]*\|\s*[\d.,]+\s*(?:±\s*[\d.,]+\s*)?\|?\s*$",
                        re.M | re.I)
