"""llama.cpp's own timing reports: ``llama_print_timings``/``llama_perf`` lines, llama-server
timings (JSON ``timings`` object and log lines) and llama-batched-bench tables.

Rates are tokens per second as printed; times in the source are milliseconds.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from advisor.importers._registry import Example, Importer, signature
from advisor.importers._util import (
    NUM,
    RATE_AGREES,
    Outcome,
    derive_rate,
    guess_decimal_comma,
    is_rate,
    parse_number,
    split_table_row,
    to_float,
    to_int,
)

__all__ = ["IMPORTERS", "from_batched_json", "from_server_json", "parse_batched", "parse_timings"]

_PREFIX = re.compile(r"\b(llama_print_timings|llama_perf_\w+?_print|common_perf_print|print_timings?)\s*:\s*")
_PREFIX_FORMAT = {
    "llama_print_timings": "llama-print-timings",
    "print_timing": "llama-server-log",
    "print_timings": "llama-server-log",
}
_TIMING = re.compile(
    rf"^\s*(?P<what>load|sample|sampling|prompt eval|generation eval|eval|total)\s+time\s*=\s*(?P<ms>{NUM})\s*ms"
    rf"(?:\s*/\s*(?P<n>{NUM})\s*(?:tokens?|runs?))?"
    rf"(?:\s*\(\s*(?P<mspt>{NUM})\s*ms per (?:token|run)\s*(?:,\s*(?P<tps>{NUM})\s*tokens per second\s*)?\))?\s*(?:\|.*)?$",
    re.I,
)
# llama-server's JSON log lines (2024) carry the same text in "msg".
_JSON_LOG = re.compile(r'"function"\s*:\s*"print_timings".*?"msg"\s*:\s*"([^"]*)"')
# llama-cli since late 2025 prints one line per reply.
_CLI_STATS = re.compile(
    rf"\[\s*Prompt:\s*(?P<pp>{NUM})\s*t/s\s*\|\s*Generation:\s*(?P<tg>{NUM})\s*t/s\s*\]", re.I
)
_WHAT = {"sampling": "sample", "prompt eval": "prompt", "generation eval": "eval"}
_OTHER_PERF = re.compile(r"^\s*[\w ]+=\s*\S")  # e.g. "graphs reused = 12" under a llama_perf prefix
_SLOT = re.compile(r"\bslot\s+print_timing:.*$|^\s*draft acceptance rate\s*=.*$")


def _timing_format(prefix: str | None) -> str:
    if prefix is None:
        return "llama-server-log"
    return _PREFIX_FORMAT.get(prefix, "llama-perf")




class _TimingBlock:
    """The lines of one run: load, prompt eval, eval, total."""

    def __init__(self) -> None:
        self.parts: dict[str, re.Match[str]] = {}
        self.first_line: int | None = None
        self.comma = False
        self.warnings: list[str] = []

    def rate(self, what: str) -> tuple[float | None, int | None]:
        """(tok/s, tokens) of one line: the printed rate (else time ÷ count). The tool prints its rate from the time
        and the count; a printed rate over :data:`RATE_AGREES` away from them (an edited line) is not kept, and said."""
        m = self.parts.get(what)
        if m is None:
            return None, None
        n = parse_number(m.group("n"), self.comma)
        tps = parse_number(m.group("tps"), self.comma)
        ms = parse_number(m.group("ms"), self.comma) or 0
        derived = derive_rate(n, ms / 1000)
        # the printed time is rounded to 0.01 ms: the rate it allows spans that rounding, and RATE_AGREES beyond
        fast, slow = derive_rate(n, max(ms - 0.01, 1e-6) / 1000), derive_rate(n, (ms + 0.01) / 1000)
        if tps is None:
            tps = derived
        elif derived and fast and slow and not slow * (1 - RATE_AGREES) <= tps <= fast * (1 + RATE_AGREES):
            # the tool prints its rate from the time and the count: a line that disagrees was edited or mixed
            self.warnings.append(f"{m.group('what')}: the printed {tps:g} tokens per second disagrees with its own "
                                 f"{m.group('ms')} ms for {m.group('n')} tokens ({derived:.4g} tok/s): not kept")
            tps = None
        return tps, to_int(n)

    def fields(self) -> dict[str, Any] | None:
        if "prompt" not in self.parts and "eval" not in self.parts:
            return None
        prefill, n_prompt = self.rate("prompt")
        decode, n_gen = self.rate("eval")
        load = self.parts.get("load")
        load_ms = parse_number(load.group("ms"), self.comma) if load else None
        return {
            "prefill_tps": prefill,
            "prompt_tokens": n_prompt,
            "decode_tps": decode,
            "gen_tokens": n_gen,
            "load_s": round(load_ms / 1000, 6) if load_ms is not None else None,
        }


def _bad_rate(m: re.Match[str], comma: bool) -> str | None:
    """Why a prompt-eval/eval line's printed rate cannot be used, or None if it can."""
    if m.group("tps") is None:
        return None
    return None if is_rate(parse_number(m.group("tps"), comma)) else m.group("tps")


def parse_timings(lines: Sequence[str]) -> Outcome:
    """Read ``llama_print_timings:`` / ``llama_perf_context_print:`` blocks and llama-server log timings.

    One measurement per run: ``prompt eval`` gives ``prefill_tps`` and ``prompt_tokens``, ``eval``
    gives ``decode_tps`` and ``gen_tokens`` (its "runs"), ``load time`` gives ``load_s``.
    """
    out = Outcome("")
    block = _TimingBlock()

    def flush() -> None:
        nonlocal block
        fields = block.fields()
        if fields is not None and block.first_line is not None:
            out.add(block.first_line, fields, f"timings at line {block.first_line + 1}")
            out.warnings += [f"line {block.first_line + 1}: {w}" for w in block.warnings]
        block = _TimingBlock()

    for i, line in enumerate(lines):
        if _SLOT.search(line):
            out.consumed.add(i)
            continue
        if cli := _CLI_STATS.search(line):
            out.fmt = out.fmt or "llama-perf"
            fields = {
                "prefill_tps": parse_number(cli.group("pp")),
                "decode_tps": parse_number(cli.group("tg")),
            }
            if out.add(i, fields, f"line {i + 1}"):
                out.consumed.add(i)
            continue
        log = _JSON_LOG.search(line)
        pm = None if log else _PREFIX.search(line)
        rest = log.group(1) if log else line[pm.end() :] if pm else line
        m = _TIMING.match(rest)
        if m is None:
            if pm and _OTHER_PERF.match(rest):
                out.consumed.add(i)
            continue
        out.fmt = out.fmt or _timing_format(pm.group(1) if pm else None)
        what = _WHAT.get(m.group("what").lower(), m.group("what").lower())
        if (what == "load" and block.parts) or what in block.parts:
            flush()
        comma = guess_decimal_comma(v for v in m.groupdict().values() if v and v[0].isdigit())
        bad = _bad_rate(m, comma) if what in ("prompt", "eval") else None
        if bad is not None:
            out.warnings.append(f"line {i + 1}: {m.group('what')} rate {bad!r} is not a usable number")
            continue
        block.comma = block.comma or comma
        block.parts[what] = m
        block.first_line = i if block.first_line is None else block.first_line
        out.consumed.add(i)
        if what == "total":
            flush()
    flush()
    out.fmt = out.fmt or "llama-perf"
    return out


def from_server_json(obj: dict[str, Any], out: Outcome, line: int) -> bool:
    """Add the measurement of a llama-server response's ``timings`` object (or the object itself).

    ``prompt_n`` excludes the ``cache_n`` tokens reused from the KV cache; those become ``depth``
    and ``cached_tokens``.
    """
    t = obj["timings"] if isinstance(obj.get("timings"), dict) else obj
    prompt_n, gen_n, cache_n = (
        to_int(t.get("prompt_n")),
        to_int(t.get("predicted_n")),
        to_int(t.get("cache_n")),
    )
    prefill = to_float(t.get("prompt_per_second"))
    if prefill is None and prompt_n:
        prefill = derive_rate(prompt_n, (to_float(t.get("prompt_ms")) or 0) / 1000)
    decode = to_float(t.get("predicted_per_second"))
    if decode is None and gen_n:
        decode = derive_rate(gen_n, (to_float(t.get("predicted_ms")) or 0) / 1000)
    notes = []
    if prompt_n == 0:
        prefill = None
        notes.append("the whole prompt came from the KV cache (prompt_n 0): no prefill rate")
    elif prompt_n is not None and prompt_n < 16:
        notes.append(f"only {prompt_n} new prompt token(s) were evaluated: the prefill rate says little")
    drafted, accepted = to_int(t.get("draft_n")), to_int(t.get("draft_n_accepted"))
    if drafted:
        notes.append(f"speculative decoding: {accepted or 0}/{drafted} draft tokens accepted")
    model = obj.get("model") if isinstance(obj.get("model"), str) else None
    fields = {
        "prefill_tps": prefill,
        "decode_tps": decode,
        "prompt_tokens": prompt_n,
        "gen_tokens": gen_n,
        "depth": cache_n,
        "cached_tokens": cache_n,
        "model": model,
        "notes": notes,
    }
    return out.add(line, fields, f"llama-server timings at line {line + 1}")


_MAIN = re.compile(r"^\s*main:\s*(n_kv_max\s*=.*)$")
_PAIR = re.compile(r"(?<!\w)(\w+)\s*=\s*([^,]+)")
_BATCHED_NOTES = ("flash_attn", "is_pp_shared", "n_ubatch")


def _batched_config(settings: dict[str, str]) -> dict[str, Any]:
    notes = [f"{k}={settings[k]}" for k in _BATCHED_NOTES if k in settings]
    return {
        "n_gpu_layers": to_int(settings.get("n_gpu_layers")),
        "threads": to_int(settings.get("n_threads")),
        "notes": notes,
    }


def _batched_row(row: dict[str, str], config: dict[str, Any]) -> tuple[dict[str, Any] | None, str]:
    comma = guess_decimal_comma(re.findall(NUM, " ".join(row.values())))
    counts = {k: to_int(parse_number(row.get(k), comma)) for k in ("pp", "tg", "b")}
    if any(v is None for v in counts.values()):
        return None, "PP, TG or B is not a whole number"
    fields: dict[str, Any] = {"prompt_tokens": counts["pp"], "gen_tokens": counts["tg"], "batch": counts["b"]}
    for col, key, count in (("s_pp t/s", "prefill_tps", "pp"), ("s_tg t/s", "decode_tps", "tg")):
        if counts[count] == 0:
            continue
        v = parse_number(row.get(col), comma)
        if not is_rate(v):
            return None, f"{col.upper()} {row.get(col)!r} is not a usable rate"
        fields[key] = v
    return {**config, **fields, "notes": list(config.get("notes", []))}, ""


def parse_batched(lines: Sequence[str]) -> Outcome:
    """Read llama-batched-bench tables: one measurement per row (``batch`` = B, aggregate rates).

    ``S_PP t/s`` → ``prefill_tps``, ``S_TG t/s`` → ``decode_tps``, ``PP``/``TG`` → token counts;
    the ``main:`` line gives ``n_gpu_layers`` and ``threads``.
    """
    out = Outcome("batched-bench")
    header: list[str] | None = None
    config: dict[str, Any] = {}
    for i, line in enumerate(lines):
        main = _MAIN.match(line)
        if main:
            settings = {k: v.strip() for k, v in _PAIR.findall(main.group(1))}
            out.machine.update(settings)
            config = _batched_config(settings)
            out.consumed.add(i)
            continue
        cells = split_table_row(line) if line.strip() else None
        if cells is None:
            continue
        names = [re.sub(r"\s+", " ", c).lower() for c in cells]
        if {"pp", "tg", "b"} <= set(names) and any(n.startswith("s_") for n in names):
            header = names
            out.consumed.add(i)
        elif header is not None and all(re.fullmatch(r":?-+:?", c) for c in cells if c):
            out.consumed.add(i)
        elif header is not None:
            if len(cells) != len(header):
                out.warnings.append(f"line {i + 1}: {len(cells)} cells under a {len(header)}-column header")
                continue
            fields, why = _batched_row(dict(zip(header, cells, strict=True)), config)
            if fields is None:
                out.warnings.append(f"line {i + 1}: {why}")
            elif out.add(i, fields, f"line {i + 1}"):
                out.consumed.add(i)
    return out


def from_batched_json(obj: dict[str, Any], out: Outcome, line: int) -> bool:
    """Add one llama-batched-bench ``--output-format jsonl`` record (``pp, tg, pl, speed_pp, speed_tg``)."""
    pp, tg, pl = to_int(obj.get("pp")), to_int(obj.get("tg")), to_int(obj.get("pl"))
    config = _batched_config({k: str(v) for k, v in obj.items() if not isinstance(v, dict | list)})
    fields = {
        **config,
        "prompt_tokens": pp,
        "gen_tokens": tg,
        "batch": pl,
        "prefill_tps": to_float(obj.get("speed_pp")) if pp else None,
        "decode_tps": to_float(obj.get("speed_tg")) if tg else None,
    }
    return out.add(line, fields, f"batched-bench record at line {line + 1}")


def _is_server_timings(obj: dict[str, Any]) -> bool:
    timings = obj.get("timings")
    if isinstance(timings, dict) and any(
        k in timings for k in ("prompt_n", "predicted_n", "predicted_per_second")
    ):
        return True
    return any(k in obj for k in ("prompt_per_second", "predicted_per_second")) and any(
        k in obj for k in ("prompt_n", "predicted_n")
    )


def _is_batched_record(obj: dict[str, Any]) -> bool:
    return any(k in obj for k in ("speed_pp", "speed_tg")) or ("pl" in obj and "pp" in obj and "tg" in obj)


_PERF_LINES = (
    "{p}: prompt eval time =     927.17 ms /    49 tokens (   18.92 ms per token,    52.85 tokens per second)\n"
    "{p}:        eval time =   14085.85 ms /   178 runs   (   79.13 ms per token,    12.64 tokens per second)\n"
    "{p}:       total time =   20699.49 ms /   227 tokens"
)
_PERF_EXPECTED = ({"prefill_tps": 52.85, "decode_tps": 12.64, "prompt_tokens": 49, "gen_tokens": 178},)
_SERVER_LOG = (
    "[42027] 1.37.495.377 I slot print_timing: id  0 | task 388 | \n"
    "[42027] prompt eval time =     789.03 ms /    27 tokens (   29.22 ms per token,    34.22 tokens per second)\n"
    "[42027]        eval time =   16112.50 ms /   192 tokens (   83.92 ms per token,    11.92 tokens per second)\n"
    "[42027]       total time =   16901.53 ms /   219 tokens"
)

IMPORTERS = (
    Importer(
        name="batched-bench",
        engine="llama.cpp",
        describe="llama-batched-bench table or JSONL (one row per batch size B)",
        signature=signature(r"^\s*\|?\s*PP\s*[|\t]\s*TG\s*[|\t]\s*B\s*[|\t]", re.I),
        parse_text=parse_batched,
        json_test=_is_batched_record,
        from_json=from_batched_json,
        order=13,
        examples=(
            Example(
                "|    PP |     TG |    B |   N_KV |   T_PP s | S_PP t/s |   T_TG s | S_TG t/s |      T s |    S t/s |\n"
                "|-------|--------|------|--------|----------|----------|----------|----------|----------|----------|\n"
                "|   128 |    128 |    8 |   2048 |    0.751 |  1363.27 |    7.344 |   139.43 |    8.095 |   252.99 |",
                ({"prefill_tps": 1363.27, "decode_tps": 139.43, "batch": 8, "backend": "llama.cpp"},),
            ),
        ),
    ),
    Importer(
        name="llama-server-log",
        engine="llama.cpp",
        describe="llama-server log: prompt eval time = ... / eval time = ... lines (any log prefix, JSON log lines)",
        signature=signature(
            r"^\s*(?:print_timings?:\s*)?(?:prompt eval|eval) time\s*=.*tokens per second"
            r"|\"function\":\s*\"print_timings\""
        ),
        parse_text=parse_timings,
        order=14,
        examples=(
            Example(
                _SERVER_LOG, ({"prefill_tps": 34.22, "decode_tps": 11.92, "gen_tokens": 192},), "pid prefix"
            ),
            Example(
                "INFO [           print_timings] prompt eval time     =     474.63 ms /    20 tokens (   23.73 ms per"
                ' token,    42.14 tokens per second) | tid="1" timestamp=1715961466 id_slot=0 id_task=0\n'
                "INFO [           print_timings] generation eval time =    2217.49 ms /    64 runs   (   34.65 ms per"
                ' token,    28.86 tokens per second) | tid="1" timestamp=1715961466 id_slot=0 id_task=0',
                ({"prefill_tps": 42.14, "decode_tps": 28.86, "prompt_tokens": 20, "gen_tokens": 64},),
                "2024 text log with a level and a function tag",
            ),
        ),
    ),
    Importer(
        name="llama-server-timings",
        engine="llama.cpp",
        describe="llama-server per-response timings JSON (cache_n, prompt_n, prompt_per_second, ...)",
        json_test=_is_server_timings,
        from_json=from_server_json,
        order=14,
        examples=(
            Example(
                '{"timings": {"cache_n": 236, "prompt_n": 1, "prompt_per_second": 32.3, "predicted_n": 35, '
                '"predicted_per_second": 52.94}}',
                ({"prefill_tps": 32.3, "decode_tps": 52.94, "depth": 236},),
            ),
        ),
    ),
    Importer(
        name="llama-print-timings",
        engine="llama.cpp",
        describe="llama_print_timings: lines (older llama.cpp)",
        signature=signature(r"^\s*llama_print_timings:"),
        parse_text=parse_timings,
        order=15,
        examples=(Example(_PERF_LINES.format(p="llama_print_timings"), _PERF_EXPECTED),),
    ),
    Importer(
        name="llama-perf",
        engine="llama.cpp",
        describe="llama_perf_context_print: / common_perf_print: lines; llama-cli's [ Prompt: X t/s | Generation: Y t/s ]",
        signature=signature(
            r"^\s*(?:llama|common)_perf(?:_\w+)?_print:"
            r"|\[\s*Prompt:\s*[\d.,]+\s*t/s\s*\|\s*Generation:\s*[\d.,]+\s*t/s\s*\]"
        ),
        parse_text=parse_timings,
        order=16,
        examples=(
            Example(_PERF_LINES.format(p="llama_perf_context_print"), _PERF_EXPECTED),
            Example(_PERF_LINES.format(p="common_perf_print"), _PERF_EXPECTED, "newest prefix"),
            Example(
                "[ Prompt: 512.3 t/s | Generation: 44.1 t/s ]", ({"prefill_tps": 512.3, "decode_tps": 44.1},)
            ),
        ),
    ),
)
