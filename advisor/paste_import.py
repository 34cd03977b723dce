"""A pasted tool output read into measurements, the machine it ran on, the facts it gives and a verdict; stored.

The one home of :func:`import_output` (the chat, the CLI's ``import``, the API and the Import tab call it).
"""

from __future__ import annotations

import logging
import time
from typing import Any

from pydantic import BaseModel, Field

from advisor import report
from advisor.diagnose import diagnose_resolved
from advisor.errors import AdvisorError, AmbiguousError, NotFoundError
from advisor.models import Measurement, Scenario, Verdict
from advisor.paste_facts import (
    SERVING_FORMATS,
    STORE_OVER_ROOFLINE,
    backend_clash,
    foreign_prefill,
    foreign_rate,
    merge_measurements,
)
from advisor.understand import resolve_scenario
from advisor.understand.engine import engine_of_format
from knowledge.store import Store

log = logging.getLogger("advisor")


class ImportOutcome(BaseModel):
    """What an import made of a pasted tool output."""

    format: str
    measurements: list[Measurement]
    unparsed: list[str]
    verdict: Verdict | None
    saved_id: str | None
    message: str
    facts: Scenario | None = None
    warnings: list[str] = Field(default_factory=list)  # the importer's: rows skipped and why
    saved_for_machine: bool = True  # False: saved without the named machine (its rates are beyond it)


def _other_gpu(store: Store, res: Any, device: str) -> bool:
    """The GPU a tool output names (llama-bench's "Device 0: NVIDIA GeForce RTX 3060") is another card than the one
    the conversation named (an RTX 4090): the run was on that card (CUDA_VISIBLE_DEVICES, the main GPU), not this one."""
    from knowledge import catalog
    from knowledge.seed import split_hw_id

    if res.hardware is None or res.hardware.kind not in ("discrete_gpu", "datacenter_gpu"):
        return False
    try:
        m = catalog.resolve_hardware(store, device)
    except AdvisorError:
        return False
    return m.confidence >= 0.8 and split_hw_id(m.value.id)[0] != split_hw_id(res.hardware.id)[0]


def _unknown_machine(store: Store, name: str) -> str:
    """"I do not know the machine “X” (closest: …)." for a named machine the catalog does not resolve."""
    from knowledge import catalog

    try:
        catalog.resolve_hardware(store, name)
        return ""
    except AmbiguousError as e:
        return f"“{name}” could be several machines ({'; '.join(e.candidates[:3])}): name one."
    except NotFoundError as e:
        near = f" (closest: {', '.join(e.candidates[:3])})" if e.candidates else ""
        return f"I do not know the machine “{name}”{near}, so the numbers were kept without one."
    except AdvisorError:
        return ""


def import_output(
    store: Store, text: str, *, hardware: str | None = None, save: bool = True, scenario: Scenario | None = None,
    words_read: bool = False,
) -> ImportOutcome:
    """Parse another tool's output, store the sound measurements with the raw text, diagnose.

    Nothing is stored when nothing could be parsed. ``words_read``: the caller read the person's own
    words around the output, so the lines that said something (:func:`advisor.intake.words_read`) are not
    listed as not understood.
    """
    from advisor.importers import parse_output

    t0 = time.perf_counter()
    parsed = parse_output(text)
    saved = None
    foreign: tuple[float, float] | None = None
    verdict = None
    sc = None
    clash = None
    moved = ""
    base = scenario or Scenario()
    if hardware:
        named = hardware.strip()[:300]
        # another machine than the conversation's: its memory and card count were the other machine's
        stale = {"memory_gb": None, "gpu_count": None} if base.hardware and base.hardware != named else {}
        base = base.model_copy(update={"hardware": named, **stale})
    if parsed.machine.get("kv_full") and parsed.format.startswith("vllm-metrics"):  # the engine's log: its KV cache ran out (advisor.importers.vllm_log)
        base = base.model_copy(update={"kv_cache_full": True})
    if not base.hardware and parsed.machine.get("hardware"):
        base = base.model_copy(update={"hardware": str(parsed.machine.get("hardware"))[:300]})
    if parsed.measurements:
        sc = merge_measurements(base.model_copy(update={"raw_output": text[:20000]}), parsed.measurements,
                                 parsed.format, store=store)
        res = resolve_scenario(store, sc)
        clash = backend_clash(parsed.measurements, res.hardware)
        own_machine = str(parsed.machine.get("hardware") or "")
        had_clash = clash is not None
        if own_machine and base.hardware and base.hardware != own_machine and (clash or _other_gpu(store, res, own_machine)):
            # the output names the machine it ran on (llama-bench's "Device 0: …"), which can run its API: judged there
            sc = merge_measurements(base.model_copy(update={"hardware": own_machine[:300], "memory_gb": None,
                                                             "raw_output": text[:20000]}),
                                     parsed.measurements, parsed.format, store=store)
            res = resolve_scenario(store, sc)
            clash = None if res.hardware is not None and backend_clash(parsed.measurements, res.hardware) is None \
                else clash
            if clash is None and res.hardware is not None:
                moved = (f" The output itself says it ran on the {res.hardware.name} ({own_machine}), not the "
                         f"{base.hardware} named: judged on the {res.hardware.name}.")
                if not had_clash:  # both cards run the API: one box with two GPUs, and the run took the other one
                    moved += (f" If the {base.hardware} is in the same machine, the run used the other card: pick it "
                              "with CUDA_VISIBLE_DEVICES (or llama.cpp's --main-gpu / --device).")
        if clash:  # the output ran elsewhere: not this machine's numbers (not compared, not saved as its results)
            # nor the engine the conversation named for that machine: the run's own (its table) stands
            other = dict.fromkeys(("hardware", "memory_gb", "backend"))
            sc = merge_measurements(base.model_copy(update={**other, "raw_output": text[:20000]}), parsed.measurements,
                                     parsed.format, store=store)
            res = resolve_scenario(store, sc)
        foreign = None if clash or parsed.format.startswith(SERVING_FORMATS) else foreign_rate(res, parsed.measurements)
        # over the memory's roofline (not just far over it, as ``foreign``): not stored as this machine's results
        serving = parsed.format.startswith(SERVING_FORMATS)
        unsound = foreign or (None if clash else foreign_rate(res, parsed.measurements, STORE_OVER_ROOFLINE,
                                                              streams=sc.measured_streams if serving else None))
        # a benchmark's prefill beyond what the machine computes even in INT8: no cache explains it, not its result
        over_compute = None if clash or serving else foreign_prefill(res, parsed.measurements)
        unsound = unsound or over_compute
        if save and any(m.prefill_tps or m.decode_tps or m.blended_tps for m in parsed.measurements):
            rows = [m.model_dump(include={"prefill_tps", "decode_tps", "blended_tps", "prompt_tokens", "gen_tokens",
                                          "depth", "batch", "backend", "model", "quant", "n_gpu_layers", "threads",
                                          "params_b", "engine"}) for m in parsed.measurements if m.prefill_tps or m.decode_tps or m.blended_tps]
            hint = engine_of_format(parsed.format)  # "CUDA" in a llama-bench table is llama.cpp's
            if parsed.format.startswith(SERVING_FORMATS):
                # a serving run: one request's lengths and the streams its aggregate rate is summed over, not the
                # run's token totals at batch 1 (advisor.paste_facts._merge_serving read them); rows of another tool
                # pasted with it (a llama-bench table) keep their own
                served = [bool(m.requests or m.tpot_s) for m in parsed.measurements
                          if m.prefill_tps or m.decode_tps or m.blended_tps]
                rows = [{**r, "prompt_tokens": sc.prompt_tokens or r.get("prompt_tokens"),
                         "gen_tokens": sc.gen_tokens or r.get("gen_tokens"), "model": r.get("model") or sc.model,
                         "batch": sc.measured_streams or r.get("batch")} if run else r
                        for r, run in zip(rows, served, strict=True)]
            rows = [{**r, "engine": r.get("engine") or hint} if hint else r for r in rows]
            saved = store.save_import(fmt=parsed.format, raw_text=text, measurements=rows,
                                      # numbers beyond the named machine are kept, not as its results
                                      hardware=None if unsound else sc.hardware,
                                      hw_id=res.hardware.id if res.hardware and not unsound else None,
                                      machine=parsed.machine)
        if res.model is not None and res.hardware is not None:
            try:
                verdict = diagnose_resolved(store, res)
            except AdvisorError:
                verdict = None
        msg = f"Read {len(parsed.measurements)} measurement(s) from {parsed.format} output.{moved}"
        if hardware and res.hardware is None and not clash:
            msg += " " + _unknown_machine(store, hardware.strip()[:120])
        missing_bits = [w for w, ok in (("the hardware", res.hardware is not None), ("the model", res.model is not None))
                        if not ok]
        if clash:
            msg += (f" {clash[0]}, so this output did not run on the {clash[2]} named before: which machine was it? "
                    f"Tell me (e.g. “that was on {clash[1]}”) and I will compare.")
            missing_bits = [w for w in missing_bits if w != "the hardware"]
        if foreign and res.hardware is not None:
            msg += (f" Its decode ({foreign[0]:,.1f} tok/s) is more than the {res.hardware.name} can deliver for this "
                    f"model (its memory allows at most about {foreign[1]:,.1f} tok/s), so it was kept without that machine: "
                    "which machine was it? Tell me and I will compare.")
        if over_compute and not foreign and res.hardware is not None:
            msg += (f" Its prefill ({over_compute[0]:,.0f} tok/s) is more than the {res.hardware.name} can compute for this "
                    f"model even with INT8 kernels (about {over_compute[1]:,.0f} tok/s at most), so it was kept without that "
                    "machine: which machine was it? Tell me and I will compare.")
        if missing_bits:
            msg += f" Tell me {' and '.join(missing_bits)} to compare them with what it should do."
    else:
        msg = ("I could not find any measurement in that text. I read llama-bench, llama.cpp timings, ollama "
               "--verbose and API JSON, mlx_lm.generate / benchmark, LM Studio, vLLM and SGLang bench output, "
               "text-generation-webui, koboldcpp and exllamav2.")
    from advisor.intake import is_listing_line  # nvidia-smi's table beside a run: read by intake, not skipped

    unparsed = [u for u in parsed.unparsed if not is_listing_line(u)]
    if words_read and unparsed:
        from advisor.intake import words_read as said

        theirs = set(said(text, store))
        unparsed = [u for u in unparsed if u.strip() not in theirs]
    if unparsed:
        from advisor.render.markdown import skipped_lines

        msg += " " + skipped_lines(unparsed)
    skipped = [w for w in parsed.warnings if "not kept" in w or "skipped" in w or "not used" in w]
    if skipped:
        msg += " Skipped: " + "; ".join(skipped[:3]) + (f" (and {len(skipped) - 3} more)" if len(skipped) > 3 else "") + "."
    msg = report.name_tools(msg)  # "from llama-bench-md output" → "from llama-bench output"
    log.info("import format=%s rows=%d saved=%s ms=%.0f", parsed.format, len(parsed.measurements), bool(saved),
             (time.perf_counter() - t0) * 1000)
    return ImportOutcome(format=parsed.format, measurements=parsed.measurements, unparsed=parsed.unparsed,
                         verdict=verdict, saved_id=saved, message=msg, facts=sc, warnings=parsed.warnings,
                         saved_for_machine=foreign is None and not clash)
