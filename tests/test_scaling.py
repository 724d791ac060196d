"""The Scaling sheet and the plan's data and epochs (issue 22, parts 1 and 2).

The six Scaling keys are checked against Chinchilla's formulas computed here, from
the paper's constants, not by calling ``sheetgen.reference.scaling``: in the
reference, after pycel recalculates every shipped scenario, and after LibreOffice
recalculates one workbook.  Data and epochs: 3T x 2 trains 6T tokens everywhere,
the epochs warning, and one-line errors (exit code 2).

The compute-optimal batch and learning rate (issue 41): DeepSeek LLM's fit written out
here, against the reference, pycel and LibreOffice, and against the batch and learning
rate the paper gives its own 7B and 67B models; the bubble and batch warnings both ways.
"""

from __future__ import annotations

import math

import pytest
from click.testing import CliRunner
from helpers import build_matrix, calc, libreoffice_values, mismatches

from sheetgen.checking.recalc import recalc_pycel
from sheetgen.cli.commands import main
from sheetgen.reference import compute
from sheetgen.scenarios.files import default_scenario_path, load_scenarios
from sheetgen.workbook import write_workbook

# Hoffmann et al. 2022 (arXiv:2203.15556), section 3.3, approach 3's fitted constants.
E, A, B, ALPHA, BETA = 1.69, 406.4, 410.7, 0.34, 0.28
SCALING_KEYS = (
    "scaling_flops_budget",
    "chinchilla_params_opt",
    "chinchilla_tokens_opt",
    "chinchilla_loss_plan",
    "chinchilla_loss_opt",
    "overtrain_factor",
)
# 2% on N_opt and D_opt (and what follows from D_opt), 3% on the losses.
TOLERANCE = {
    "scaling_flops_budget": 0.02,
    "chinchilla_params_opt": 0.02,
    "chinchilla_tokens_opt": 0.02,
    "chinchilla_loss_plan": 0.03,
    "chinchilla_loss_opt": 0.03,
    "overtrain_factor": 0.02,
}


# Bi et al. 2024 (DeepSeek LLM, arXiv:2401.02954), section 3.1: B_opt = 0.2920 C^0.3271
# tokens, eta_opt = 0.3118 C^-0.1250.
BATCH_COEF, BATCH_EXP, LR_COEF, LR_EXP = 0.2920, 0.3271, 0.3118, 0.1250
BATCH_KEYS = ("batch_opt_tokens", "batch_opt_seqs", "lr_opt", "batch_vs_opt")


def independent_batch(budget: float, batch: float, seq_len: float) -> dict[str, float]:
    """DeepSeek LLM's hyperparameter fit at the budget C, written out from the paper."""
    b_opt = BATCH_COEF * budget**BATCH_EXP
    return {
        "batch_opt_tokens": b_opt,
        "batch_opt_seqs": b_opt / seq_len,
        "lr_opt": LR_COEF * budget**-LR_EXP,
        "batch_vs_opt": batch / b_opt,
    }


def expect_batch_keys(got: dict, where: str) -> None:
    want = independent_batch(
        got["scaling_flops_budget"], got["global_batch_tokens"], got["seq_len"]
    )
    for key in BATCH_KEYS:
        assert got[key] == pytest.approx(want[key], rel=1e-9), (
            f"{key} [{where}]: got {got[key]!r}, independent {want[key]!r}"
        )


def independent(n_params: float, tokens: float) -> dict[str, float]:
    """Chinchilla approach 3 for the plan's N and D, written out from the paper."""
    c = 6 * n_params * tokens
    g = ((ALPHA * A) / (BETA * B)) ** (1 / (ALPHA + BETA))
    n_opt = g * (c / 6) ** (BETA / (ALPHA + BETA))
    d_opt = (c / 6) ** (ALPHA / (ALPHA + BETA)) / g

    def loss(n: float, d: float) -> float:
        return E + A / n**ALPHA + B / d**BETA

    return {
        "scaling_flops_budget": c,
        "chinchilla_params_opt": n_opt,
        "chinchilla_tokens_opt": d_opt,
        "chinchilla_loss_plan": loss(n_params, tokens),
        "chinchilla_loss_opt": loss(n_opt, d_opt),
        "overtrain_factor": tokens / d_opt,
    }


def shipped_scenarios() -> list:
    from sheetgen.paths import presets_dir

    folder = presets_dir() / "scenarios"
    out = list(load_scenarios(default_scenario_path()))
    for path in sorted(folder.glob("*.yaml")):
        if path.name != default_scenario_path().name:
            out.extend(load_scenarios(path))
    return out


def expect_independent(got: dict, n_params: float, tokens: float, where: str) -> None:
    want = independent(n_params, tokens)
    for key in SCALING_KEYS:
        assert got[key] == pytest.approx(want[key], rel=TOLERANCE[key]), (
            f"{key} [{where}]: got {got[key]!r}, independent {want[key]!r}, "
            f"rel diff {(got[key] - want[key]) / want[key]:+.2e}"
        )


def test_chinchilla_by_hand_at_a_known_budget():
    """The independent formulas themselves: at Chinchilla's own N and D (70B, 1.4T tokens),
    approach 3's closed form gives a model of ~33B; N_opt x D_opt = C/6."""
    got = independent(70e9, 1.4e12)
    assert got["chinchilla_params_opt"] * got["chinchilla_tokens_opt"] == pytest.approx(
        5.88e23 / 6, rel=1e-9
    )
    assert 30e9 < got["chinchilla_params_opt"] < 45e9
    assert got["chinchilla_loss_opt"] <= got["chinchilla_loss_plan"]


@pytest.mark.parametrize("scenario", shipped_scenarios(), ids=lambda s: s.name)
def test_scaling_keys_equal_the_independent_computation(scenario):
    r = compute(scenario)
    n_params = r["params_active"]  # the N of the FLOPs sheet's 6N
    expect_independent(r, n_params, scenario.run.train_tokens, scenario.name)
    assert r["scaling_flops_budget"] == pytest.approx(r["flops_train_6nd"], rel=1e-12)
    expect_batch_keys(r, scenario.name)


@pytest.fixture(scope="module")
def shipped_workbook(tmp_path_factory):
    scenarios = shipped_scenarios()
    path = write_workbook(
        scenarios, tmp_path_factory.mktemp("scaling") / "shipped.xlsx", cache_values=False
    )
    return path, scenarios, recalc_pycel(path)


@pytest.mark.parametrize("i", range(len(shipped_scenarios())))
def test_scaling_after_pycel_recalculation(shipped_workbook, i):
    """The workbook's own formulas, recalculated by pycel, for every shipped scenario:
    the six keys against the independent computation and every cell against compute()."""
    _path, scenarios, values = shipped_workbook
    s = scenarios[i]
    got = {k: v for (sheet, k, name), v in values.items() if name == s.name}
    expect_independent(got, got["scaling_params"], got["train_tokens"], f"pycel, {s.name}")
    expect_batch_keys(got, f"pycel, {s.name}")
    bad = mismatches(values, {s.name: compute(s)}, [s.name])
    assert not bad, f"{len(bad)} keys differ in pycel:\n" + "\n".join(bad[:40])


def data_epoch_items() -> list[dict]:
    return [
        {
            "name": "8B on 3T x 2 epochs",
            "model": "llama3-8b",
            "hardware": "h100-sxm",
            "n_gpus": 64,
            "dataset_tokens": "3T",
            "epochs": 2,
        },
        {
            "name": "8B on 1.2T x 5 epochs, own fit",
            "model": "llama3-8b",
            "hardware": "h100-sxm",
            "n_gpus": 64,
            "dataset_tokens": "1.2T",
            "epochs": 5,
            "chinchilla_e": 1.82,
            "chinchilla_a": 482.01,
            "chinchilla_b": 2085.43,
            "chinchilla_alpha": 0.3478,
            "chinchilla_beta": 0.3658,
        },
        {
            "name": "70B on 15.6T tokens",
            "model": "llama3-70b",
            "hardware": "h100-sxm",
            "n_gpus": 512,
            "tp": 8,
            "train_tokens": "15.6T",
        },
    ]


@pytest.fixture(scope="module")
def data_matrix(tmp_path_factory):
    return build_matrix(tmp_path_factory.mktemp("data"), data_epoch_items(), "data")


@pytest.mark.libreoffice
def test_scaling_after_libreoffice_recalculation(data_matrix):
    path, scenarios, reference = data_matrix
    values = libreoffice_values(path)
    bad = mismatches(values, reference)
    assert not bad, f"{len(bad)} keys differ in LibreOffice:\n" + "\n".join(bad[:40])
    item = data_epoch_items()[0]
    got = {k: v for (sheet, k, name), v in values.items() if name == item["name"]}
    expect_independent(got, got["scaling_params"], 6e12, f"LibreOffice, {item['name']}")
    assert got["train_tokens"] == 6e12 and got["plan_tokens"] == 6e12
    six = calc("6T", model="llama3-8b", n_gpus=64, train_tokens="6T")
    for key in ("flops_train", "steps", "train_days_wall", "plan_days_wall", "cost_total_usd"):
        assert got[key] == pytest.approx(six[key], rel=1e-9), (
            f"{key}: LibreOffice on 3T x 2 epochs {got[key]!r}, 6T tokens {six[key]!r}"
        )


def test_data_matrix_after_pycel_recalculation(data_matrix):
    path, _scenarios, reference = data_matrix
    bad = mismatches(recalc_pycel(path), reference)
    assert not bad, f"{len(bad)} keys differ in pycel:\n" + "\n".join(bad[:40])


def test_own_constants_reach_the_scaling_keys():
    r = calc("own fit", model="llama3-8b", dataset_tokens="1.2T", epochs=5, chinchilla_b=2085.43)
    default = calc("paper fit", model="llama3-8b", dataset_tokens="1.2T", epochs=5)
    assert r["chinchilla_loss_plan"] > default["chinchilla_loss_plan"]
    assert r["chinchilla_tokens_opt"] != pytest.approx(default["chinchilla_tokens_opt"])


def test_three_t_times_two_epochs_trains_six_t_everywhere():
    r = calc("3T x 2", model="llama3-8b", n_gpus=64, dataset_tokens="3T", epochs=2)
    six = calc("6T", model="llama3-8b", n_gpus=64, train_tokens="6T")
    assert r["train_tokens"] == 6 * 10**12 and r["plan_tokens"] == 6 * 10**12
    assert r["dataset_tokens"] == 3 * 10**12 and r["epochs"] == 2
    for key in (
        "flops_train",
        "flops_train_hardware",
        "steps",
        "train_days_wall",
        "plan_days_wall",
    ):
        assert r[key] == pytest.approx(six[key], rel=1e-12), (
            f"{key}: 3T x 2 epochs gives {r[key]!r}, 6T tokens {six[key]!r}"
        )
    assert r["flops_train"] == pytest.approx(r["flops_per_token"] * 6e12, rel=1e-12)
    once = calc("3T x 1", model="llama3-8b", n_gpus=64, dataset_tokens="3T")
    assert r["plan_days_wall"] == pytest.approx(2 * once["plan_days_wall"], rel=1e-9)


def test_train_tokens_alone_is_one_epoch_of_itself():
    r = calc("1T", model="llama3-8b", train_tokens="1T")
    assert (r["dataset_tokens"], r["epochs"], r["train_tokens"]) == (10**12, 1, 10**12)
    r = calc("6T over 2", model="llama3-8b", train_tokens="6T", epochs=2)
    assert r["dataset_tokens"] == 3 * 10**12


@pytest.mark.parametrize(("epochs", "flag"), [(2, 1), (4, 1), (5, 0)])
def test_epochs_warning_row(epochs, flag):
    r = calc(f"{epochs} epochs", model="llama3-8b", dataset_tokens="1T", epochs=epochs)
    assert r["chk_epochs_diminishing"] == flag, f"{epochs} epochs: {r['chk_epochs_diminishing']}"


def test_epochs_warning_differs_between_2_and_5_epochs_in_the_workbook(data_matrix):
    path, _scenarios, _reference = data_matrix
    values = recalc_pycel(path)
    flags = {name: v for (sheet, k, name), v in values.items() if k == "chk_epochs_diminishing"}
    assert flags == {
        "8B on 3T x 2 epochs": 1,
        "8B on 1.2T x 5 epochs, own fit": 0,
        "70B on 15.6T tokens": 1,
    }
    warnings = {name: v for (sheet, k, name), v in values.items() if k == "chk_warnings"}
    assert warnings["8B on 1.2T x 5 epochs, own fit"] >= 1


def run_cli(*args: str):
    return CliRunner().invoke(main, ["compute", *args], catch_exceptions=False)


def one_line_exit_2(result, *words: str) -> None:
    lines = result.output.strip().splitlines()
    assert result.exit_code == 2, result.output
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    for w in words:
        assert w in lines[0], f"{w!r} not in {lines[0]!r}"


BASE = ("--model", "llama3-8b", "--hardware", "h100-sxm")


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("--epochs", "-1"), ("--epochs", "-1", "> 0")),
        (("--epochs", "0"), ("--epochs", "> 0")),
        (("--epochs", "1e9"), ("--epochs", "passes over the dataset")),
        (("--epochs", "two"), ("--epochs", "two")),
        (("--dataset-tokens", "-3T"), ("--dataset-tokens", "-3T", ">= 1")),
        (("--dataset-tokens", "1e18"), ("--dataset-tokens",)),
        (("--dataset-tokens", "3T", "--epochs", "2", "--tokens", "5T"), ("disagrees", "6,000")),
        (("--epochs", "3"), ("--epochs", "need dataset_tokens")),
        (("--tokens", "1e17", "--epochs", "0.001"), ("--dataset-tokens", "train_tokens / epochs")),
        (("--dataset-tokens", "1e16", "--epochs", "100"), ("--tokens", "dataset_tokens x epochs")),
        (("--tokens", "1T", "--epochs", "3"), ("--epochs", "whole number")),
        (("--chinchilla-alpha", "0"), ("--chinchilla-alpha", "> 0")),
        (("--chinchilla-e", "-1"), ("--chinchilla-e", ">= 0")),
        (("--chinchilla-a", "1e12"), ("--chinchilla-a",)),
    ],
)
def test_bad_flags_are_one_line_exit_2(args, words):
    one_line_exit_2(run_cli(*BASE, *args), *words)


@pytest.mark.parametrize(
    ("settings", "words"),
    [
        ("dataset_tokens: 3T\n    epochs: -1", ("epochs", "-1")),
        ("dataset_tokens: 3T\n    epochs: 2\n    train_tokens: 5T", ("train_tokens", "disagrees")),
        ("dataset_tokens: 0", ("dataset_tokens", ">= 1")),
        ("chinchilla_beta: -0.28", ("chinchilla_beta", "> 0")),
    ],
)
def test_bad_scenario_file_is_one_line_exit_2(tmp_path, settings, words):
    spec = tmp_path / "plan.yaml"
    spec.write_text(
        f"scenarios:\n  - name: x\n    model: llama3-8b\n    hardware: h100-sxm\n    {settings}\n"
    )
    one_line_exit_2(run_cli(str(spec)), *words)


def test_flags_accept_token_suffixes():
    import json

    result = run_cli(*BASE, "--dataset-tokens", "3T", "--epochs", "2", "--format", "json")
    assert result.exit_code == 0, result.output
    rows = {row["key"]: row["value"] for row in json.loads(result.output)}
    assert rows["train_tokens"] == 6 * 10**12 and rows["plan_tokens"] == 6 * 10**12
    assert rows["dataset_tokens"] == 3 * 10**12
    result = run_cli(*BASE, "--dataset-tokens", "3T", "--epochs", "2", "--tokens", "6T")
    assert result.exit_code == 0, result.output


def test_overtraining_is_a_note_not_an_error():
    """Llama 3 8B on 15T tokens: ~1,900 tokens per parameter, far past the optimum;
    the note says so and no check fails on it."""
    r = calc("8B on 15T", model="llama3-8b", n_gpus=512, train_tokens="15T")
    assert r["tokens_per_param"] == pytest.approx(1868, rel=0.01)
    assert r["overtrain_factor"] > 4 and r["rule20_overtrain_factor"] > 90
    short = calc("8B on 160B", model="llama3-8b", n_gpus=512, train_tokens="160B")
    assert short["overtrain_factor"] < 1 and "larger model" in short["overtrain_note"]
    flags = {k: v for k, v in r.items() if k.startswith("chk_") or k == "checks_ok"}
    assert flags == {k: short[k] for k in flags}, "a check moved with the over-training"
    assert r["overtrain_note"].startswith("trains ") and "not an error" in r["overtrain_note"]
    assert math.isclose(r["rule20_tokens_opt"], 20 * r["rule20_params_opt"])


def test_editing_epochs_in_the_workbook_moves_every_figure(data_matrix, tmp_path):
    """Epochs 2 -> 5 typed on Inputs (openpyxl), recalculated by pycel: train_tokens,
    FLOPs, days, cost, the Scaling keys and the epochs warning equal compute() of the
    edited scenario, and `inputs` reads the dataset and epochs back, not the formula."""
    import dataclasses

    from openpyxl import load_workbook

    from sheetgen.readback.access import read_inputs, sheet_layout

    path, scenarios, _reference = data_matrix
    wb = load_workbook(path)
    layout = sheet_layout(wb["Inputs"])
    wb["Inputs"].cell(row=layout.rows["epochs"], column=layout.first_col, value=5)
    edited_path = tmp_path / "edited.xlsx"
    wb.save(edited_path)
    s = scenarios[0]
    edited = dataclasses.replace(
        s, run=dataclasses.replace(s.run, epochs=5, train_tokens=15 * 10**12)
    )
    want = compute(edited)
    values = recalc_pycel(edited_path)
    bad = mismatches(values, {s.name: want}, [s.name])
    assert not bad, f"{len(bad)} keys differ after the edit:\n" + "\n".join(bad[:40])
    assert want["train_tokens"] == 15 * 10**12 and want["chk_epochs_diminishing"] == 0
    read = read_inputs(path)
    assert "train_tokens" not in read.values[0]
    assert (read.values[0]["dataset_tokens"], read.values[0]["epochs"]) == (3 * 10**12, 2)


# DeepSeek LLM, Table 2: the batch (sequences of 4,096) and peak learning rate the paper
# set for its own models, both trained on 2.0T tokens; C = 6 N D with N = 7B and 67B.
DEEPSEEK_OWN = [
    ("DeepSeek LLM 7B", 7e9, 2304 * 4096, 4.2e-4),
    ("DeepSeek LLM 67B", 67e9, 4608 * 4096, 3.2e-4),
]


@pytest.mark.parametrize(("name", "n", "batch", "lr"), DEEPSEEK_OWN, ids=lambda x: str(x))
def test_batch_law_gives_the_papers_own_batch_and_learning_rate(name, n, batch, lr):
    """The reference's fit at the budget of DeepSeek's 7B and 67B runs is within 3% of the
    batch and learning rate the paper chose for them (Table 2; the fit set them, so this
    checks the transcription and the 6ND stand-in for the paper's own C, not the law)."""
    from sheetgen.reference.scaling import batch_law
    from sheetgen.scenarios.files import scenario_from_dict

    run = scenario_from_dict({"model": "llama3-8b", "hardware": "h100-sxm"}).run
    got = batch_law(run, 6 * n * 2e12)
    assert got["batch_opt_tokens"] == pytest.approx(batch, rel=0.03), name
    assert got["lr_opt"] == pytest.approx(lr, rel=0.03), name


def batch_items() -> list[dict]:
    big = {"model": "llama3-405b", "hardware": "h100-sxm", "n_gpus": 16384, "tp": 8}
    small = {"model": "llama3-8b", "hardware": "h100-sxm", "n_gpus": 64, "train_tokens": "1T"}
    return [
        # The case: 4Mi leaves one micro-batch per pipeline of 2 (bubble 50%).
        {"name": "405B, 4Mi batch", **big, "pp": 2, "train_tokens": "15.6T"},
        {
            "name": "405B, the paper's 16Mi batch",
            **big,
            "pp": 16,
            "pp_virtual_stages": 4,
            "seq_len": 8192,
            "global_batch_tokens": 16 * 2**20,
            "train_tokens": "15.6T",
        },
        {"name": "8B, 128Mi batch", **small, "global_batch_tokens": 128 * 2**20},
        {
            "name": "8B, own fit and thresholds",
            **small,
            "tp": 8,
            "pp": 4,
            "global_batch_tokens": 16384,  # 2 micro-batches per pipeline of 4: bubble 60%
            "deepseek_batch_coef": 0.5,
            "deepseek_batch_exp": 0.3,
            "deepseek_lr_coef": 0.2,
            "deepseek_lr_exp": 0.1,
            "bubble_warn_share": 0.7,
            "batch_warn_factor": 1000,
        },
        {"name": "8B LoRA, small batch", **small, "recipe": "lora", "global_batch_tokens": 65536},
    ]


# (chk_bubble_within, chk_batch_near_opt) of each batch item.
BATCH_FLAGS = {
    "405B, 4Mi batch": (0, 0),
    "405B, the paper's 16Mi batch": (1, 1),
    "8B, 128Mi batch": (1, 0),
    "8B, own fit and thresholds": (1, 1),
    "8B LoRA, small batch": (1, 1),
}


@pytest.fixture(scope="module")
def batch_matrix(tmp_path_factory):
    return build_matrix(tmp_path_factory.mktemp("batch"), batch_items(), "batch")


def test_batch_warnings_both_ways(batch_matrix):
    _path, _scenarios, reference = batch_matrix
    for name, (bubble, near) in BATCH_FLAGS.items():
        r = reference[name]
        got = (r["chk_bubble_within"], r["chk_batch_near_opt"])
        assert got == (bubble, near), (
            f"{name}: (chk_bubble_within, chk_batch_near_opt) = {got}, expected "
            f"{(bubble, near)}; bubble {r['pipeline_bubble']:.3f}, batch/B_opt "
            f"{r['batch_vs_opt']:.3f}"
        )
        assert r["chk_batch_law_inputs"] == 1, name
    assert reference["405B, 4Mi batch"]["pipeline_bubble"] == pytest.approx(0.5)
    own = reference["8B, own fit and thresholds"]
    assert own["pipeline_bubble"] == pytest.approx(0.6), "the own threshold (70%) lets it pass"
    assert own["batch_vs_opt"] < 1 / 10, "the own factor (1,000) lets it pass"
    note = reference["8B, 128Mi batch"]["batch_opt_note"]
    assert note.startswith("the batch is ") and "x the compute-optimal" in note, note
    note = reference["405B, 4Mi batch"]["batch_opt_note"]
    assert note.startswith("the batch is 6% of the compute-optimal 68M tokens"), note


def test_batch_keys_after_pycel_recalculation(batch_matrix):
    path, _scenarios, reference = batch_matrix
    values = recalc_pycel(path)
    bad = mismatches(values, reference)
    assert not bad, f"{len(bad)} keys differ in pycel:\n" + "\n".join(bad[:40])


@pytest.mark.libreoffice
def test_batch_keys_after_libreoffice_recalculation(batch_matrix):
    """Every key of the five batch scenarios (the new Scaling rows and the two warnings
    included) as LibreOffice recalculates them equals the reference, and the fit's keys
    equal the paper's formula written out here."""
    path, _scenarios, reference = batch_matrix
    values = libreoffice_values(path)
    bad = mismatches(values, reference)
    assert not bad, f"{len(bad)} keys differ in LibreOffice:\n" + "\n".join(bad[:40])
    for name, (bubble, near) in BATCH_FLAGS.items():
        got = {k: v for (sheet, k, n), v in values.items() if n == name}
        assert (got["chk_bubble_within"], got["chk_batch_near_opt"]) == (bubble, near), name
        if name != "8B, own fit and thresholds":
            expect_batch_keys(got, f"LibreOffice, {name}")


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("--deepseek-batch-exp", "0"), ("--deepseek-batch-exp", "0")),
        (("--deepseek-lr-exp", "-0.125"), ("--deepseek-lr-exp", "-0.125")),
        (("--deepseek-batch-coef", "1e9"), ("--deepseek-batch-coef",)),
        (("--batch-warn-factor", "0.5"), ("--batch-warn-factor", "0.5")),
        (("--bubble-warn-share", "1"), ("--bubble-warn-share", "[0, 1)")),
    ],
)
def test_bad_batch_law_flags_are_one_line_exit_2(args, words):
    one_line_exit_2(run_cli(*BASE, *args), *words)
