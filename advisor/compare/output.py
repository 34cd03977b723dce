"""Compare results as tables and sentences (Markdown, table rows for the UI)."""

from __future__ import annotations

from typing import Any

__all__ = ["TABLE_HEADERS", "notes_markdown", "summary_lines", "table_markdown", "table_rows"]

TABLE_HEADERS = ["#", "hardware", "fits all users", "max users", "TTFT median / p95 (s)", "p95 unchunked (s)",
                 "tok/s per user", "aggregate tok/s", "saturates at", "meets targets", "$ / M tokens"]


def _num(x: float | None, fmt: str = "{:.1f}") -> str:
    return "—" if x is None else fmt.format(x)


def table_rows(result: dict[str, Any]) -> list[list[Any]]:
    """One row per candidate, in :data:`TABLE_HEADERS` order (strings, for tables)."""
    rows = []
    for c in result["candidates"]:
        t, tu = c["ttft_s"], c["ttft_no_chunking_s"]
        ttft = "overloaded" if c.get("load") and c["load"].get("overloaded") else (
            f"{_num(t['median'])} / {_num(t['p95'])}")
        cost = c.get("cost") or {}
        rows.append([c["rank"], c["hardware"]["name"], "yes" if c["fits"] else "no", c["max_concurrency"], ttft,
                     _num(tu["p95"]), _num(c["decode_tps_per_user"]), _num(c["aggregate_decode_tps"], "{:,.0f}"),
                     c["saturation_concurrency"] or "—", "yes" if c["meets_targets"] else "no",
                     _num(cost.get("usd_per_million_tokens"), "{:,.2f}")])
    return rows


def table_markdown(result: dict[str, Any]) -> str:
    """The ranked comparison as a markdown table with a one-line header."""
    head = "| " + " | ".join(TABLE_HEADERS) + " |"
    sep = "|" + "|".join("---:" if i not in (1, 2, 9) else "---" for i in range(len(TABLE_HEADERS))) + "|"
    body = ["| " + " | ".join(str(x) for x in r) + " |" for r in table_rows(result)]
    rpm = result.get("requests_per_minute")
    load = f", {rpm:g} requests/min each" if rpm else ""
    title = (f"{result['model']} at {result['quant']}, {result['concurrency']} users{load}, "
             f"{result['prompt_tokens']:,}-token prompts, {result['gen_tokens']:,}-token answers")
    return title + "\n\n" + "\n".join([head, sep, *body])


def summary_lines(result: dict[str, Any]) -> list[str]:
    """One sentence per top candidate: targets, TTFT p95, per-user speed, where users stop being free."""
    out = []
    for c in result["candidates"][:5]:
        name = c["hardware"]["name"]
        if not c["max_concurrency"]:
            out.append(f"{name}: does not hold the model with one {result['prompt_tokens'] + result['gen_tokens']:,}"
                       f"-token sequence ({c['memory']['weights_gb']:.0f} GB of weights, "
                       f"{c['memory']['usable_gb']:.0f} GB usable).")
            continue
        verdict = "meets the targets" if c["meets_targets"] else "misses"
        p95 = c["ttft_s"]["p95"]
        ttft = "overloaded" if p95 is None else f"TTFT p95 {p95:.1f} s"
        sat, why = c["saturation_concurrency"], c["batch"].get("saturation_limit", "")
        then = ("compute-bound, aggregate tok/s flattens" if why.startswith("compute")
                else "every user's KV-cache reads outweigh the weights")
        free = f"; adding users is nearly free up to ~{sat} ({then} beyond)" if sat else ""
        n = c["effective_concurrency"]
        out.append(f"{name} {verdict}: {ttft}, {c['decode_tps_per_user']:.1f} tok/s per user at "
                   f"{n} user{'s' if n != 1 else ''}, {c['max_concurrency']} fit in memory{free}.")
    return out


def notes_markdown(result: dict[str, Any]) -> str:
    """Summary, per-candidate notes (top five) and the assumptions, as markdown."""
    summary = summary_lines(result) or [
        f"No candidate holds {result['model']} at {result['quant']} with a "
        f"{result['prompt_tokens'] + result['gen_tokens']:,}-token context (excluded: "
        f"{', '.join(result.get('excluded_do_not_fit', [])[:8]) or 'none'})."]
    lines = ["**Summary**", *[f"- {s}" for s in summary], "", "**Notes**"]
    for c in result["candidates"][:5]:
        lines += [f"- *{c['hardware']['name']}*: " + " ".join(c["notes"])]
    lines += ["", "**Assumptions**", *[f"- {a}" for a in result["assumptions"]]]
    return "\n".join(lines)
