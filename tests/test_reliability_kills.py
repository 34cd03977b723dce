"""Issue 17: kill -9 in the middle of bulk writes — every reported save is there, no import is half there,
and the store opens (and is not sent to ``db recover``) afterwards."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from knowledge.store import Store

ROOT = Path(__file__).resolve().parents[1]
ROWS_PER_IMPORT = 300
WRITER = textwrap.dedent("""
    import sys
    from knowledge.store import Store
    st = Store(sys.argv[1])
    i = int(sys.argv[2])
    while True:
        ms = [{"decode_tps": 50.0 + k % 70, "gen_tokens": 128, "prompt_tokens": k, "model": "llama-3.1-8b",
               "quant": "Q4_K_M"} for k in range(ROWS)]
        iid = st.save_import(fmt="kill", raw_text=f"run {i}", measurements=ms, hardware="RTX 4090",
                             hw_id="nvidia-rtx-4090")
        print(iid, flush=True)
        i += 1
""").replace("ROWS", str(ROWS_PER_IMPORT))


def test_kill_9_during_bulk_imports(tmp_path):
    path = str(tmp_path / "s.duckdb")
    Store(path).close()
    reported: list[str] = []
    rng = random.Random(17)
    for k in range(3):
        proc = subprocess.Popen([sys.executable, "-c", WRITER, path, str(k * 10_000)], cwd=ROOT,
                                stdout=subprocess.PIPE, text=True)
        assert proc.stdout is not None
        reported.append(proc.stdout.readline().strip())  # at least one save reported
        time.sleep(rng.uniform(0.05, 0.6))
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        reported += [x.strip() for x in proc.stdout.read().splitlines() if x.strip()]
    st = Store(path)  # opens: not "damaged"
    per = {r["parent_id"]: r["n"] for r in st.query(
        "SELECT parent_id, count(*) AS n FROM results WHERE origin = 'import' GROUP BY 1")}
    assert set(reported) <= set(per)  # every save reported as done is there
    assert set(per.values()) == {ROWS_PER_IMPORT}  # no import is half there
    assert len(st.query("SELECT import_id FROM imports")) == len(per)
