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
    ("3090 (24GB) and 3060 (12GB) in one rig", {"mixed": ["nvidia-rtx-3090", "nvidia-rtx-3060"],
                                                "vram_total_gb": 36.0}),
    ("running on an rtx 3090 + rtx 3090", {"hw": "nvidia-rtx-3090", "n_devices": 2, "mixed": ["nvidia-rtx-3090"] * 2}),
    ("I've got 2 GPUs: a 3090 and a 4090", {"mixed": ["nvidia-rtx-3090", "nvidia-rtx-4090"], "vram_total_gb": 48.0}),
    # ---- articles and counts before a card
    ("an H100 80GB HBM3 with llama 3.1 70b", {"hw": "nvidia-h100-sxm"}),
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
    ("1 tok every 3s on llama 3.3 70b, 3060", {"measured_decode_tps": 0.333, "prompt_tokens": None}),
    ("latency per token 60ms on a 4090 with qwen3 32b", {"measured_decode_tps": 16.667}),
    ("we need a token every 50 ms per user", {"target_decode_tps": 20.0, "measured_decode_tps": None}),
    ("it does 300 tokens in 20 seconds on my m1 pro", {"measured_decode_tps": 15.0}),
    ("prompt processing took 12 seconds for 8000 tokens, m2 max, qwen3 14b", {"measured_prefill_tps": 666.667,
                                                                              "prompt_tokens": 8000}),
    ("prompt eval count: 812 token(s), prompt eval duration: 2.1s, eval count: 250 token(s), eval duration: 25s "
     "on my 4070 with llama 3.1 8b", {"measured_prefill_tps": 386.667, "measured_decode_tps": 10.0,
                                      "prompt_tokens": 812, "gen_tokens": 250}),
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
    # ---- found while writing the sets below: a CPU beside the GPU is its host; two sockets written "2x"/"dual"
    ("pc specs: i7-12700k, 32gb ddr4, rtx 3080 10gb, llama 3.1 8b", {
        "hw": "nvidia-rtx-3080", "memory_gb": 10.0, "system_ram_gb": 32.0, "compare_hardware": None}),
    ("dual xeon e5-2690 v4 with 256gb, llama 3.3 70b cpu only", {
        "hw": "intel-xeon-e5-v4-broadwell", "n_devices": 2, "memory_gb": 256.0}),
    ("server: 2x epyc 9654, 768gb ddr5, deepseek v3 q4", {"hw": "amd-epyc-9004-genoa", "n_devices": 2,
                                                          "memory_gb": 768.0, "system_ram_gb": None}),
    ("Xeon Gold 6338 with 512GB, llama 3.1 8b", {"hw": "intel-xeon-ice-lake-sp", "memory_gb": 512.0}),
    # ---- a GeForce card named as a laptop's is its mobile chip
    ("my Legion laptop with a 4070, llama 3.1 8b", {"hw": "nvidia-rtx-4070-laptop"}),
    ("ROG laptop with an RTX 4090 laptop GPU 16GB", {"hw": "nvidia-rtx-4090-laptop", "memory_gb": 16.0}),
    ("gaming laptop, rtx 3060, 16gb ram", {"hw": "nvidia-rtx-3060-laptop", "system_ram_gb": 16.0}),
    ("I have a laptop and a desktop pc with an RTX 4090", {"hw": "nvidia-rtx-4090"}),
    ("two MI50s with llama 3.1 8b", {"hw": "amd-mi50", "gpu_count": 2}),
    ("which is better for 10 devs: a 4090 + 3090 box or an M4 Max 128GB?", {
        "compare_hardware": ["RTX 4090 + RTX 3090", "M4 Max 128GB"], "hw": "nvidia-rtx-4090+nvidia-rtx-3090", "concurrency": 10}),
    ("4090 vs 3090 + 3060 for qwen3 32b", {"compare_hardware": ["RTX 4090", "RTX 3090 + RTX 3060"]}),
    # ---- a CPU's model number is no GPU count; a CPU model the catalog sizes is the machine
    ("my kid's PC: Ryzen 5 5600, RTX 3060 12GB, 16GB RAM, homework help with llama 3.1 8b", {
        "hw": "nvidia-rtx-3060", "memory_gb": 12.0, "system_ram_gb": 16.0}),
    ("Ryzen 7 7840HS laptop with 32GB, llama 3.1 8b", {"hw": "amd-ryzen-7-7840hs", "memory_gb": 32.0}),
    ("Core Ultra 7 155H, 32GB, phi 4 mini", {"hw": "intel-core-ultra-7-155h", "memory_gb": 32.0}),
    ("Intel Core i5, 8GB RAM, llama 3.2 3b", {"hw": None}),
    # ---- cloud instance types name their GPUs
    ("AWS p4d.24xlarge with llama 3.3 70b for 30 users", {"hw": "nvidia-a100-40gb", "n_devices": 8, "concurrency": 30}),
    ("g5.12xlarge for mistral small 24b", {"hw": "nvidia-a10g", "n_devices": 4}),
    ("we rent an a2-highgpu-1g on GCP for qwen2.5 14b", {"hw": "nvidia-a100-40gb", "n_devices": 1}),
    ("Standard_ND96isr_H100_v5 for llama 3.1 405b", {"hw": "nvidia-h100-sxm", "n_devices": 8,
                                                     "model_id": "meta-llama/Llama-3.1-405B"}),
]

# Written after the fixes above, run once before any further change (held out): the same kinds, new words.
HELD_OUT = [
    ("got a used 3090 and a 2080 Ti in the same case, can they run qwen 2.5 32b together?", {
        "mixed": ["nvidia-rtx-3090", "nvidia-rtx-2080-ti"], "n_devices": 2, "vram_total_gb": 35.0,
        "model_id": "Qwen/Qwen2.5-32B"}),
    ("4090 & 4070 Ti Super in one PC, mistral small 3.2", {
        "mixed": ["nvidia-rtx-4090", "nvidia-rtx-4070-ti-super"], "n_devices": 2, "vram_total_gb": 40.0,
        "model_id": "mistralai/Mistral-Small-3.1-24B-Instruct-2503"}),
    ("I run a 3060 12GB together with a 3060 Ti 8GB", {"mixed": ["nvidia-rtx-3060", "nvidia-rtx-3060-ti"],
                                                       "vram_total_gb": 20.0}),
    ("an A6000 and an A4000 in a workstation, llama 3.1 70b q4", {
        "mixed": ["nvidia-rtx-a6000", "nvidia-rtx-a4000"], "vram_total_gb": 64.0}),
    ("a single A100 40GB, qwen2.5 coder 14b for the whole team of 8", {
        "hw": "nvidia-a100-40gb", "concurrency": 8, "model_id": "Qwen/Qwen2.5-Coder-14B-Instruct"}),
    ("just one H200 for llama 3.1 405b at fp8?", {"hw": "nvidia-h200", "model_id": "meta-llama/Llama-3.1-405B"}),
    ("a B200 with gpt-oss 120b for 64 users", {"hw": "nvidia-b200", "concurrency": 64}),
    ("an MI300X with vllm and llama 3.3 70b", {"hw": "amd-mi300x", "backend": "vllm"}),
    ("a pair of A100 80GB SXM4 with NVLink", {"hw": "nvidia-a100-80gb-sxm", "gpu_count": 2,
                                              "interconnect": "nvlink"}),
    ("3x RTX 3090, mistral large? no, codestral", {"hw": "nvidia-rtx-3090", "gpu_count": 3}),
    ("quad 3090 rig, llama 3.1 70b at q8_0", {"hw": "nvidia-rtx-3090", "gpu_count": 4, "quant_name": "Q8_0"}),
    ("an RTX 4090, llama 3.1 8b, and each token takes 25ms", {"measured_decode_tps": 40.0}),
    ("my M1 Max does one token every 1.5 seconds on llama 3.3 70b", {"measured_decode_tps": 0.667}),
    ("the ITL is around 120 ms with 16 users on vllm, qwen2.5 72b on 2x H100", {"measured_decode_tps": 8.333,
                                                                                  "concurrency": 16}),
    ("TTFT 9 s and TPOT 45 ms for a 12k prompt, llama 3.1 70b on an A100 80GB", {
        "measured_ttft_s": 9.0, "measured_decode_tps": 22.222, "prompt_tokens": 12000}),
    ("waits about half a minute before it starts writing, then a word every second, on my Pi 5", {
        "measured_ttft_s": 30.0, "measured_decode_tps": 1.333}),
    ("generation is 0.8 tok/s with deepseek r1 70b on my 3060", {"measured_decode_tps": 0.8,
                                                                  "model_id": "deepseek-ai/DeepSeek-R1-Distill-Llama-70B"}),
    ("ollama ps says 45%/55% CPU/GPU for qwen2.5 32b on a 4070", {"model_id": "Qwen/Qwen2.5-32B"}),
    ("llama3.1:405b-instruct-q2_K on 4x 4090", {"model_id": "meta-llama/Llama-3.1-405B", "quant_name": "Q2_K",
                                                "gpu_count": 4}),
    ("bartowski/Mistral-Nemo-Instruct-2407-GGUF Q6_K on a 4060 Ti 16GB", {
        "model_id": "mistralai/Mistral-Nemo-Instruct-2407", "quant_name": "Q6_K", "memory_gb": 16.0}),
    ("Qwen/Qwen2.5-72B-Instruct-AWQ with vLLM on 2x L40S", {"model_id": "Qwen/Qwen2.5-72B-Instruct",
                                                             "gpu_count": 2, "backend": "vllm"}),
    ("mlx-community/Qwen2.5-Coder-32B-Instruct-4bit on a Mac Studio M2 Max 64GB", {
        "model_id": "Qwen/Qwen2.5-Coder-32B-Instruct", "backend": "mlx", "memory_gb": 64.0}),
    ("devstral small on my 5090 for agentic coding", {"model_id": "mistralai/Mistral-Small-3.1-24B-Instruct-2503",
                                                      "hw": "nvidia-rtx-5090"}),
    ("gemma 3n e4b on an iphone-class laptop: macbook air m1 8gb", {"model_id": "google/gemma-3n-E4B-it",
                                                                    "memory_gb": 8.0}),
    ("llama 4 scout q4 on a mac studio m3 ultra 256gb", {"model_id": "meta-llama/Llama-4-Scout-17B-16E-Instruct",
                                                         "memory_gb": 256.0}),
    ("qwen3-235b-a22b-instruct-2507 at q3 on 2x rtx pro 6000", {"model_id": "Qwen/Qwen3-235B-A22B", "gpu_count": 2}),
    ("Phi-4 on a GTX 1660 Super 6GB", {"model_id": "microsoft/phi-4", "memory_gb": 6.0}),
    ("mum's laptop: MacBook Air M2 8GB, wants llama 3.2 3b for emails", {"memory_gb": 8.0,
                                                                        "model_id": "meta-llama/Llama-3.2-3B"}),
    ("we are a family of five sharing a mac mini m4 pro 48gb running qwen3 14b", {
        "concurrency": 5, "memory_gb": 48.0, "model_id": "Qwen/Qwen3-14B"}),
    ("40 call center agents, RAG answers of 150 words, llama 3.1 8b on an L40S", {
        "concurrency": 40, "gen_tokens": 200, "hw": "nvidia-l40s"}),
    ("startup of 12 devs, aider with qwen2.5-coder 32b, H100 NVL or 2x A6000?", {"concurrency": 12}),
    ("NVIDIA Grace CPU superchip, llama 3.1 8b cpu inference with llama.cpp", {"hw": "nvidia-grace",
                                                                                "backend": "llama.cpp"}),
    ("Jetson Thor running gemma 3n e2b for a robot", {"hw": "nvidia-agx-thor-t5000",
                                                      "model_id": "google/gemma-3n-E2B-it"}),
    ("GB200 with llama 4 maverick", {"hw": "nvidia-gb200", "n_devices": 2,
                                     "model_id": "meta-llama/Llama-4-Maverick-17B-128E-Instruct"}),
    ("an Intel Xeon Max 9480 box for llama 3.1 8b", {"hw": "intel-xeon-max-9480"}),
    ("codestral on an RTX 3090 gives 1 token every 100ms", {"measured_decode_tps": 10.0,
                                                            "model_id": "mistralai/Codestral-22B-v0.1"}),
    ("mistral nemo on my 3060 gives 25 t/s", {"measured_decode_tps": 25.0,
                                              "model_id": "mistralai/Mistral-Nemo-Instruct-2407"}),
    ("our 2 x 4090 box: llama 3.3 70b q4 gives 18 tok/s", {"gpu_count": 2, "measured_decode_tps": 18.0}),
    ("qwen2.5 7b instruct, one user, an RTX 3050 8GB", {"model_id": "Qwen/Qwen2.5-7B", "memory_gb": 8.0}),
    ("deepseek-r1-distill-qwen-1.5b on an intel i5 laptop with 16gb ddr4", {
        "model_id": "deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B"}),
]

# A third set, written last and run once before further changes: households, teams and pasted numbers in other
# words (not the gap kinds above).
BROAD = [
    ("Hi! My husband bought a Mac mini with the M4 chip and 16 gigs. Could we run a chatbot for recipes on it?",
     {"hw": "apple-m4-10gpu", "memory_gb": 16.0}),
    ("I'm a teacher; our school has an old desktop with a GTX 1070 8GB. Thirty kids would use it at once.",
     {"memory_gb": 8.0, "concurrency": 30}),
    ("my partner and I both use the same MacBook Pro M3 Max 64GB for llama 3.3 70b at q4", {
        "memory_gb": 64.0, "model_id": "meta-llama/Llama-3.3-70B-Instruct", "quant_name": "Q4_K_M"}),
    ("we'd like to translate letters, about a page each, on a Windows laptop with an RTX 4070 (8GB)", {
        "memory_gb": 8.0, "prompt_tokens": 667}),
    ("Grandpa's iMac M3 24GB; he asks one-line questions and likes long answers", {
        "memory_gb": 24.0, "gen_tokens": 1000}),
    ("Our 45-person consultancy wants a private chat assistant. Budget: one server. 2k prompts, 400-token answers.",
     {"concurrency": 45, "prompt_tokens": 2000, "gen_tokens": 400}),
    ("3 data scientists sharing a DGX Spark with qwen3 30b a3b", {"concurrency": 3,
                                                                   "hw": "nvidia-dgx-spark-gb10",
                                                                   "model_id": "Qwen/Qwen3-30B-A3B"}),
    ("We process 5,000 support tickets a day in batch, each ~800 tokens, summaries of 100 tokens", {
        "prompt_tokens": 800, "gen_tokens": 100}),
    ("team of 10 lawyers, contracts of 40 pages, llama 3.1 70b on 2x A100 80GB SXM", {
        "concurrency": 10, "prompt_tokens": 26667, "gpu_count": 2, "hw": "nvidia-a100-80gb-sxm"}),
    ("200 requests per minute at peak, 1k in / 200 out, gpt-oss-20b on H100s", {
        "requests_per_minute": 200.0, "prompt_tokens": 1000, "gen_tokens": 200, "model_id": "openai/gpt-oss-20b"}),
    ("| model | size | params | backend | ngl | test | t/s |\n| llama 8B Q4_K_M | 4.58 GiB | 8.03 B | CUDA | 99 | "
     "pp512 | 5123.4 |\n| llama 8B Q4_K_M | 4.58 GiB | 8.03 B | CUDA | 99 | tg128 | 131.2 |\non my 4090, fine?",
     {"hw": "nvidia-rtx-4090"}),
    ("eval rate: 7.85 tokens/s on my 16GB M2 with gemma 3 12b", {"measured_decode_tps": 7.85, "memory_gb": 16.0,
                                                                 "model_id": "google/gemma-3-12b-it"}),
    ("prompt eval 1.2k tok/s, gen 55 tok/s, qwen3 14b q4_k_m, 4080 super", {
        "measured_prefill_tps": 1200.0, "measured_decode_tps": 55.0, "hw": "nvidia-rtx-4080-super"}),
    ("I measured 4.5 tokens per second with llama 3.3 70b q4 on a 7900 XTX + 64GB DDR5", {
        "measured_decode_tps": 4.5, "hw": "amd-rx-7900-xtx", "system_ram_gb": 64.0}),
    ("first token takes 8 seconds for a 4000-token prompt on my m2 pro", {"measured_ttft_s": 8.0,
                                                                          "prompt_tokens": 4000}),
    ("It writes about 3 words per second with mistral 7b on my old i7 with ddr4-2666", {"measured_decode_tps": 4.0}),
    ("vLLM reports 2300 tokens/s total across 64 concurrent requests with llama 3.1 8b on an H100 SXM", {
        "measured_decode_tps": 2300.0, "concurrency": 64, "hw": "nvidia-h100-sxm"}),
    ("our coding agent sends 30k-token prompts to qwen3 coder 30b on a 5090; how long until the first token?", {
        "prompt_tokens": 30000, "use": "coding_agent", "hw": "nvidia-rtx-5090",
        "model_id": "Qwen/Qwen3-Coder-30B-A3B-Instruct"}),
    ("16k context, q8 kv cache, llama.cpp -ngl 99 -c 16384, qwen2.5 14b on a 3090", {
        "context_window": 16384, "n_gpu_layers": 99, "model_id": "Qwen/Qwen2.5-14B"}),
    ("Radeon RX 7800 XT 16GB, Vulkan, llama 3.1 8b q6_k", {"hw": "amd-rx-7800-xt", "quant_name": "Q6_K"}),
    ("MacBook Pro 14 M4 Pro 24GB, LM Studio, gemma 3 12b qat", {"memory_gb": 24.0, "backend": "LM Studio",
                                                                "model_id": "google/gemma-3-12b-it"}),
    ("two RTX 5090s with vLLM tensor parallel, qwen2.5 72b awq", {"gpu_count": 2, "backend": "vllm",
                                                                   "model_id": "Qwen/Qwen2.5-72B-Instruct"}),
    ("Framework laptop, Ryzen 7 7840U with 32GB LPDDR5, phi-4 mini", {"model_id": "microsoft/Phi-4-mini-instruct"}),
    ("Apple M3 Ultra Mac Studio with 512GB for deepseek r1 671b at q4", {"memory_gb": 512.0,
                                                                         "model_id": "deepseek-ai/DeepSeek-R1"}),
    ("we are comparing a mac studio m4 max 128gb and a dgx spark for gpt-oss-120b", {
        "compare_hardware": ["Mac Studio M4 Max", "dgx spark"], "model_id": "openai/gpt-oss-120b"}),
]
