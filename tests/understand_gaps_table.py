"""First messages written for the gaps the stop-11 closing note listed, and around them: models people name
(Mistral Nemo, Llama 3.1 405B, Qwen2.5(-Coder), Codestral, Gemma 3n, Mistral Small 3.x, R1 distills, Llama 4,
gpt-oss), mixed GPUs in one box, articles and counts before a card ("an A100", "a pair of 3090s"), NVIDIA's
Grace/GB200/Jetson parts, speeds written as intervals ("1 token every 2 seconds", "ITL 35 ms"), and households,
teams and people pasting numbers.

Keys as in ``understand_table.py`` (``ask --json`` ``facts`` fields; ``hw`` catalog id without ``xN``;
``model_id``; ``quant_name``), plus ``n_devices`` (devices in the resolved machine), ``vram_total_gb`` (memory of
the whole machine, GB: device memory × devices, or the sum over a mixed box), ``mixed`` (catalog ids of the cards
in a mixed box, in order). Rates: ``measured_decode_tps`` tok/s (an interval t s/token → 1/t), ``measured_ttft_s``.
"""

from __future__ import annotations

GAPS = [
    # ---- models the catalog lacked
    ("Mistral Nemo 12B on my RTX 3060 12GB, is it usable?",
     {"model_id": "mistralai/Mistral-Nemo-Instruct-2407", "hw": "nvidia-rtx-3060", "memory_gb": 12.0}),
    ("can a 4070 Ti run mistral-nemo at q4_k_m?", {"model_id": "mistralai/Mistral-Nemo-Instruct-2407",
                                                  "quant_name": "Q4_K_M", "hw": "nvidia-rtx-4070-ti"}),
    ("ollama run mistral-nemo:12b on a macbook pro m3 pro 18gb",
     {"model_id": "mistralai/Mistral-Nemo-Instruct-2407", "backend": "ollama", "memory_gb": 18.0}),
    ("We want Llama 3.1 405B at FP8 on 8x H100 SXM", {"model_id": "meta-llama/Llama-3.1-405B", "gpu_count": 8,
                                                      "hw": "nvidia-h100-sxm"}),
    ("llama3.1:405b on a Mac Studio M3 Ultra 512GB?", {"model_id": "meta-llama/Llama-3.1-405B", "memory_gb": 512.0}),
    ("qwen2.5-coder:14b in ollama, RTX 4060 Ti 16GB", {"model_id": "Qwen/Qwen2.5-Coder-14B-Instruct",
                                                        "backend": "ollama", "memory_gb": 16.0}),
    ("Qwen2.5-Coder-32B-Instruct Q4_K_M on a 3090", {"model_id": "Qwen/Qwen2.5-Coder-32B-Instruct",
                                                      "quant_name": "Q4_K_M", "hw": "nvidia-rtx-3090"}),
    ("qwen 2.5 coder 7b for autocomplete on an m2 air 16gb", {"model_id": "Qwen/Qwen2.5-Coder-7B-Instruct",
                                                               "memory_gb": 16.0}),
    ("Qwen2.5 72B Instruct on two A6000s", {"model_id": "Qwen/Qwen2.5-72B-Instruct", "gpu_count": 2,
                                              "hw": "nvidia-rtx-a6000"}),
    ("qwen2.5:72b q4 on a Mac Studio M2 Ultra 192GB", {"model_id": "Qwen/Qwen2.5-72B-Instruct", "memory_gb": 192.0}),
    ("Qwen 2.5 14B on an RTX 4080", {"model_id": "Qwen/Qwen2.5-14B", "hw": "nvidia-rtx-4080"}),
    ("qwen2.5 32b instruct at 4-bit on a 4090", {"model_id": "Qwen/Qwen2.5-32B", "hw": "nvidia-rtx-4090"}),
    ("Codestral 22B for code completion on a 4090", {"model_id": "mistralai/Codestral-22B-v0.1",
                                                       "hw": "nvidia-rtx-4090"}),
    ("codestral:22b q5_k_m on an M4 Pro 48GB", {"model_id": "mistralai/Codestral-22B-v0.1", "quant_name": "Q5_K_M",
                                                 "memory_gb": 48.0}),
    ("gemma 3n e4b on a raspberry pi 5 8gb", {"model_id": "google/gemma-3n-E4B-it", "hw": "raspberry-pi-5"}),
    ("gemma3n:e2b on my old laptop with ddr4-3200", {"model_id": "google/gemma-3n-E2B-it"}),
    ("mistral small 3.1 24b on a 3090", {"model_id": "mistralai/Mistral-Small-3.1-24B-Instruct-2503",
                                          "hw": "nvidia-rtx-3090"}),
    ("Mistral-Small-3.2-24B-Instruct-2506 at Q4_K_M, RTX 5090", {
        "model_id": "mistralai/Mistral-Small-3.1-24B-Instruct-2503", "quant_name": "Q4_K_M", "hw": "nvidia-rtx-5090"}),
    ("mistral small 24b 2501 on an M4 Max", {"model_id": "mistralai/Mistral-Small-24B-Instruct-2501"}),
    ("phi-4 14b on a 4060 ti 16gb", {"model_id": "microsoft/phi-4", "memory_gb": 16.0}),
    ("deepseek-r1:14b in ollama on a 3080 10GB", {"model_id": "deepseek-ai/DeepSeek-R1-Distill-Qwen-14B",
                                                   "memory_gb": 10.0, "backend": "ollama"}),
    ("DeepSeek R1 Distill Llama 70B on 2x 3090", {"model_id": "deepseek-ai/DeepSeek-R1-Distill-Llama-70B",
                                                   "gpu_count": 2}),
    ("deepseek-r1:1.5b on a Raspberry Pi 5", {"model_id": "deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B",
                                              "hw": "raspberry-pi-5"}),
    ("Llama 4 Scout on an H100 80GB", {"model_id": "meta-llama/Llama-4-Scout-17B-16E-Instruct"}),
    ("llama 4 maverick on 8x H200", {"model_id": "meta-llama/Llama-4-Maverick-17B-128E-Instruct", "gpu_count": 8,
                                     "hw": "nvidia-h200"}),
    ("qwen3 235b a22b on an M3 Ultra 256GB", {"model_id": "Qwen/Qwen3-235B-A22B", "memory_gb": 256.0}),
    ("gpt-oss-120b on a DGX Spark", {"model_id": "openai/gpt-oss-120b", "hw": "nvidia-dgx-spark-gb10"}),
    ("gpt-oss 20b in LM Studio on a 5070 Ti", {"model_id": "openai/gpt-oss-20b", "hw": "nvidia-rtx-5070-ti",
                                               "backend": "LM Studio"}),
    ("Mistral 7B v0.3 on an RTX 3060", {"model_id": "mistralai/Mistral-7B-Instruct-v0.3", "hw": "nvidia-rtx-3060"}),
    ("mistral-7b-instruct-v0.3.Q4_K_M.gguf on a 1080 ti", {"model_id": "mistralai/Mistral-7B-Instruct-v0.3",
                                                            "quant_name": "Q4_K_M"}),
    ("Mistral 7B v0.2 on my M1 Air 8GB", {"model_id": "mistralai/Mistral-7B-Instruct-v0.2", "memory_gb": 8.0}),
    # ---- mixed GPUs in one box
    ("I have a 4090 + a 3090 in one box, llama 3.3 70b q4_k_m", {
        "hw": "nvidia-rtx-4090+nvidia-rtx-3090", "mixed": ["nvidia-rtx-4090", "nvidia-rtx-3090"], "n_devices": 2,
        "vram_total_gb": 48.0, "model_id": "meta-llama/Llama-3.3-70B-Instruct"}),
    ("my rig: 3090 and 3060 12GB, qwen2.5 32b", {
        "mixed": ["nvidia-rtx-3090", "nvidia-rtx-3060"], "n_devices": 2, "vram_total_gb": 36.0,
        "model_id": "Qwen/Qwen2.5-32B"}),
    ("RTX 3090 + RTX 3060 running mistral small 24b in llama.cpp", {
        "mixed": ["nvidia-rtx-3090", "nvidia-rtx-3060"], "n_devices": 2, "vram_total_gb": 36.0,
        "backend": "llama.cpp"}),
    ("two 3090s and a 3060 in one machine, 70b at q4", {
        "mixed": ["nvidia-rtx-3090", "nvidia-rtx-3090", "nvidia-rtx-3060"], "n_devices": 3, "vram_total_gb": 60.0}),
    ("a 4080 and a 4060 Ti 16GB together, gemma 3 27b", {
        "mixed": ["nvidia-rtx-4080", "nvidia-rtx-4060-ti"], "n_devices": 2, "vram_total_gb": 32.0,
        "model_id": "google/gemma-3-27b-it"}),
    ("5090 plus my old 3090, what speed for llama 3.3 70b?", {
        "mixed": ["nvidia-rtx-5090", "nvidia-rtx-3090"], "n_devices": 2, "vram_total_gb": 56.0}),
    # ---- articles and counts before a card
    ("I have an A100 and run llama 3.1 8b q4", {"hw": "nvidia-a100-40gb", "model_id": "meta-llama/Llama-3.1-8B"}),
    ("an A100 80GB with vllm serving qwen3 32b", {"hw": "nvidia-a100-80gb-pcie", "memory_gb": 80.0,
                                                    "backend": "vllm"}),
    ("one H100 with qwen2.5 72b at fp8", {"hw": "nvidia-h100-pcie", "model_id": "Qwen/Qwen2.5-72B-Instruct"}),
    ("a single H100 SXM, llama 3.1 70b", {"hw": "nvidia-h100-sxm", "model_id": "meta-llama/Llama-3.1-70B"}),
    ("an H100 for 20 users of gpt-oss-120b", {"hw": "nvidia-h100-pcie", "concurrency": 20}),
    ("a 4090 with llama 3.1 8b", {"hw": "nvidia-rtx-4090", "model_id": "meta-llama/Llama-3.1-8B"}),
    ("a pair of 3090s, llama 3.3 70b", {"hw": "nvidia-rtx-3090", "gpu_count": 2, "n_devices": 2}),
    ("dual 4090s running qwen3 32b", {"hw": "nvidia-rtx-4090", "gpu_count": 2, "n_devices": 2}),
    ("2x RTX 3090 with mistral small 24b", {"hw": "nvidia-rtx-3090", "gpu_count": 2}),
    ("RTX 3090 x2, 70b q4_k_m", {"hw": "nvidia-rtx-3090", "gpu_count": 2}),
    ("two A100s 80GB SXM with llama 3.1 70b", {"hw": "nvidia-a100-80gb-sxm", "gpu_count": 2}),
    ("four H100s in a box for qwen3 235b", {"hw": "nvidia-h100-sxm", "gpu_count": 4}),
    ("a single RTX 5090 for gemma 3 27b", {"hw": "nvidia-rtx-5090", "gpu_count": None}),
    ("one 3090 and llama 3.1 8b", {"hw": "nvidia-rtx-3090"}),
    ("an RX 7900 XTX with rocm, llama 3.1 8b", {"hw": "amd-rx-7900-xtx"}),
    ("an L40S running vllm with llama 3.1 8b", {"hw": "nvidia-l40s", "backend": "vllm"}),
    # ---- NVIDIA Grace, GB200, Jetson, Xeon Max
    ("NVIDIA Grace CPU only, llama 3.1 70b", {"hw": "nvidia-grace"}),
    ("a GH200 with 96GB, llama 3.1 70b fp8", {"hw": "nvidia-gh200"}),
    ("GB200 superchip serving llama 3.1 405b", {"hw": "nvidia-gb200", "n_devices": 2}),
    ("Jetson AGX Thor with qwen3 8b", {"hw": "nvidia-agx-thor-t5000"}),
    ("Jetson AGX Orin 64GB running llama 3.2 3b", {"hw": "nvidia-jetson-agx-orin-64gb"}),
    ("Intel Xeon Max 9480 with its 64GB HBM, llama 3.1 8b on the CPU", {"hw": "intel-xeon-max-9480"}),
    ("DGX Spark with gpt-oss-120b", {"hw": "nvidia-dgx-spark-gb10"}),
    # ---- speeds written as intervals
    ("llama 3.1 8b on my 4090 gives 1 token every 2 seconds", {"measured_decode_tps": 0.5, "hw": "nvidia-rtx-4090",
                                                                "prompt_tokens": None}),
    ("qwen3 32b runs at 2 seconds per token on my M1 16GB", {"measured_decode_tps": 0.5, "memory_gb": 16.0}),
    ("about 500 ms per token with llama 3.3 70b on 2x 3090", {"measured_decode_tps": 2.0}),
    ("ITL 35 ms on vllm with qwen3 8b on an L40S", {"measured_decode_tps": 28.571}),
    ("inter-token latency is 80ms, TTFT 1.2s, H100, llama 3.1 70b", {"measured_decode_tps": 12.5,
                                                                      "measured_ttft_s": 1.2}),
    ("it takes 40 s before the first word appears, gemma 3 27b on a 3060", {"measured_ttft_s": 40.0}),
    ("takes 40 seconds before the first word, then 3 tok/s, llama 70b on a 4090",
     {"measured_ttft_s": 40.0, "measured_decode_tps": 3.0}),
    ("a token every 0.25 s on my macbook air m2 with mistral 7b", {"measured_decode_tps": 4.0}),
    ("each token takes about 100 milliseconds, qwen3 14b, rtx 4070", {"measured_decode_tps": 10.0}),
    ("one word per second on my pi 5 with tinyllama", {"measured_decode_tps": 1.333}),
    ("first token after 12 seconds, then about 200ms per token, M2 Max 32GB, qwen3 30b a3b",
     {"measured_ttft_s": 12.0, "measured_decode_tps": 5.0}),
    ("I get 45 tok/s generation and 1200 t/s prompt processing on a 3090 with llama 3.1 8b",
     {"measured_decode_tps": 45.0, "measured_prefill_tps": 1200.0}),
    # ---- households
    ("my grandson set up llama 3.2 3b on our old imac m1 8gb, is that ok for recipes?",
     {"hw": "apple-m1-8gpu", "memory_gb": 8.0, "model_id": "meta-llama/Llama-3.2-3B"}),
    ("we share a mac mini m4 24gb as a family, 3 of us at the same time with gemma 3 12b",
     {"memory_gb": 24.0, "concurrency": 3, "model_id": "google/gemma-3-12b-it"}),
    ("my wife's MacBook Air M2 16GB and my gaming PC with a 4070 Super, which runs qwen3 8b better?",
     {"compare_hardware": ["MacBook Air M2", "RTX 4070 Super"]}),
    ("kids' homework helper on a laptop with an RTX 4060 8GB and 16GB RAM", {"memory_gb": 8.0,
                                                                            "system_ram_gb": 16.0}),
    ("I'd like to summarise 10 page PDFs on my M3 Pro 36GB with qwen3 14b",
     {"memory_gb": 36.0, "use": "summarising", "prompt_tokens": 6667, "model_id": "Qwen/Qwen3-14B"}),
    ("Our home server has a Ryzen 9 7950X, 64GB DDR5-6000 and no GPU; llama 3.1 8b?",
     {"model_id": "meta-llama/Llama-3.1-8B"}),
    ("just bought a mac studio m4 max with 128 gb, what about llama 3.3 70b at 8-bit?",
     {"memory_gb": 128.0, "model_id": "meta-llama/Llama-3.3-70B-Instruct", "quant_name": "Q8_0"}),
    ("my teenage son has a 3060 ti and wants to run deepseek r1 8b", {
        "hw": "nvidia-rtx-3060-ti", "model_id": "deepseek-ai/DeepSeek-R1-Distill-Llama-8B"}),
    ("an old 1080 Ti 11GB with mistral 7b", {"memory_gb": 11.0}),
    ("we have a framework desktop with the ryzen ai max+ 395 and 128gb, gpt-oss 120b?",
     {"hw": "amd-ryzen-ai-max-plus-395", "memory_gb": 128.0, "model_id": "openai/gpt-oss-120b"}),
    # ---- teams
    ("15 developers, coding agent, 16k prompts, qwen2.5-coder 32b on 2x L40S", {
        "concurrency": 15, "use": "coding_agent", "prompt_tokens": 16000,
        "model_id": "Qwen/Qwen2.5-Coder-32B-Instruct", "gpu_count": 2, "hw": "nvidia-l40s"}),
    ("Our lab of 8 wants llama 3.1 405b; is a GB200 NVL72 slice overkill vs 8x H200?", {"concurrency": 8}),
    ("30 support agents, RAG, 4k token prompts, 250 token answers, qwen2.5 72b on 4x A100 80GB", {
        "concurrency": 30, "use": "rag", "prompt_tokens": 4000, "gen_tokens": 250, "gpu_count": 4,
        "model_id": "Qwen/Qwen2.5-72B-Instruct"}),
    ("a team of 6 sharing one RTX 6000 Ada with mistral small 3.1", {
        "concurrency": 6, "hw": "nvidia-rtx-6000-ada", "model_id": "mistralai/Mistral-Small-3.1-24B-Instruct-2503"}),
    ("we'll have about 120 requests per hour, 3k tokens in, 500 out, codestral on an A100 40GB", {
        "requests_per_minute": 2.0, "prompt_tokens": 3000, "gen_tokens": 500,
        "model_id": "mistralai/Codestral-22B-v0.1", "hw": "nvidia-a100-40gb"}),
    ("H200 or B200 for 50 concurrent users of llama 3.3 70b fp8?", {
        "concurrency": 50, "compare_hardware": ["H200", "B200"]}),
    ("20 engineers; should we buy two 5090s or one RTX PRO 6000 for qwen3 coder 30b?", {"concurrency": 20}),
    ("12 analysts, summarising 30-page reports with llama 3.1 70b on 2x H100 NVLink", {
        "concurrency": 12, "use": "summarising", "prompt_tokens": 20000, "gpu_count": 2, "interconnect": "nvlink"}),
    # ---- people pasting numbers
    ("llama-bench says pp512 1450 and tg128 38 for qwen2.5 14b q4_k_m on my 4070 Ti Super",
     {"measured_prefill_tps": 1450.0, "measured_decode_tps": 38.0, "model_id": "Qwen/Qwen2.5-14B"}),
    ("ollama --verbose: prompt eval rate 95 tokens/s, eval rate 4.1 tokens/s, llama 3.3 70b on a 4090",
     {"measured_prefill_tps": 95.0, "measured_decode_tps": 4.1}),
    ("LM Studio shows 12.3 tok/sec, time to first token 3.2s, mistral nemo on a 3060 12GB",
     {"measured_decode_tps": 12.3, "measured_ttft_s": 3.2, "model_id": "mistralai/Mistral-Nemo-Instruct-2407"}),
    ("vllm: avg generation throughput 850 tokens/s with 32 requests running, qwen2.5 7b on an A100 80GB PCIe",
     {"measured_decode_tps": 850.0, "hw": "nvidia-a100-80gb-pcie"}),
    ("mlx_lm.generate: Prompt: 512 tokens, 480.2 tokens-per-sec; Generation: 256 tokens, 42.1 tokens-per-sec; "
     "M3 Max 64GB, qwen3 8b", {"measured_decode_tps": 42.1, "measured_prefill_tps": 480.2, "memory_gb": 64.0}),
    ("my 3090 does 18 t/s on qwen2.5 32b q4_k_m, is that normal?", {"measured_decode_tps": 18.0,
                                                                       "model_id": "Qwen/Qwen2.5-32B"}),
    ("gpt-oss-20b: 150 tokens per second on a 5090", {"measured_decode_tps": 150.0, "hw": "nvidia-rtx-5090"}),
    ("codestral 22b gives me 9 tok/s on M2 Pro 32GB, prompt eval 60 tok/s", {
        "measured_decode_tps": 9.0, "measured_prefill_tps": 60.0, "model_id": "mistralai/Codestral-22B-v0.1"}),
]
