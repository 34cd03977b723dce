"""Spec numbers said in chat text: memory bandwidth ("3.2 TB/s", "936 GB/s"), TFLOPS and Apple GPU cores.

TB/s are decimal (1 TB/s = 1,000 GB/s), as vendors' spec sheets state bandwidth.
"""

from __future__ import annotations

import re

from advisor.intake._schema import Extraction
from advisor.intake._text import Msg, parse_num

__all__ = ["bandwidth", "cpu_cores", "gpu_cores"]

_N = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"
_BW = re.compile(rf"(?<![\w.])(?P<num>{_N})\s*(?P<u>gb|tb)\s*(?:/\s*s(?:ec)?\b|ps\b|\s+per\s+second\b)", re.I)
_TFLOPS = re.compile(rf"(?<![\w.])(?P<num>{_N})\s*(?:tflops?\b|tflop/s|teraflops\b)", re.I)
_GPU_CORES = re.compile(r"\b(?P<n>\d{1,3})\s*-?\s*cores?\s*(?:apple\s+)?gpu\b|\b(?P<n2>\d{1,3})\s*gpu\s*cores\b"
                        r"|\bgpu\s*(?:with\s*|of\s*|:\s*)?(?P<n3>\d{1,3})\s*-?\s*cores?\b", re.I)


def gpu_cores(msg: Msg) -> int | None:
    """Apple GPU cores said in the text ("38-core GPU", "GPU: 40 cores"); None when not said or not 1–512."""
    for m in msg.finditer(_GPU_CORES):
        n = int(m.group("n") or m.group("n2") or m.group("n3"))
        msg.claim(m.start(), m.end())
        if 1 <= n <= 512:
            return n
    return None


_CPU_CORES = re.compile(r"(?<![\w.])(?P<n>\d{1,3})\s*-?\s*(?:physical\s+)?cores?\b(?!\s*(?:apple\s+)?gpu)"
                        r"|(?<![\w.])(?P<n2>\d{1,3})\s*c\s*/\s*\d{1,3}\s*t\b"
                        r"|\bcpu\s*(?:with\s*|of\s*|:\s*)?(?P<n3>\d{1,3})\s*-?\s*cores?\b", re.I)


def cpu_cores(msg: Msg) -> int | None:
    """CPU cores said in the text ("64-core", "16 cores", "32c/64t", "CPU: 24 cores"); None when not said or not
    1–1024. GPU cores ("38-core GPU") are read first by :func:`gpu_cores` and claimed."""
    for m in msg.finditer(_CPU_CORES):
        n = int(m.group("n") or m.group("n2") or m.group("n3"))
        if 1 <= n <= 1024:
            msg.claim(m.start(), m.end())
            return n
    return None


def bandwidth(msg: Msg, ext: Extraction) -> None:
    """Set ``ext.bandwidth_gbs`` (GB/s) and ``ext.tflops`` from the first figures said; reject unrealistic ones."""
    for m in msg.finditer(_BW):
        v = (parse_num(m.group("num")) or 0.0) * (1000 if m.group("u").lower() == "tb" else 1)
        msg.claim(m.start(), m.end())
        if 0 < v <= 100_000 and ext.bandwidth_gbs is None:
            ext.bandwidth_gbs = v
        elif not 0 < v <= 100_000:
            ext.reject(f"A memory bandwidth of {m.group(0).strip()} is not realistic; I ignored it.")
    for m in msg.finditer(_TFLOPS):
        v = parse_num(m.group("num")) or 0.0
        msg.claim(m.start(), m.end())
        if 0 < v <= 100_000 and ext.tflops is None:
            ext.tflops = v
