"""The Hardware sheet: this scenario's model, tokens and layout on every accelerator of the
Presets hardware table, on the Summary's clock, and which is cheapest among those that fit.

One slot per row of the Presets hardware table (``HARDWARE_SLOTS`` rows: the presets,
shipped and a team's own, any accelerator a scenario defines, then empty custom rows).
For the accelerator in slot n, with everything else of the scenario unchanged:

  fits        the layout's calibrated peak per GPU (Parallelism sheet, hardware-free)
              <= that accelerator's memory x (1 - headroom)
  runs        the row is complete (peaks, memory, bandwidths, efficiencies above 0)
              and an FP8 plan has an FP8 peak and efficiency there
  step time   the Parallelism sheet's step-time model (``throughput.step_model``) with
              that accelerator's GEMM peak and efficiency curve, attention efficiency,
              HBM bandwidth (memory-bound work, MoE token permutation, optimizer
              step), link bandwidths (tensor, context, data and pipeline traffic; a
              group stays in a node by the Parallelism sheet's rule; the
              expert-parallel all-to-all's in-node and cross-node bytes, split by
              this accelerator's GPUs per node, at its NVLink and NIC rates), the
              routed experts' grouped GEMMs at its GEMM peak and efficiency, and
              host link
  node        GPUs per node there: the scenario's ``gpus_per_node`` on its own
              accelerator, another's ``fast_domain_gpus`` (72 on GB200 NVL72)
  days        the Summary's plan days (``plan_days_wall``) of the scenario moved to
              that accelerator: plan days x (peak x MFU used) here / (peak x MFU) there,
              the peak ``peak_dtype`` names; layout clock: the MFU there is the step
              model's on the moved scenario (in the workbook: plan days x step time
              there / step time here); typed or measured: the MFU used carries over
  price       the scenario's own accelerator: the GPU-hour price the budget uses
              (Inputs); another: its Presets price for the chosen basis (on-demand
              or reserved) when the row has one, else the scenario's price
  cost        (GPUs x 24 x days x price + energy) x (1 + contingency), energy =
              TDP x GPU-hours x PUE / 1000 kWh billed as on the Budget sheet: for the
              scenario's own accelerator exactly the Summary's ``cost_total_usd``
  rank        1 + the accelerators that fit and run at a lower cost (ties share)

An unused slot shows ``–``.  The Python side moves the whole scenario to each
accelerator and runs the reference's own step model and budget; the workbook rescales
the Parallelism sheet's terms by each accelerator's peaks and bandwidths.  The two
share only keys and inputs.
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
from typing import Any

from sheetgen.reference.budget import budget
from sheetgen.reference.clock import clock
from sheetgen.reference.flops import flops
from sheetgen.reference.moe_step import ep_ranks_per_node, ep_split, expert_tp
from sheetgen.reference.parallelism import predicted
from sheetgen.reference.schedule import gpu_price_used
from sheetgen.scenarios.run_fields import HARDWARE_SLOTS
from sheetgen.scenarios.scenario import Hardware, Scenario
from sheetgen.units import GIGA, HOURS_PER_DAY

NONE = "–"
WATTS_PER_KW = 1000
Offer = tuple[Hardware, float, float]  # accelerator, on-demand and reserved price (0: none)


def presets_catalog() -> tuple[Offer, ...]:
    """The hardware presets (shipped, then team layers) with the prices they carry."""
    from sheetgen.catalog import presets

    prices = presets.hardware_prices()
    return tuple(
        (
            hw,
            prices.get(pid, {}).get("price_per_gpu_hour", 0.0),
            prices.get(pid, {}).get("price_per_gpu_hour_reserved", 0.0),
        )
        for pid, hw in presets.hardware().items()
    )


def catalog(s: Scenario) -> tuple[Offer, ...]:
    """The Presets hardware table this scenario's workbook holds: its tables' (or, when
    none is attached, the loaded presets), then its own accelerator if not among them."""
    offers = s.tables.hardware or presets_catalog()
    own = s.hardware.id.casefold()
    if any(hw.id.casefold() == own for hw, _, _ in offers):
        return offers
    return (*offers, (s.hardware, 0.0, 0.0))


def hardware_table(scenarios: list[Scenario]) -> tuple[Offer, ...]:
    """The hardware table a workbook of these scenarios holds: each one's catalog, in
    order, the first row of each id kept."""
    offers: dict[str, Offer] = {}
    for s in scenarios:
        for offer in catalog(s):
            offers.setdefault(offer[0].id, offer)
    return tuple(offers.values())


def with_hardware_table(scenarios: list[Scenario]) -> list[Scenario]:
    """The scenarios, each with the whole table attached (``Tables.hardware``): scenarios
    that share a workbook (or a scenario file) compare the same accelerators."""
    offers = hardware_table(scenarios)
    return [replace(s, tables=replace(s.tables, hardware=offers)) for s in scenarios]


def hardware_compare(s: Scenario) -> dict[str, float | str]:
    """The Hardware sheet's keys (a fresh dict)."""
    return dict(_compare(s, catalog(s)))


@lru_cache(maxsize=256)
def _compare(s: Scenario, offers: tuple[Offer, ...]) -> dict[str, float | str]:
    run = s.run
    own = predicted(s)
    plan = budget(s)
    f = flops(s)
    per_gpu_step = run.global_batch_tokens / run.n_gpus
    head = 3 * f["flops_fwd_lm_head"]  # the LM head's forward and backward, kept BF16
    out: dict[str, Any] = {
        "hwc_gemm_flops_gpu_step": (
            f["flops_hw_per_token"]
            - f["flops_attn_hw_per_token"]
            - head
            - own["moe_routed_flops_hw_per_token"]
        )
        * per_gpu_step,
        "hwc_moe_flops_gpu_step": own["moe_routed_flops_hw_per_token"]
        * per_gpu_step
        * run.moe_load_imbalance,
        "hwc_head_flops_gpu_step": head * per_gpu_step,
        "hwc_attn_flops_gpu_step": f["flops_attn_hw_per_token"]
        * run.global_batch_tokens
        / run.n_gpus,
    }
    slots = []
    for n in range(1, HARDWARE_SLOTS + 1):
        offer = offers[n - 1] if n <= len(offers) else None
        slot = _slot(s, offer, own, plan, f["peak_flops"], clock(s)["mfu_achieved"])
        slots.append(slot)
        out[f"hw_slot_{n}"] = n
        out.update({f"hw_{k}_{n}": v for k, v in slot.items()})
    for n, slot in enumerate(slots, start=1):
        if slot["eligible"]:
            cheaper = sum(1 for o in slots if o["eligible"] and o["cost_fit"] < slot["cost_fit"])
            out[f"hw_rank_{n}"] = 1 + cheaper
        else:
            out[f"hw_rank_{n}"] = NONE
    first = next((n for n in range(1, HARDWARE_SLOTS + 1) if out[f"hw_rank_{n}"] == 1), None)
    out["hw_cheapest"] = out[f"hw_name_{first}"] if first else "none"
    out["hw_listed"] = sum(1 for slot in slots if slot["id"] != NONE)
    return out


def _slot(
    s: Scenario, offer: Offer | None, own: dict, plan: dict, peak_here: float, mfu_here: float
) -> dict[str, Any]:
    keys = (
        "id name runs price mem_usable fits node ep_peers ep_intra_bytes ep_inter_bytes "
        "gemm_seconds attn_seconds compute_seconds "
        "comm_mp_seconds comm_dp_seconds dp_exposed_seconds step_seconds days cost"
    ).split()
    if offer is None:
        return {**dict.fromkeys(keys, NONE), "runs": 0, "fits": 0, "eligible": 0, "cost_fit": 0}
    hw, on_demand, reserved = offer
    run = s.run
    own_hw = hw.id.casefold() == s.hardware.id.casefold()
    # GPUs per node: the scenario's on its own accelerator, else this one's domain.
    node = run.gpus_per_node if own_hw else int(hw.fast_domain_gpus)
    fp8 = run.peak_dtype == "fp8"
    needed = (
        hw.peak_bf16_tflops,
        hw.mem_gb,
        hw.hbm_tbps,
        hw.intra_node_gb_per_s,
        hw.inter_node_gb_per_s,
        hw.gemm_eff_bf16,
        hw.attn_eff,
    )
    runs = int(min(needed) > 0 and not (fp8 and min(hw.peak_fp8_tflops, hw.gemm_eff_fp8) <= 0))
    usable = hw.mem_gb * GIGA * (1 - run.mem_headroom)
    fits = int(own["mem_total_calibrated"] <= usable)
    if own_hw:
        price = gpu_price_used(s)
    else:
        listed = reserved if run.price_basis == "reserved" else on_demand
        price = listed if listed > 0 else gpu_price_used(s)
    out: dict[str, Any] = {
        "id": hw.id,
        "name": hw.name,
        "runs": runs,
        "price": price,
        "mem_usable": usable,
        "fits": fits,
        "node": node,
    }
    # The expert-parallel all-to-all split by this accelerator's GPUs per node (the
    # Parallelism sheet's moe_ep_ranks_per_node, comm_ep_intra_bytes, comm_ep_inter_bytes).
    peers = ep_ranks_per_node(expert_tp(run), run.ep, node)
    intra, inter = ep_split(
        own["comm_ep_bytes"], peers, run.ep, s.model.experts_per_token, run.ep_dispatch_dedup
    )
    out.update(ep_peers=peers, ep_intra_bytes=intra, ep_inter_bytes=inter)
    if not runs:
        times = "gemm attn compute comm_mp comm_dp dp_exposed step".split()
        out.update({f"{k}_seconds": NONE for k in times})
        out.update(days=NONE, cost=NONE, eligible=0, cost_fit=0)
        return out
    moved = replace(s, hardware=hw, run=replace(run, gpus_per_node=node))
    lay = predicted(moved)
    out.update(
        gemm_seconds=lay["step_gemm_seconds"],
        attn_seconds=lay["step_attn_seconds"],
        compute_seconds=lay["step_compute_seconds"],
        comm_mp_seconds=lay["comm_tp_exposed_seconds"]
        + lay["comm_cp_exposed_seconds"]
        + lay["comm_ep_exposed_seconds"]
        + lay["comm_pp_seconds"],
        comm_dp_seconds=lay["comm_dp_seconds"],
        dp_exposed_seconds=lay["comm_dp_exposed_seconds"],
        step_seconds=lay["step_seconds_predicted"],
    )
    # Plan days are FLOPs / (GPUs x peak x MFU used) / goodput, phase by phase with one
    # MFU: moved, they scale by peak x MFU here / peak x MFU there.  The layout clock's
    # MFU there is the reference clock's on the moved scenario; typed or measured, the
    # MFU used carries over.
    mfu_there = clock(moved)["mfu_achieved"] if run.mfu_source == "layout" else mfu_here
    days = plan["plan_days_wall"] * peak_here * mfu_here / (flops(moved)["peak_flops"] * mfu_there)
    gpu_hours = run.n_gpus * HOURS_PER_DAY * days
    energy = hw.tdp_w * gpu_hours * run.pue / WATTS_PER_KW
    billed = energy * run.electricity_price_per_kwh * (1 - run.price_includes_power)
    cost = (gpu_hours * price + billed) * (1 + run.contingency)
    eligible = int(fits and runs)
    out.update(days=days, cost=cost, eligible=eligible, cost_fit=cost if eligible else 0)
    return out
