"""vLLM's server log: the periodic metrics line and the KV-cache preemption warning.

Every few seconds (``--log-stats``, on by default) ``vllm serve`` prints, V0 and V1 engines alike::

    INFO ... metrics.py:455] Avg prompt throughput: 812.4 tokens/s, Avg generation throughput: 96.3 tokens/s,
        Running: 14 reqs, Swapped: 0 reqs, Pending: 17 reqs, GPU KV cache usage: 99.6%, CPU KV cache usage: 0.0%.
    INFO ... loggers.py:116] Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 47.8
        tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 0.1%, Prefix cache hit rate: 0.0%

and, when the KV cache runs out, ``Sequence group ... is preempted by PreemptionMode.RECOMPUTE mode because there
is not enough KV cache space ... total_num_cumulative_preemption=51`` (V0) or a ``preempted`` count (V1).

One measurement comes from the busiest interval (most requests running; the highest generation throughput among
those): ``decode_tps`` = the generation throughput summed over the ``batch`` = running requests, ``tpot_s`` =
running ÷ throughput (each stream's own time per token). The prompt throughput is averaged over the interval,
idle time included, so it is no prefill rate and is not read as one. The KV cache facts (the highest usage, the
most requests waiting, preemptions) go to ``Outcome.machine`` (``kv_full`` when the cache ran out).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from advisor.importers._registry import Example, Importer, signature
from advisor.importers._util import Outcome, parse_number

__all__ = ["IMPORTERS", "KV_FULL_USAGE", "parse_log"]

_LINE = re.compile(
    r"Avg prompt throughput:\s*(?P<pp>[\d.]+)\s*tokens/s,\s*Avg generation throughput:\s*(?P<tg>[\d.]+)\s*tokens/s,"
    r"\s*Running:\s*(?P<run>\d+)\s*reqs?"
    r"(?:,\s*Swapped:\s*(?P<swap>\d+)\s*reqs?)?"
    r"(?:,\s*(?:Pending|Waiting):\s*(?P<wait>\d+)\s*reqs?)?"
    r"(?:,\s*GPU KV cache usage:\s*(?P<kv>[\d.]+)\s*%)?", re.I)
_PREEMPT = re.compile(r"preempted by PreemptionMode\.\w+|not enough KV cache space|"
                      r"total_num_cumulative_preemption=(?P<n>\d+)|Preempted:\s*(?P<n1>\d+)", re.I)
# No stream decodes faster than this (tok/s): the fastest small models on the fastest GPUs write 1,000–2,000 tok/s
# a stream; a log line above it × its running requests is not a server's (a typo, an edited paste)
MAX_STREAM_TPS = 5000.0
KV_FULL_USAGE = 95.0  # GPU KV cache usage (%) that, with requests waiting, means the cache is what holds them back


def parse_log(lines: Sequence[str]) -> Outcome:
    """Read vLLM's metrics lines and preemption warnings into one loaded-server measurement."""
    out = Outcome("vllm-metrics")
    rows: list[tuple[int, float, float, int, int, float]] = []  # (line, gen tok/s, prompt tok/s, running, waiting, kv %)
    preempted, count = False, 0
    for i, line in enumerate(lines):
        m = _LINE.search(line)
        if m:
            tg, pp = parse_number(m.group("tg")), parse_number(m.group("pp"))
            kv = parse_number(m.group("kv")) if m.group("kv") else 0.0
            run = int(m.group("run"))
            if (kv or 0) > 100.5 or (tg or 0) > MAX_STREAM_TPS * max(1, run):
                out.warnings.append(f"line {i + 1}: {tg:g} tok/s over {run} requests (KV cache {kv:g} %) is no vLLM "
                                    "log line a server prints; skipped")
                continue
            rows.append((i, tg or 0.0, pp or 0.0, int(m.group("run")), int(m.group("wait") or 0), kv or 0.0))
            out.consumed.add(i)
            continue
        for p in _PREEMPT.finditer(line):
            preempted = True
            n = p.group("n") or p.group("n1")
            if n:
                count = max(count, int(n))
            out.consumed.add(i)
    busy = [r for r in rows if r[3] > 0 and r[1] > 0]
    if busy:
        i, tg, _, run, _, _ = max(busy, key=lambda r: (r[3], r[1]))
        out.add(i, {"decode_tps": tg, "batch": run, "tpot_s": run / tg, "engine": "vllm",
                    "notes": [f"vLLM metrics log: generation throughput {tg:g} tok/s summed over {run} running requests "
                              "(the busiest interval); the prompt throughput is an interval average, not a prefill rate"]},
                f"vLLM metrics line at line {i + 1}")
    if rows or preempted:
        waiting = max((r[4] for r in rows), default=0)
        usage = max((r[5] for r in rows), default=0.0)
        out.machine.update({"kv_usage_pct": usage, "requests_waiting": waiting, "preemptions": count or None,
                            "kv_full": preempted or (usage >= KV_FULL_USAGE and waiting > 0)})
    return out


IMPORTERS = (
    Importer(
        name="vllm-metrics",
        engine="vllm",
        describe="vllm serve's periodic metrics line (generation throughput, running/waiting requests, KV cache "
                 "usage) and its KV-cache preemption warning",
        signature=signature(r"Avg prompt throughput:\s*[\d.]+\s*tokens/s,\s*Avg generation throughput:"),
        parse_text=parse_log,
        order=55,
        examples=(
            Example(
                "INFO 03-12 10:21:33 metrics.py:455] Avg prompt throughput: 812.4 tokens/s, Avg generation throughput: "
                "96.3 tokens/s, Running: 14 reqs, Swapped: 0 reqs, Pending: 17 reqs, GPU KV cache usage: 99.6%, "
                "CPU KV cache usage: 0.0%.\n"
                "INFO 03-12 10:21:43 metrics.py:455] Avg prompt throughput: 640.0 tokens/s, Avg generation throughput: "
                "88.1 tokens/s, Running: 13 reqs, Swapped: 0 reqs, Pending: 18 reqs, GPU KV cache usage: 99.8%, "
                "CPU KV cache usage: 0.0%.",
                ({"decode_tps": 96.3, "batch": 14, "engine": "vllm"},),
                "V0 engine, KV cache full",
            ),
            Example(
                "INFO 05-02 08:11:09 [loggers.py:116] Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation "
                "throughput: 47.8 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 0.1%, Prefix cache "
                "hit rate: 0.0%",
                ({"decode_tps": 47.8, "batch": 1, "engine": "vllm"},),
                "V1 engine, one request",
            ),
        ),
    ),
)
