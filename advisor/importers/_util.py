"""Shared helpers of the importers: numbers with units, Go durations, quant names, tables.

Every helper is pure and total: malformed input gives ``None`` (or an empty result), never an
exception, so that a parser can report the line as not understood instead of crashing.
"""

from __future__ import annotations

import bisect
import itertools
import math
import operator
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from advisor.models import MAX_TOKENS, Measurement

__all__ = [
    "NUM",
    "Outcome",
    "backend_label",
    "backend_name",
    "build_measurement",
    "derive_rate",
    "MAX_GPU_LAYERS",
    "find_quant",
    "gpu_layers_problem",
    "guess_decimal_comma",
    "is_decoration",
    "is_rate",
    "line_starts",
    "lines_matching",
    "normalise_quant",
    "parse_go_duration",
    "parse_number",
    "parse_params_b",
    "parse_size_gb",
    "split_model_type",
    "split_table_row",
    "to_float",
    "to_int",
]

#: A number as people paste it: ``12``, ``12.5``, ``1,234.5``, ``12,34`` (decimal comma), ``1e-3``,
#: ``inf``, ``nan``. Group it yourself; it has no capturing groups.
NUM = r"[-+]?(?:inf(?:inity)?|nan|(?:\d+(?:[.,]\d+)*|[.,]\d+)(?:[eE][-+]?\d+)?)"

_DECORATION = re.compile(
    r"[\s\-=_*~#|:+.·•─━│┃┌┐└┘├┤┬┴┼═║╔╗╚╝╭╮╯╰]*"  # blank lines and rules
    r"|\s*(?:\[\s*(?:\.\.\.|…)\s*\]|\.\.\.|…)\s*"  # "..." where the poster cut something
    r"|\s*(?:```|~~~)[\w+-]*\s*"  # markdown code fences
)


@dataclass
class Outcome:
    """What one parser made of the lines it was given.

    Attributes:
        fmt: the format name (see ``advisor.importers.FORMATS``).
        measurements: ``(line index, measurement)`` pairs; the index orders the final list.
        consumed: indexes of the lines the parser understood.
        warnings: messages for the user (rows skipped, rates that are not numbers...).
        machine: facts about the machine or the run (``gpu_info``, ``build``...).
    """

    fmt: str
    measurements: list[tuple[int, Measurement]] = field(default_factory=list)
    consumed: set[int] = field(default_factory=set)
    warnings: list[str] = field(default_factory=list)
    machine: dict[str, Any] = field(default_factory=dict)

    def add(self, line: int, fields: Mapping[str, Any], what: str) -> bool:
        """Build a measurement from ``fields`` and keep it, or warn; returns True when kept."""
        m, problem = build_measurement(fields)
        if m is None:
            # One impossible rate (a 100,000-token prompt "in 0.01 s") should not cost the other phase's figure.
            for bad in ("prefill_tps", "decode_tps"):
                other = "decode_tps" if bad == "prefill_tps" else "prefill_tps"
                if fields.get(bad) is None or fields.get(other) is None or bad not in str(problem):
                    continue
                m, _ = build_measurement({**fields, bad: None})
                if m is not None:
                    self.warnings.append(f"{what}: {problem}; kept the {other.split('_')[0]} rate only")
                    self.measurements.append((line, m))
                    return True
            self.warnings.append(f"{what}: {problem}; not kept as a measurement")
            return False
        self.measurements.append((line, m))
        return True


def is_decoration(line: str) -> bool:
    """True for lines that carry nothing: blank, rules (``----``, ``|---|``, ``=====``), fences, ``...``."""
    return _DECORATION.fullmatch(line) is not None


def guess_decimal_comma(tokens: Iterable[str]) -> bool:
    """Guess whether numbers in one block use a decimal comma (``12,34``) rather than a dot.

    A comma followed by other than three digits (``0,66``, ``1234,56``) is evidence of a decimal
    comma; a dot followed by other than three digits (``6.67``) is evidence of a decimal dot.
    Ambiguous tokens (``1,234``) count for neither. Mixed evidence means dot.
    """
    comma = dot = False
    for tok in tokens:
        t = tok.lstrip("+-")
        if "," in t and "." in t:
            last_comma = t.rfind(",") > t.rfind(".")
            comma, dot = comma or last_comma, dot or not last_comma
            continue
        sep = "," if "," in t else "." if "." in t else ""
        if not sep or t.count(sep) != 1:
            continue
        head, _, tail = t.partition(sep)
        if len(tail) != 3 or head in ("", "0"):
            comma, dot = comma or sep == ",", dot or sep == "."
    return comma and not dot


def parse_number(text: str | None, decimal_comma: bool = False) -> float | None:
    """Read one number as printed by a tool or typed by a person.

    Args:
        text: e.g. ``"629.07"``, ``"1,234.5"``, ``"12,34"``, ``"inf"``, ``"1e3"``.
        decimal_comma: read a lone comma as the decimal separator (``"1,234"`` → 1.234).

    Returns:
        The value (``inf``/``nan`` included, the caller decides), or None when not a number.
    """
    if text is None:
        return None
    t = text.strip().replace("\u2212", "-").replace("\u00a0", "").replace("\u202f", "")
    if not t:
        return None
    low = t.lower().lstrip("+-")
    if low in ("inf", "infinity", "nan"):
        return float(t.lower().replace("infinity", "inf"))
    if "," in t:
        if "." in t:
            if t.rfind(",") > t.rfind("."):
                t = t.replace(".", "").replace(",", ".")
            else:
                t = t.replace(",", "")
        elif t.count(",") > 1:
            t = t.replace(",", "")
        else:
            head, _, tail = t.partition(",")
            thousands = len(tail) == 3 and head.lstrip("+-") not in ("", "0") and not decimal_comma
            t = head + tail if thousands else head + "." + tail
    elif decimal_comma and t.count(".") >= 1 and all(len(p) == 3 for p in t.split(".")[1:]):
        t = t.replace(".", "")  # "1.234" with a decimal comma locale is a thousands separator
    try:
        return float(t)
    except ValueError:
        return None


def is_rate(value: float | None) -> bool:
    """True for a usable rate or amount: a finite number, not negative."""
    return isinstance(value, int | float) and math.isfinite(value) and value >= 0


def to_float(value: Any) -> float | None:
    """A JSON/CSV/SQL scalar as a float (strings in C locale); None when missing or not a number."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        try:
            return float(value)
        except OverflowError:
            return None
    if isinstance(value, str):
        return parse_number(value)
    return None


def to_int(value: Any) -> int | None:
    """A JSON/CSV/SQL scalar (number or numeric string) as an int; None unless whole, finite, within ±1e15."""
    if isinstance(value, bool):
        return int(value)
    f = to_float(value)
    if f is None or not math.isfinite(f) or f != int(f) or abs(f) > 1e15:
        return None
    return int(f)


_GO_UNIT = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ns": 1e-9}
_GO_PART = re.compile(r"(?<![\d.])(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|h|m|s)")


def parse_go_duration(text: str) -> float | None:
    """Seconds in a Go ``time.Duration`` string: ``2m27.98s``, ``850ms``, ``1h2m3s``, ``12µs``.

    Returns None unless the whole string is a sequence of number+unit parts.
    """
    t = text.strip().replace(" ", "")
    if not t:
        return None
    pos, total = 0, 0.0
    for m in _GO_PART.finditer(t):
        if m.start() != pos:
            return None
        total += float(m.group(1)) * _GO_UNIT[m.group(2)]
        pos = m.end()
    return round(total, 9) if pos == len(t) and pos > 0 else None


def derive_rate(count: float | None, seconds: float | None) -> float | None:
    """Tokens per second from a count and a time, rounded as tools print rates.

    Rounded to 2 decimals (like ``ollama --verbose`` prints), or to 3 significant digits below
    1 tok/s so that very slow runs keep their value. None when the time is not positive.
    """
    if count is None or seconds is None or not math.isfinite(seconds) or seconds <= 0:
        return None
    rate = count / seconds
    if not math.isfinite(rate):
        return None
    return round(rate, 2) if rate >= 1 else float(f"{rate:.3g}")


_SIZE_UNIT = {
    "b": 1e-9,
    "kb": 1e-6,
    "mb": 1e-3,
    "gb": 1.0,
    "tb": 1e3,
    "kib": 1024 / 1e9,
    "mib": 1024**2 / 1e9,
    "gib": 1024**3 / 1e9,
    "tib": 1024**4 / 1e9,
}
_SIZE = re.compile(rf"^\s*({NUM})\s*([kmgt]?i?b)\s*$", re.I)


def parse_size_gb(text: str, decimal_comma: bool = False) -> float | None:
    """A size such as ``3.56 GiB``, ``397.57 MiB`` or ``4.0 GB`` in GB (10^9 bytes)."""
    m = _SIZE.match(text)
    if not m:
        return None
    v = parse_number(m.group(1), decimal_comma)
    if v is None or not math.isfinite(v) or v < 0:
        return None
    return round(v * _SIZE_UNIT[m.group(2).lower()], 6)


_PARAMS = re.compile(rf"^\s*({NUM})\s*([KMBT])\s*$", re.I)
_PARAMS_UNIT = {"k": 1e-6, "m": 1e-3, "b": 1.0, "t": 1e3}


def parse_params_b(text: str, decimal_comma: bool = False) -> float | None:
    """A parameter count such as ``6.74 B`` or ``494.03 M`` in billions."""
    m = _PARAMS.match(text)
    if not m:
        return None
    v = parse_number(m.group(1), decimal_comma)
    if v is None or not math.isfinite(v) or v < 0:
        return None
    return round(v * _PARAMS_UNIT[m.group(2).lower()], 6)


_QUANT = re.compile(
    r"(?<![A-Za-z0-9])(?:(?:mostly|all)\s+)?"
    r"(?P<q>I?Q\d+_[A-Z0-9]+(?:_[A-Z0-9]+)*|TQ\d_\d|BF16|FP16|F16|F32|MXFP4|NVFP4)"
    r"(?:\s*-\s*(?P<size>Small|Medium|Large)\b)?(?P<mix>\s+mix\b)?(?:\s*-\s*[\d.]+\s*bpw(?:\s+ternary)?)?"
    r"(?:\s+MoE\b)?(?:\s*\(guessed\))?",
    re.I,
)


def normalise_quant(text: str | None) -> str | None:
    """The GGUF format name in a llama.cpp type string or a file name; the raw text otherwise.

    ``"Q4_K - Medium"`` → ``Q4_K_M``, ``"mostly Q4_0"`` → ``Q4_0``, ``"IQ3_S mix - 3.66 bpw"`` →
    ``IQ3_M``, ``"MXFP4 MoE"`` → ``MXFP4``, ``"model-q4_k_m.gguf"`` → ``Q4_K_M``.
    """
    if not text or not text.strip():
        return None
    m = _QUANT.search(text)
    if not m:
        return text.strip()
    q = m.group("q").upper().replace("FP16", "F16")
    if m.group("mix") and q == "IQ3_S":
        return "IQ3_M"
    size = (m.group("size") or "").lower()
    if size and q.endswith("_K"):
        if q == "Q2_K" and size == "medium":
            return q
        return f"{q}_{size[0].upper()}"
    return q


def find_quant(text: str | None) -> str | None:
    """The GGUF format name found in ``text`` (a file name, a type string), or None."""
    return normalise_quant(text) if text and _QUANT.search(text) else None


def split_model_type(model_type: str) -> tuple[str | None, str | None]:
    """Split a llama.cpp ``model_type`` such as ``qwen2 7B Q4_K - Medium`` into (model, quant)."""
    text = model_type.strip()
    if not text:
        return None, None
    m = _QUANT.search(text)
    if not m:
        return text, None
    name = (text[: m.start()] + text[m.end() :]).strip(" -")
    return name or None, normalise_quant(m.group(0))


_BACKEND_ALIASES = {
    "mtl": "Metal",
    "metal": "Metal",
    "cuda": "CUDA",
    "hip": "ROCm",
    "rocm": "ROCm",
    "vulkan": "Vulkan",
    "sycl": "SYCL",
    "cpu": "CPU",
    "blas": "BLAS",
    "opencl": "OpenCL",
    "cann": "CANN",
    "musa": "MUSA",
    "rpc": "RPC",
    "kompute": "Kompute",
}
_HOST_ONLY = {"BLAS", "CPU", "RPC", "ZenDNN", "ZDNN", "AMX", "KleidiAI"}


def backend_name(text: str | None) -> str | None:
    """A llama.cpp backend list (``Metal,BLAS``, ``MTL,BLAS``, ``CUDA``) as one name (``Metal``).

    The first accelerator backend wins; a list of host-only backends gives ``CPU``.
    """
    if not text or not text.strip():
        return None
    parts = [p.strip() for p in re.split(r"[,+/]", text) if p.strip()]
    names = [_BACKEND_ALIASES.get(p.lower(), p) for p in parts]
    for n in names:
        if n not in _HOST_ONLY:
            return n
    return "CPU" if names else None


def backend_label(engine: str, accelerator: str | None) -> str:
    """The ``backend`` a measurement carries: ``llama.cpp`` + ``CUDA`` → ``llama.cpp-cuda`` (the seed
    data's labels), the engine alone when the accelerator is unknown, ``accelerator`` unchanged when it
    already names the engine."""
    if not accelerator or not accelerator.strip():
        return engine
    if engine.lower() in accelerator.lower() or engine == "other":
        return accelerator
    return f"{engine}-{accelerator.strip().lower()}"


def line_starts(lines: Sequence[str]) -> list[int]:
    """Offset of each line in ``"\n".join(lines)`` (computed at C speed: long pastes have many lines)."""
    return list(map(operator.add, itertools.accumulate(map(len, lines[:-1]), initial=0), itertools.count()))


def lines_matching(lines: Sequence[str], pattern: re.Pattern[str]) -> Iterator[int]:
    """Indexes of the lines where ``pattern`` matches (lazily, in order), from one scan of the joined
    text; much faster than a Python loop over every line of a long paste."""
    text = "\n".join(lines)
    starts = line_starts(lines)
    to_eol = re.compile(f"(?:{pattern.pattern})[^\n]*", pattern.flags)
    for m in to_eol.finditer(text):
        yield bisect.bisect_right(starts, m.start()) - 1


def split_table_row(line: str) -> list[str] | None:
    """Cells of a markdown/pipe table row (outer pipes optional), or None if not a table row.

    A row copied from a rendered table (cells separated by tabs, no pipes) counts too.
    """
    s = line.strip()
    if s.count("|") < 2:
        return [c.strip() for c in s.split("\t")] if s.count("\t") >= 2 else None
    if s.startswith("|"):
        s = s[1:]
    if s.endswith("|"):
        s = s[:-1]
    return [c.strip() for c in s.split("|")]


# A printed rate within this share of count ÷ time agrees with it (the tool prints both from one timer; rounding of the
# printed time is far smaller); further apart, the block was edited or mixed, and its rate is not kept.
RATE_AGREES = 0.1


_RATE_FIELDS = ("prefill_tps", "decode_tps", "blended_tps")
_INT_FIELDS = ("prompt_tokens", "gen_tokens", "depth", "batch", "cached_tokens", "threads", "requests")
_FLOAT_FIELDS = (
    "params_b",
    "model_size_gb",
    "ttft_s",
    "tpot_s",
    "load_s",
    "peak_memory_gb",
    "gpu_fraction",
    "stddev_tps",
)


#: The largest layer count a tool accepts: llama.cpp keeps ``n_gpu_layers`` in a C ``int`` (and the
#: store in a 32-bit INTEGER); a larger figure in a paste overflowed or was typed wrong.
MAX_GPU_LAYERS = 2**31 - 1


def gpu_layers_problem(value: Any) -> str | None:
    """Why ``value`` cannot be a layer count (None when it can, or when it is missing or -1, "all")."""
    if value is None or value == -1:
        return None
    if not isinstance(value, int) or isinstance(value, bool):
        return f"n_gpu_layers {value!r} is not a whole number"
    if value > MAX_GPU_LAYERS:
        return f"n_gpu_layers {value} does not fit a 32-bit integer (at most {MAX_GPU_LAYERS})"
    if value < 0:
        return f"n_gpu_layers {value} is negative"
    return None


def build_measurement(fields: Mapping[str, Any]) -> tuple[Measurement | None, str]:
    """Make a :class:`Measurement` only from sound values.

    A rate must be present, finite and positive (``placement_only=True`` in ``fields`` allows a
    record without rates, as ``ollama ps`` gives). ``n_gpu_layers`` must fit a 32-bit integer and not
    be negative (-1, "all layers", is dropped). Optional extras that are not finite are dropped.

    Returns:
        ``(measurement, "")`` or ``(None, reason)``.
    """
    data = {k: v for k, v in fields.items() if v is not None and k != "placement_only"}
    problem = gpu_layers_problem(data.get("n_gpu_layers"))
    if problem:
        return None, problem
    if data.get("n_gpu_layers") == -1:
        data.pop("n_gpu_layers")
    for k in _RATE_FIELDS:
        v = data.get(k)
        if v is not None and not (is_rate(v) and v > 0):  # 0 tok/s is a failed run, not a speed
            return None, f"{k.replace('_tps', '')} rate {v!r} is not a finite, positive number"
    if not fields.get("placement_only") and not any(k in data for k in _RATE_FIELDS):
        return None, "no rate"
    for k in _INT_FIELDS:
        v = data.get(k)
        if v is not None and (not isinstance(v, int) or v < 0 or v > MAX_TOKENS):
            data.pop(k)
    for k in _FLOAT_FIELDS:
        v = data.get(k)
        if v is not None and not is_rate(v):
            data.pop(k)
    try:
        return Measurement(**data), ""
    except ValidationError as exc:
        first = exc.errors()[0].get("msg", "invalid value") if exc.errors() else "invalid value"
        return None, str(first)
