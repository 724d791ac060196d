"""Issue 26.1: a comma is only a thousands separator between groups of three digits.

``2,5`` must never become 25.  The fields come from the code's own tables (every
numeric run setting, model field and hardware field), in flags and in YAML.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hostile_helpers import BASE, library_error, one_line

from sheetgen.cli.support import FLAG_OF
from sheetgen.errors import SheetgenError
from sheetgen.scenarios.files import scenario_from_dict
from sheetgen.scenarios.parse import parse_count, parse_number
from sheetgen.scenarios.run_fields import RUN_FIELDS
from sheetgen.scenarios.scenario import HARDWARE_FIELDS, MODEL_INT_FIELDS

NUMERIC_RUN = [k for k, (kind, _, _) in RUN_FIELDS.items() if kind not in ("choice", "date")]
BAD = ["2,5", "1,5T", "10,00", "1,,000", ",100", "1,0000", "0,5"]
GOOD = {"1,000": 1000, "1,000,000": 1_000_000, "4,194,304": 4_194_304, "-1,000": -1000}


def test_field_tables_are_not_empty() -> None:
    assert len(NUMERIC_RUN) > 40 and len(MODEL_INT_FIELDS) > 20 and len(HARDWARE_FIELDS) > 5


@pytest.mark.parametrize("text", BAD)
@pytest.mark.parametrize("parse", [parse_count, parse_number])
def test_parser_refuses_other_commas(parse, text: str) -> None:
    library_error(parse, text, "some_field", expect="some_field: ")


@pytest.mark.parametrize("text", GOOD)
@pytest.mark.parametrize("parse", [parse_count, parse_number])
def test_parser_reads_thousands_separators(parse, text: str) -> None:
    assert parse(text, "f") == GOOD[text]


def test_thousands_with_a_decimal_point_and_suffix() -> None:
    assert parse_number("1,000.5", "f") == 1000.5
    assert parse_count("1,000K", "f") == 1_000_000


@pytest.mark.parametrize("key", NUMERIC_RUN)
def test_every_numeric_flag_refuses_a_decimal_comma(key: str) -> None:
    flag = FLAG_OF[key]
    one_line(["compute", *BASE, flag, "2,5"], expect=f"{flag}: '2,5': a comma")


def _item(**fields) -> dict:
    return {"name": "c", "model": "llama3-8b", "hardware": "h100-sxm", **fields}


@pytest.mark.parametrize("key", NUMERIC_RUN)
def test_every_numeric_yaml_setting_refuses_a_decimal_comma(key: str, tmp_path: Path) -> None:
    spec = tmp_path / "s.yaml"
    spec.write_text(yaml.safe_dump({"scenarios": [_item(**{key: "2,5"})]}))
    one_line(["compute", str(spec)], expect=f"scenarios[1].{key}: '2,5'")


def _outcome(fn):
    try:
        return fn()
    except SheetgenError as e:
        return ("error", e.field)


@pytest.mark.parametrize("key", NUMERIC_RUN)
def test_every_numeric_setting_reads_1_024_as_1024(key: str) -> None:
    """Same scenario (or the same field refused) with and without the separator."""
    plain = _outcome(lambda: scenario_from_dict(_item(**{key: 1024})).run)
    comma = _outcome(lambda: scenario_from_dict(_item(**{key: "1,024"})).run)
    assert comma == plain, key


@pytest.mark.parametrize("key", MODEL_INT_FIELDS)
def test_every_model_field_refuses_a_decimal_comma(key: str) -> None:
    item = _item(model={"base": "llama3-8b", key: "2,5"})
    library_error(scenario_from_dict, item, expect=f"model.{key}: '2,5'")


@pytest.mark.parametrize("key", HARDWARE_FIELDS)
def test_every_hardware_field_refuses_a_decimal_comma(key: str) -> None:
    item = _item(hardware={"base": "h100-sxm", key: "2,5"})
    library_error(scenario_from_dict, item, expect=f"hardware.{key}: '2,5'")


@pytest.mark.parametrize("key", ["tokens", "seq_len", "global_batch_tokens", "mfu"])
def test_phase_fields_refuse_a_decimal_comma(key: str) -> None:
    phase = {"tokens": "1T", key: "2,5"}
    library_error(scenario_from_dict, _item(phases=[phase]), expect=f"phases[1].{key}")


@pytest.mark.parametrize("key", ["sweep_seq_lens", "sweep_gpus"])
def test_sweep_points_refuse_a_decimal_comma(key: str) -> None:
    points = [8, 16, 32, 64, 128, "2,56"]
    library_error(scenario_from_dict, _item(**{key: points}), expect=f"{key}[6]")


def test_team_hardware_price_refuses_a_decimal_comma(tmp_path: Path) -> None:
    (tmp_path / "hardware").mkdir()
    (tmp_path / "hardware" / "x.yaml").write_text(
        "id: team-x\nbase: h100-sxm\nprice_per_gpu_hour: '2,5'\n"
    )
    one_line(
        ["compute", "--presets", str(tmp_path), "--model", "llama3-8b", "--hardware", "team-x"],
        expect="price_per_gpu_hour: '2,5'",
    )


# --- ASCII digits only, no underscores -------------------------------------------
# float() reads full-width '０.５' and Arabic-Indic '٠.٥' as 0.5 and '1_000' as 1000:
# numbers no one can see are refused, in counts and in numbers alike.

NOT_ASCII = ["０.５", "٠.٥", "８", "1０", "१"]
UNDERSCORES = ["1_000", "1_0e-2", "0_.5", "4_194_304"]


@pytest.mark.parametrize("text", NOT_ASCII)
@pytest.mark.parametrize("parse", [parse_count, parse_number])
def test_parser_refuses_digits_that_are_not_ascii(parse, text: str) -> None:
    line = library_error(parse, text, "some_field", expect="some_field: ")
    assert "digits 0-9" in line and "U+" in line


@pytest.mark.parametrize("text", UNDERSCORES)
@pytest.mark.parametrize("parse", [parse_count, parse_number])
def test_parser_refuses_underscores(parse, text: str) -> None:
    library_error(parse, text, "some_field", expect="underscores are not accepted")


@pytest.mark.parametrize(
    ("flag", "value"),
    [("--mfu", "０.５"), ("--mfu", "٠.٥"), ("--n-gpus", "８"), ("--n-gpus", "1_000")],
)
def test_flags_refuse_hidden_numbers(flag: str, value: str) -> None:
    line = one_line(["compute", *BASE, flag, value], expect=f"{flag}: ")
    assert "1e3" in line


@pytest.mark.parametrize(
    ("text", "count"),
    [("15T", 15 * 10**12), ("1.5e12", 15 * 10**11), ("4Mi", 2**22), ("2,048", 2048), ("8 ", 8)],
)
def test_ascii_forms_still_read(text: str, count: int) -> None:
    assert parse_count(text, "f") == count
    assert parse_number(" 0.5 ", "f") == 0.5


def test_yaml_integer_with_underscores_is_yaml_s_own(tmp_path: Path) -> None:
    """YAML reads an unquoted 4_194_304 as the integer itself (the shipped phase
    presets use it); only text reaching the parser is refused."""
    run = scenario_from_dict(
        yaml.safe_load(
            "{name: c, model: llama3-8b, hardware: h100-sxm, global_batch_tokens: 4_194_304}"
        )
    ).run
    assert run.global_batch_tokens == 4_194_304
