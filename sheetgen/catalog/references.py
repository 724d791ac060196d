"""The public documents the workbook's sources name, with links (About sheet)."""

from __future__ import annotations

# (short citation as the source column writes it, full title, link)
REFERENCES: tuple[tuple[str, str, str], ...] = (
    (
        "Dao 2023",
        "FlashAttention-2: Faster Attention with Better Parallelism and Work Partitioning",
        "https://arxiv.org/abs/2307.08691",
    ),
    (
        "Shah et al. 2024",
        "FlashAttention-3: Fast and Accurate Attention with Asynchrony and Low-precision",
        "https://arxiv.org/abs/2407.08608",
    ),
    (
        "Li et al. 2020",
        "PyTorch Distributed: Experiences on Accelerating Data Parallel Training",
        "https://arxiv.org/abs/2006.15704",
    ),
    ("Dubey et al. 2024", "The Llama 3 Herd of Models", "https://arxiv.org/abs/2407.21783"),
    (
        "Llama 3.1 model card",
        "Meta, Llama 3.1 model card (training GPU-hours)",
        "https://github.com/meta-llama/llama-models/blob/main/models/llama3_1/MODEL_CARD.md",
    ),
    (
        "Llama 3 config.json",
        "Meta Llama 3 model configurations on Hugging Face",
        "https://huggingface.co/meta-llama/Meta-Llama-3-8B/blob/main/config.json",
    ),
    (
        "DeepSeek-AI 2024",
        "DeepSeek-V3 Technical Report",
        "https://arxiv.org/abs/2412.19437",
    ),
    (
        "Bi et al. 2024",
        "DeepSeek LLM: Scaling Open-Source Language Models with Longtermism (DeepSeek-AI)",
        "https://arxiv.org/abs/2401.02954",
    ),
    (
        "Huang et al. 2019",
        "GPipe: Efficient Training of Giant Neural Networks using Pipeline Parallelism",
        "https://arxiv.org/abs/1811.06965",
    ),
    (
        "Korthikanti et al. 2022",
        "Reducing Activation Recomputation in Large Transformer Models",
        "https://arxiv.org/abs/2205.05198",
    ),
    (
        "Rajbhandari et al. 2020",
        "ZeRO: Memory Optimizations Toward Training Trillion Parameter Models",
        "https://arxiv.org/abs/1910.02054",
    ),
    (
        "Tazi et al. 2025",
        "The Ultra-Scale Playbook: Training LLMs on GPU Clusters",
        "https://huggingface.co/spaces/nanotron/ultrascale-playbook",
    ),
    (
        "Austin et al. 2025",
        "How to Scale Your Model, part 4: All the Transformer Math You Need to Know",
        "https://jax-ml.github.io/scaling-book/transformers/",
    ),
    (
        "Kaplan et al. 2020",
        "Scaling Laws for Neural Language Models",
        "https://arxiv.org/abs/2001.08361",
    ),
    (
        "Hoffmann et al. 2022",
        "Training Compute-Optimal Large Language Models (Chinchilla)",
        "https://arxiv.org/abs/2203.15556",
    ),
    (
        "Muennighoff et al. 2023",
        "Scaling Data-Constrained Language Models (epochs)",
        "https://arxiv.org/abs/2305.16264",
    ),
    (
        "Chowdhery et al. 2022",
        "PaLM: Scaling Language Modeling with Pathways (MFU)",
        "https://arxiv.org/abs/2204.02311",
    ),
    (
        "Shoeybi et al. 2019",
        "Megatron-LM: Training Multi-Billion Parameter Language Models Using Model Parallelism",
        "https://arxiv.org/abs/1909.08053",
    ),
    (
        "Narayanan et al. 2021",
        "Efficient Large-Scale Language Model Training on GPU Clusters Using Megatron-LM",
        "https://arxiv.org/abs/2104.04473",
    ),
    (
        "Dao et al. 2022",
        "FlashAttention: Fast and Memory-Efficient Exact Attention with IO-Awareness",
        "https://arxiv.org/abs/2205.14135",
    ),
    (
        "Chen et al. 2016",
        "Training Deep Nets with Sublinear Memory Cost",
        "https://arxiv.org/abs/1604.06174",
    ),
    (
        "Lepikhin et al. 2020",
        "GShard: Scaling Giant Models with Conditional Computation and Automatic Sharding",
        "https://arxiv.org/abs/2006.16668",
    ),
    (
        "Liu et al. 2023",
        "Ring Attention with Blockwise Transformers for Near-Infinite Context",
        "https://arxiv.org/abs/2310.01889",
    ),
    (
        "Jiang et al. 2023",
        "Mistral 7B (sliding-window attention, rolling buffer cache)",
        "https://arxiv.org/abs/2310.06825",
    ),
    (
        "Riviere et al. 2024",
        "Gemma 2: Improving Open Language Models at a Practical Size (local and global attention)",
        "https://arxiv.org/abs/2408.00118",
    ),
    (
        "Pope et al. 2022",
        "Efficiently Scaling Transformer Inference",
        "https://arxiv.org/abs/2211.05102",
    ),
    (
        "Williams et al. 2009",
        "Roofline: An Insightful Visual Performance Model for Multicore Architectures "
        "(Communications of the ACM 52(4))",
        "https://doi.org/10.1145/1498765.1498785",
    ),
    (
        "Yu et al. 2022",
        "Orca: A Distributed Serving System for Transformer-Based Generative Models (OSDI 2022)",
        "https://www.usenix.org/conference/osdi22/presentation/yu",
    ),
    (
        "Kwon et al. 2023",
        "Efficient Memory Management for LLM Serving with PagedAttention (vLLM)",
        "https://arxiv.org/abs/2309.06180",
    ),
    (
        "Micikevicius et al. 2022",
        "FP8 Formats for Deep Learning",
        "https://arxiv.org/abs/2209.05433",
    ),
    (
        "Frantar et al. 2022; Lin et al. 2023",
        "GPTQ; AWQ (weight quantization, group size 128)",
        "https://arxiv.org/abs/2210.17323",
    ),
    (
        "Ren et al. 2021",
        "ZeRO-Offload: Democratizing Billion-Scale Model Training",
        "https://arxiv.org/abs/2101.06840",
    ),
    (
        "Rajbhandari et al. 2021",
        "ZeRO-Infinity: Breaking the GPU Memory Wall for Extreme Scale Deep Learning",
        "https://arxiv.org/abs/2104.07857",
    ),
    (
        "Zhao et al. 2023",
        "PyTorch FSDP: Experiences on Scaling Fully Sharded Data Parallel",
        "https://arxiv.org/abs/2304.11277",
    ),
    (
        "Dettmers et al. 2022",
        "8-bit Optimizers via Block-wise Quantization",
        "https://arxiv.org/abs/2110.02861",
    ),
    (
        "Li 2023",
        "llm-analysis: latency and memory analysis of transformer models",
        "https://github.com/cli99/llm-analysis",
    ),
    (
        "Uptime Institute 2023",
        "Global Data Center Survey 2023 (average PUE 1.58)",
        "https://uptimeinstitute.com/resources/research-and-reports",
    ),
    (
        "EIA Electric Power Annual",
        "U.S. Energy Information Administration, average industrial electricity price",
        "https://www.eia.gov/electricity/annual/",
    ),
    # Fine-tuning recipes (issue 22, part 5).
    (
        "Hu et al. 2021",
        "LoRA: Low-Rank Adaptation of Large Language Models",
        "https://arxiv.org/abs/2106.09685",
    ),
    (
        "Dettmers et al. 2023",
        "QLoRA: Efficient Finetuning of Quantized LLMs",
        "https://arxiv.org/abs/2305.14314",
    ),
    (
        "Touvron et al. 2023",
        "LLaMA: Open and Efficient Foundation Language Models",
        "https://arxiv.org/abs/2302.13971",
    ),
    (
        "Hugging Face PEFT",
        "PEFT: LoraConfig, get_peft_model, print_trainable_parameters",
        "https://huggingface.co/docs/peft/package_reference/lora",
    ),
    (
        "Hugging Face transformers, bitsandbytes integration",
        "transformers: bitsandbytes 4-bit quantization (BitsAndBytesConfig)",
        "https://huggingface.co/docs/transformers/main_classes/quantization",
    ),
    # The step-time model's calibration runs besides the papers above (Parallelism sheet).
    (
        "NVIDIA NeMo performance tables",
        "NVIDIA NeMo Framework / Megatron Bridge performance summary: DGX-H100 pretraining "
        "throughput (calibration runs of the step-time model)",
        "https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob/main/docs/performance-summary.md",
    ),
    # The hf-eager activation profile (Memory sheet).
    (
        "Hugging Face transformers, Llama",
        "transformers: models/llama/modeling_llama.py (LlamaRMSNorm in FP32, SDPA attention)",
        "https://github.com/huggingface/transformers/blob/main/src/transformers/models/llama/"
        "modeling_llama.py",
    ),
    (
        "PyTorch autograd",
        "PyTorch autograd: hooks for saved tensors (what a layer keeps for backward)",
        "https://pytorch.org/docs/stable/autograd.html#hooks-for-saved-tensors",
    ),
    (
        "Vendor datasheets",
        "Accelerator peaks, memory, bandwidth and TDP: see each Presets row's source",
        "https://www.nvidia.com/en-us/data-center/h100/",
    ),
    (
        "OpenAI 2025",
        "gpt-oss-120b & gpt-oss-20b Model Card",
        "https://arxiv.org/abs/2508.10925",
    ),
    (
        "Yang et al. 2025",
        "Qwen3 Technical Report",
        "https://arxiv.org/abs/2505.09388",
    ),
    (
        "Kamath et al. 2025",
        "Gemma 3 Technical Report (Gemma Team)",
        "https://arxiv.org/abs/2503.19786",
    ),
    (
        "OLMo et al. 2024",
        "2 OLMo 2 Furious",
        "https://arxiv.org/abs/2501.00656",
    ),
    (
        "Meta 2025",
        "The Llama 4 herd: the beginning of a new era of natively multimodal AI innovation",
        "https://ai.meta.com/blog/llama-4-multimodal-intelligence/",
    ),
    # Memory as measured (issue 40)
    (
        "Zamirai et al. 2020",
        "Revisiting BFloat16 Training",
        "https://arxiv.org/abs/2010.06192",
    ),
    (
        "Hsu et al. 2024",
        "Liger Kernel: Efficient Triton Kernels for LLM Training",
        "https://arxiv.org/abs/2410.10989",
    ),
    (
        "Wijmans et al. 2024",
        "Cut Your Losses in Large-Vocabulary Language Models",
        "https://arxiv.org/abs/2411.09009",
    ),
)
