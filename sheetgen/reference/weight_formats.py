"""Weight formats and the tensor peak each one uses (issue 41).

A matrix multiply on weights stored in a format runs at the accelerator's dense peak
for that format, where the chip has tensor cores for it:

  mxfp4, nvfp4     the FP4 peak (``peak_fp4_tflops``: Blackwell, Blackwell Ultra,
                   CDNA 4); without one the FP8 peak, else the BF16 peak
  fp8              the FP8 peak; without one the BF16 peak
  anything else    the BF16 peak: BF16 / FP16 / FP32 weights, and the integer
                   weight-only formats (int8, int4), dequantized to BF16 / FP16
                   before the multiply (GPTQ, Frantar et al. 2022; AWQ, Lin et al. 2023)

The bytes per weight of each format, its block scales included, are the Presets dtype
table's (``presets/tables/dtypes.yaml``): MXFP4 0.5 + 1/32 = 0.53125 B (4.25 bits:
one 8-bit E8M0 scale per block of 32 values, OCP Microscaling Formats (MX) v1.0,
section 5); NVFP4 0.5 + 1/16 = 0.5625 B (4.5 bits: one FP8 E4M3 scale per block of
16, plus one FP32 scale per tensor, 4 bytes per tensor, under 10^-6 B per weight for
any tensor of 4M values or more and left out).

The workbook's Inputs row ``weight_format_peak_flops`` computes the same from the
looked-up peaks.
"""

from __future__ import annotations

from sheetgen.scenarios.scenario import Hardware

FP4_FORMATS = ("mxfp4", "nvfp4")


def weight_format_peak_tflops(hw: Hardware, weight_dtype: str) -> float:
    """The dense TFLOP/s a multiply on weights of ``weight_dtype`` can use on ``hw``."""
    if weight_dtype in FP4_FORMATS and hw.peak_fp4_tflops > 0:
        return hw.peak_fp4_tflops
    if weight_dtype in (*FP4_FORMATS, "fp8") and hw.peak_fp8_tflops > 0:
        return hw.peak_fp8_tflops
    return hw.peak_bf16_tflops
