"""Compare results as tables and sentences (Markdown for the CLI and the tab, rows for the UI table).

Headers are short words (they never need cutting in a narrow column); :data:`TABLE_LEGEND` says what
each one means. The first-word column says "idle" when no request rate was given: every request then
finds the machine free, so the median and the 95th percentile are the same prefill time.
"""

from __future__ import annotations

from typing import Any

__all__ = ["STATUS_WORDS", "TABLE_HEADERS", "TABLE_LEGEND", "headline", "notes_markdown", "status_words",
           "summary_lines", "table_markdown", "table_rows", "ttft_cell"]

TABLE_HEADERS = ["#", "machine", "status", "users fit", "first word (s)", "slow, prompts whole (s)",
                 "tok/s each", "tok/s total", "free up to", "$ / M tok"]
# Status words for the table (see advisor.compare.evaluate.STATUSES).
STATUS_WORDS = {"meets": "meets targets", "holds": "holds all users", "overloaded": "overloaded",
                "no_fit": "does not fit"}
TABLE_LEGEND = (
    "**status**: meets targets · holds all users (a target missed) · N of M at once (the others wait for a slot) · "
    "overloaded (requests arrive faster than it can answer: the wait grows without bound) · does not fit. "
    "**users fit**: conversations that fit in memory at once. "
    "**first word**: seconds to the first token, typical (half the requests wait less: p50) / slow case (95 % wait "
    "less: p95), at your request rate; *idle* when no rate is given (every request finds the machine free, so both "
    "are the same); *no queue* when at your rate 95 % of requests still find it free. "
    "**slow, prompts whole**: the slow case if each prompt is read in one go while the other answers pause "
    "(no chunked prefill). "
    "**tok/s each / total**: answer speed per user with everyone streaming, and summed. "
    "**free up to**: users before each one added slows the others. **$ / M tok**: from the prices you give.")


def _num(x: float | None, fmt: str = "{:.1f}") -> str:
    return "—" if x is None else fmt.format(x)


def _sec(x: float | None) -> str:
    """Seconds for a table cell: two decimals below 1 s (0.04), one above (29.8)."""
    return _num(x, "{:.2f}" if x is not None and x < 1 else "{:.1f}")


def status_words(c: dict[str, Any], users: int) -> str:
    """The status cell: "meets targets", "12 of 20 at once", "overloaded" …"""
    st = c.get("status", "no_fit")
    if st == "partial":
        return f"{c['max_concurrency']} of {users} at once"
    return STATUS_WORDS.get(st, st)


def ttft_cell(c: dict[str, Any], rate_given: bool) -> str:
    """The first-word cell: ``"9.6 / 29.8"`` under load, ``"4.6 (idle)"`` without a rate, ``"4.6 (no queue)"``
    when the simulated p95 equals the median (requests rarely overlap at that rate), ``"overloaded"``."""
    if c.get("status") == "overloaded":
        return "overloaded"
    t = c["ttft_s"]
    if t.get("p95") is None:
        return "—"
    if not rate_given:
        return f"{_sec(t['p95'])} (idle)"
    if t["median"] is not None and t["p95"] - t["median"] <= 0.005 * t["p95"]:
        return f"{_sec(t['p95'])} (no queue)"  # at this rate 95 % of requests find the machine free
    return f"{_sec(t['median'])} / {_sec(t['p95'])}"


def table_rows(result: dict[str, Any]) -> list[list[Any]]:
    """One row per candidate, in :data:`TABLE_HEADERS` order (strings, for tables)."""
    rows = []
    users, rate = result["concurrency"], bool(result.get("requests_per_minute"))
    for c in result["candidates"]:
        tu = c["ttft_no_chunking_s"]
        cost = c.get("cost") or {}
        rows.append([c["rank"], c["hardware"]["name"], status_words(c, users), c["max_concurrency"], ttft_cell(c, rate),
                     _sec(tu["p95"]) if rate else "—", _num(c["decode_tps_per_user"]),
                     _num(c["aggregate_decode_tps"], "{:,.0f}"), _free_up_to(c) or "—",
                     _num(cost.get("usd_per_million_tokens"), "{:,.2f}")])
    return rows


def table_markdown(result: dict[str, Any]) -> str:
    """The ranked comparison as a markdown table: a one-line title, the table, the legend."""
    head = "| " + " | ".join(TABLE_HEADERS) + " |"
    sep = "|" + "|".join("---" if i in (1, 2) else "---:" for i in range(len(TABLE_HEADERS))) + "|"
    body = ["| " + " | ".join(str(x) for x in r) + " |" for r in table_rows(result)]
    rpm = result.get("requests_per_minute")
    load = f", {rpm:g} requests/min each" if rpm else ", no request rate given (first word on an idle machine)"
    who = "1 user" if result["concurrency"] == 1 else f"{result['concurrency']} users"
    title = (f"{result['model']} at {result['quant']}, {who}{load}, "
             f"{result['prompt_tokens']:,}-token prompts, {result['gen_tokens']:,}-token answers")
    return title + "\n\n" + "\n".join([head, sep, *body]) + "\n\n" + TABLE_LEGEND


def _free_up_to(c: dict[str, Any]) -> int | None:
    """Users before each one added slows the others, within those that fit in memory (the knee of a machine that
    holds 2 conversations is not 15)."""
    sat, fit = c["saturation_concurrency"], c.get("max_concurrency")
    return min(sat, fit) if sat and fit else (sat or None)


def _free(c: dict[str, Any]) -> str:
    sat, why = _free_up_to(c), c["batch"].get("saturation_limit", "")
    if sat and c.get("max_concurrency") and sat < (c["saturation_concurrency"] or 0):
        return f"; adding users is nearly free up to the {sat} that fit in memory"
    then = ("the chip's compute is the limit, so the total stops growing" if why.startswith("compute")
            else "reading every user's conversation memory takes longer than reading the model")
    return f"; adding users is nearly free up to ~{sat} (beyond, {then})" if sat else ""


def summary_lines(result: dict[str, Any]) -> list[str]:
    """One sentence per top candidate: what it can do for the users, TTFT p95, per-user speed."""
    out = []
    users, rate = result["concurrency"], bool(result.get("requests_per_minute"))
    for c in result["candidates"][:5]:
        name, st = c["hardware"]["name"], c.get("status", "no_fit")
        if not c["max_concurrency"] or st == "no_fit":
            out.append(f"{name}: does not hold the model with one {result['prompt_tokens'] + result['gen_tokens']:,}"
                       f"-token sequence ({c['memory']['weights_gb']:.0f} GB of weights, "
                       f"{c['memory']['usable_gb']:.0f} GB usable).")
            continue
        tps = f"{c['decode_tps_per_user']:.1f} tok/s per user" if c["decode_tps_per_user"] else "no decode figure"
        if st == "overloaded":
            load = c.get("load") or {}
            x = load.get("utilisation_lower_bound")
            out.append(f"{name} cannot keep up with {users} users: requests arrive faster than it reads the prompts"
                       + (f" (≈ {x:.1f}× what it can do)" if x else "") + ", so the wait for a first word grows "
                       f"without bound; {tps} once answering.")
            continue
        p95 = c["ttft_s"]["p95"]
        ttft = (f"TTFT p95 {_sec(p95)} s" if rate else
                f"first word {_sec(p95)} s on an idle machine (no request rate given)")
        n = c["effective_concurrency"]
        if st == "partial":
            out.append(f"{name} holds only {c['max_concurrency']} of the {users} users at once (the others wait for "
                       f"a slot): {ttft}, {tps} at {n} users{_free(c)}.")
            continue
        verdict = "meets the targets" if st == "meets" else "holds all users but misses a target"
        out.append(f"{name} {verdict}: {ttft}, {tps} at {n} user{'s' if n != 1 else ''}, "
                   f"{c['max_concurrency']} fit in memory{_free(c)}.")
    return out


def _price(c: dict[str, Any]) -> float | None:
    return (c.get("cost") or {}).get("price_usd")


def headline(result: dict[str, Any]) -> str:
    """The one sentence that answers: how many meet the targets and which to buy (the cheapest that meets them
    when prices are given; the only one; else the closest). Ranking order is the engine's.

    "3 of 3 meet the targets; the cheapest is the 2× GeForce RTX 4090 ($4,500)." · "2 of 3 meet the targets;
    give prices to pick between them (first by headroom: the H100 PCIe 80GB)." · "Only the H100 PCIe 80GB meets
    the targets."
    """
    cands = result["candidates"]
    if not cands:
        return ""
    n = len(cands)
    good = [c for c in cands if c.get("status") == "meets"]
    if len(good) == 1:
        return f"Only the {good[0]['hardware']['name']} meets the targets" + (f" (of {n})." if n > 1 else ".")
    if good:
        priced = [c for c in good if _price(c) is not None]
        head = f"{len(good)} of {n} meet the targets"
        if priced:
            best = min(priced, key=lambda c: _price(c) or 0.0)
            return f"{head}; the cheapest is the {best['hardware']['name']} (${_price(best):,.0f})."
        return (f"{head}; give prices to pick between them on cost (the most room to spare: the "
                f"{good[0]['hardware']['name']}).")
    held = [c for c in cands if c.get("holds_users")]
    if held:
        return f"None of the {n} meets the targets; the closest is the {held[0]['hardware']['name']}."
    return f"None of the {n} can serve {result['concurrency']} user{'s' if result['concurrency'] != 1 else ''}."


def notes_markdown(result: dict[str, Any]) -> str:
    """Headline and summary (shown), then per-candidate notes and the assumptions folded (``<details>``), as
    markdown; price names that matched no machine are said first."""
    summary = summary_lines(result) or [
        f"No candidate holds {result['model']} at {result['quant']} with a "
        f"{result['prompt_tokens'] + result['gen_tokens']:,}-token context (excluded: "
        f"{', '.join(result.get('excluded_do_not_fit', [])[:8]) or 'none'})."]
    head = headline(result)
    lines = [*[x for p in result.get("price_notes") or [] for x in (f"⚠️ {p}", "")], *([f"**{head}**", ""] if head else []),
             "**Summary**", "", *[f"- {s}" for s in summary], "",
             "<details><summary>Notes on each machine</summary>", ""]
    for c in result["candidates"][:5]:
        lines += [f"- *{c['hardware']['name']}*: " + " ".join(c["notes"])]
    lines += ["", "</details>", "", "<details><summary>Assumptions: how these numbers are worked out</summary>", "",
              *[f"- {a}" for a in result["assumptions"]], "", "</details>"]
    return "\n".join(lines)
