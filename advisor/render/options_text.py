"""The text of an :class:`advisor.render.options.Options`: who wins and why in one sentence, a compact table, the
targets in one line, a sentence per option and the notes folded.

Part of :mod:`advisor.render.options` (which builds the options from the Compare engine and re-exports
:func:`options_markdown`).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from advisor.render.markdown import (
    WORDS_PER_TOKEN,
    feel_speed,
    feel_wait,
    fmt_rate,
    fmt_s,
)
from advisor.render.tradeoff import trade_off

if TYPE_CHECKING:
    from advisor.render.options import Options

__all__ = ["options_markdown"]


def _yes(b: bool | None) -> str:
    return "—" if b is None else ("yes" if b else "**no**")


def _dash(text: str) -> str:
    return "—" if text == "?" else text


_STATUS = {"meets": "meets targets", "holds": "misses a target", "overloaded": "overloaded", "no_fit": "**does not fit**"}


def _status(r: dict[str, Any], users: int) -> str:
    st = r.get("status")
    if st == "partial":
        return f"{r['users_fit']} of {users} at once"
    return _STATUS.get(st or "", "—")


def _first_word(r: dict[str, Any]) -> str:
    return "overloaded" if r.get("status") == "overloaded" else _dash(fmt_s(r["first_word_s"]))


def _row_sentence(r: dict[str, Any], users: int, kind: str) -> str:
    name = r["name"]
    if not r["fits"]:
        return f"**{name}** cannot hold the model" + (" for even one user." if r.get("users_fit") == 0 else ".")
    if r.get("status") == "overloaded":
        load = f"{users} users" if users > 1 else "the requests"
        return (f"**{name}** cannot keep up with {load}: requests arrive faster than it reads the prompts, "
                f"so the wait for a first word grows without bound ({fmt_rate(r['tps_each'])} tok/s each once "
                "answering).")
    if r.get("users_fit") is not None and r["users_fit"] < users:
        return (f"**{name}** holds only {r['users_fit']} of the {users} users at once (the others wait); "
                f"{fmt_rate(r['tps_each'])} tok/s each.")
    wait = "" if r["first_word_s"] is None else f"first word within {fmt_s(r['first_word_s'])} " \
                                                f"({feel_wait(r['first_word_s'])})"
    each = " each" if users > 1 else ""
    speed = "" if r["tps_each"] is None else f"{fmt_rate(r['tps_each'])} tok/s{each} ({feel_speed(r['tps_each'])})"
    verdict = "" if r["meets"] is None else (" meets the targets:" if r["meets"] else " misses the targets:")
    return f"**{name}**{verdict} " + ", ".join(x for x in (speed, wait) if x) + "."


# A request rate at which one "user" is a stream of requests (a service, a batch job), not a person: 10 a minute.
STREAM_RPM = 10.0
TIE = 0.1  # two options within 10 % of each other's speed stream alike: the lead says what else tells them apart


def _devices(hid: str) -> int:
    """GPUs in a compare candidate id ("nvidia-h100-pciex4" → 4; one card → 1)."""
    m = re.search(r"x(\d+)$", hid)
    return int(m.group(1)) if m else 1


def _hardware_lead(rows: list[dict[str, Any]], who: str, users: int) -> str:
    """The one sentence that answers, and why: the cheapest that meets the targets when prices are known,
    the only one that meets them, else the closest that holds the users (rows are in the engine's order)."""
    good = [r for r in rows if r["meets"]]
    n, others = len(rows), len(rows) - 1
    if len(good) == 1:
        tail = "; the other does not." if others == 1 else f"; the other {others} do not."
        return f"**For {who}, the {good[0]['name']} is the one that does the job**" + tail
    if good:
        count = "both meet the targets" if len(good) == n == 2 else f"{len(good)} of {n} meet the targets"
        base = {re.sub(r"^\d+×\s*", "", r["id"].rsplit("x", 1)[0] if re.search(r"x\d+$", r["id"]) else r["id"])
                for r in rows}
        if len(base) == 1:  # 1, 2, 4 and 8 of one card ("how many H100s?"): the fewest that does it is the answer
            fewest = min(good, key=lambda r: _devices(r["id"]))
            return (f"**For {who}, {fewest['name']} is the fewest that meets the targets** "
                    f"({fmt_rate(fewest['tps_each'])} tok/s each, first word within {fmt_s(fewest['first_word_s'])}).")
        priced = [r for r in good if r.get("price_usd") is not None]
        if priced:
            best = min(priced, key=lambda r: r["price_usd"])
            return (f"**For {who}, {count}; the cheapest is the {best['name']}** "
                    f"(${best['price_usd']:,.0f}).")
        a, b = good[0], (good[1] if len(good) > 1 else {})
        if b and a["tps_each"] and b["tps_each"] and abs(a["tps_each"] / b["tps_each"] - 1) <= TIE:
            # as fast as each other: what else differs decides (the first word, the memory for longer contexts)
            edge = [f"reads prompts faster ({fmt_s(x['first_word_s'])} vs {fmt_s(y['first_word_s'])})"
                    for x, y in ((b, a),) if x["first_word_s"] and y["first_word_s"] and x["first_word_s"] < 0.8 * y["first_word_s"]]
            edge += [f"has more memory ({x['memory_gb']:.0f} vs {y['memory_gb']:.0f} GB)" for x, y in ((b, a),)
                     if x.get("memory_gb") and y.get("memory_gb") and x["memory_gb"] > 1.2 * y["memory_gb"]]
            if edge:
                return (f"**For {who}, {count}; the {a['name']} and the {b['name']} stream at about the same speed "
                        f"({fmt_rate(a['tps_each'])} and {fmt_rate(b['tps_each'])} tok/s), and the {b['name']} "
                        f"{' and '.join(edge)}** (give prices in the Compare tab to pick on cost).")
        return (f"**For {who}, {count}**; the {good[0]['name']} ranks first (on its tightest margin, then speed; give "
                "prices in the Compare tab to pick on cost).")
    held = [r for r in rows if r.get("holds")]
    none = "Neither" if len(rows) == 2 else ("It does not" if len(rows) == 1 else f"None of the {len(rows)}")
    if held:
        best = min(held, key=lambda r: r["rank"])
        each = " each" if users > 1 else ""
        said = (f" ({fmt_rate(best['tps_each'])} tok/s{each}, first word within {fmt_s(best['first_word_s'])})"
                if best.get("tps_each") and best.get("first_word_s") else "")
        if len(rows) == 1:
            return f"**The {best['name']} holds {who} but misses a target**{said}."
        if not any(r["fits"] for r in rows if r is not best):
            rest = "the other cannot" if len(rows) == 2 else "the others cannot"
            return f"**Only the {best['name']} holds the model for {who}**{said}, short of a target; {rest}."
        return f"**{none} meets the targets for {who}**; the closest is the {best['name']}{said}."
    fits = [r for r in rows if r["fits"]]
    if len(rows) == 1:
        none = f"The {rows[0]['name']} cannot"
        return (f"**{none} serve {who}**" + (": it holds the model but cannot keep up with the requests." if fits else
                                             ": it cannot hold the model."))
    return (f"**{none} can serve {who}**"
            + (": the ones that hold the model cannot keep up with the requests." if fits else
               ": none holds the model."))


def options_markdown(opt: "Options") -> str:
    """The side-by-side reply: who wins and why in one sentence, a compact table, the targets in one line; a
    sentence per option and the notes folded (``<details>``)."""
    from advisor.render.options import (  # options imports this module
        DEFAULT_TPS_TARGET,
        DEFAULT_TTFT_TARGET_S,
        REPLICAS_SAID,
    )

    wl, rows = opt.workload, opt.rows
    users = int(wl.get("users") or 1)
    stream_rpm = float(wl.get("requests_per_minute") or 0)
    open_rate = wl.get("open_rate_per_s")
    who = (f"{fmt_rate(open_rate)} requests a second (about {users} answers streaming at once)" if open_rate else
           f"{users} people at once" if users > 1 else
           f"{fmt_rate(stream_rpm / 60)} requests a second" if stream_rpm >= STREAM_RPM else "one person")
    lengths = (f"{wl['prompt_tokens']:,}-token prompts (≈ {wl['prompt_tokens'] * WORDS_PER_TOKEN:,.0f} words), "
               f"{wl['gen_tokens']:,}-token answers")
    if wl.get("context_tokens"):
        lengths += f", memory for {wl['context_tokens']:,} tokens of context each"
    if opt.kind == "hardware":
        lead = _hardware_lead(rows, who, users)
        if users <= 1 and (tt := trade_off(rows)):
            lead += " " + tt
        title = f"{str(wl['model']).split('/')[-1]} at {wl['quant']}, {who}, {lengths}."
        if users > 1:
            head = ("| option | status | users fit | first word (slow case) | tok/s each | tok/s total |\n"
                    "|---|---|--:|--:|--:|--:|")
            body = [f"| {r['name']} | {_status(r, users)} | {r['users_fit']} | {_first_word(r)} | "
                    f"{_dash(fmt_rate(r['tps_each']))} | {_dash(fmt_rate(r.get('tps_total')))} |" for r in rows]
        else:  # one person: how many conversations would fit, and a total, say nothing to them
            head = "| option | status | first word | tok/s |\n|---|---|--:|--:|"
            body = [f"| {r['name']} | {_status(r, users)} | {_first_word(r)} | {_dash(fmt_rate(r['tps_each']))} |"
                    for r in rows]
        req = opt.request or {}
        rpm = wl.get("requests_per_minute")
        load = (f"at {fmt_rate(open_rate)} requests a second in all" if open_rate else
                f"at {rpm:g} requests per minute per user" if rpm else
                "no request rate given, so each first word is timed on an idle machine")
        targets = (f"<sub>Best first. Targets (the Compare tab changes them): first word within "
                   f"{req.get('ttft_target_s') or DEFAULT_TTFT_TARGET_S:g} s for 95 % of requests (the slow case), "
                   f"{req.get('tps_per_user') or DEFAULT_TPS_TARGET:g} tok/s per user (about twice reading speed) with "
                   f"everyone streaming; {load}.</sub>")
    else:
        fitting = [r for r in rows if r["fits"]]
        target = wl.get("target_tps") or DEFAULT_TPS_TARGET
        usable = [r for r in fitting if (r["tps_each"] or 0) >= target]

        def size(r: dict[str, Any]) -> float:  # the model's parameters (its weights' memory when unknown)
            return float(r.get("params_b") or r["memory_gb"] or 0)

        biggest = max(fitting, key=size) if fitting else None
        if usable and biggest is not None and biggest not in usable:
            best = max(usable, key=size)
            why = "your target" if wl.get("target_tps") else "about twice reading speed"
            lead = (f"**On the {wl.get('hardware')}, the largest that runs at {target:g} tok/s or more ({why}) is "
                    f"{best['name']}**: {fmt_rate(best['tps_each'])} tok/s ({feel_speed(best['tps_each'])}). "
                    f"{biggest['name']} fits too, but streams at {fmt_rate(biggest['tps_each'])} tok/s.")
        elif biggest is not None:
            best = biggest
            lead = (f"**On the {wl.get('hardware')}, the largest that fits is {best['name']}**: "
                    f"{fmt_rate(best['tps_each'])} tok/s ({feel_speed(best['tps_each'])}).")
        else:
            lead = f"**None of them fits the {wl.get('hardware')}.**"
        title = f"{wl.get('hardware')}, {wl['quant']}, {who}, {lengths}."
        head = "| model | fits | needs | first word | tok/s |\n|---|---|--:|--:|--:|"
        body = [f"| {r['name']} | {_yes(r['fits'])} | {r['memory_gb']:.0f} GB | {_dash(fmt_s(r['first_word_s']))} | "
                f"{_dash(fmt_rate(r['tps_each']))} |" for r in rows]
        targets = ""
    lines = [f"- {_row_sentence(r, users, opt.kind)}" for r in rows]
    said = list(opt.said)
    replicas = [x for x in said if REPLICAS_SAID in x]
    if replicas:  # more users than one server holds: how many servers is the answer, so it leads
        lead = "**" + " ".join(replicas) + "** " + lead.replace("**", "")
        said = [x for x in said if x not in replicas]
    out = [lead, f"<sub>{title}</sub>", head + "\n" + "\n".join(body), opt.hint]
    if said:
        out.append("<br>".join(f"<sub>{x}</sub>" for x in said))
    if targets:
        out.append(targets)
    out.append("<details><summary>Each option in words, and notes</summary>\n\n"
               + "\n".join(lines + [f"- {n}" for n in opt.notes]) + "\n\n</details>")
    return "\n\n".join(x for x in out if x)
