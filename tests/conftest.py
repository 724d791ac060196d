"""Shared fixtures: LibreOffice availability, scenarios, generated workbooks."""

from __future__ import annotations

import os

import pytest
from hypothesis import settings

from sheetgen.checking.recalc import gnumeric_available, libreoffice_available


def _click_runner_as_8_2() -> None:
    """Click 8.2's CliRunner keeps stderr apart (``result.stderr``) and ``output`` shows
    both streams; 8.1, pyproject's floor, mixes them unless ``mix_stderr=False`` (a
    parameter 8.2 removed).  The tests are written for 8.2: under 8.1, the runner
    keeps the streams apart and ``output`` is stdout followed by stderr."""
    import inspect

    from click import testing

    if "mix_stderr" not in inspect.signature(testing.CliRunner.__init__).parameters:
        return
    init = testing.CliRunner.__init__

    def __init__(self, *args, mix_stderr=False, **kwargs):  # noqa: N807
        init(self, *args, mix_stderr=mix_stderr, **kwargs)

    testing.CliRunner.__init__ = __init__
    testing.Result.output = property(lambda r: r.stdout + r.stderr)


_click_runner_as_8_2()


# Hypothesis draws new random examples on every run; CI (.ci/run exports
# SHEETGEN_HYPOTHESIS=ci) draws the same ones every time, so that a run passes or
# fails on the code, not on the draw.  A developer's run stays random ("dev") and
# replays its own failures from .hypothesis/.  Both profiles start from hypothesis's
# own defaults: where the CI variable is set, hypothesis loads its built-in "ci"
# profile (derandomised) first, and a profile registered without a parent would
# inherit that.
_defaults = settings.get_profile("default")
settings.register_profile("ci", parent=_defaults, derandomize=True, database=None)
settings.register_profile("dev", parent=_defaults, derandomize=False)
settings.load_profile(os.environ.get("SHEETGEN_HYPOTHESIS", "dev"))


def require_libreoffice() -> None:
    """Skip the calling test when LibreOffice is absent, or fail if CI requires it."""
    if libreoffice_available():
        return
    if os.environ.get("SHEETGEN_REQUIRE_LIBREOFFICE") == "1":
        pytest.fail("LibreOffice (soffice) not found but SHEETGEN_REQUIRE_LIBREOFFICE=1")
    pytest.skip("LibreOffice (soffice) not found; install it, or set SHEETGEN_SOFFICE to its path")


@pytest.fixture
def lo() -> None:
    """Use in a test that needs LibreOffice headless."""
    require_libreoffice()


def require_gnumeric() -> None:
    """Skip the calling test when Gnumeric's ssconvert is absent, or fail if CI requires it."""
    if gnumeric_available():
        return
    if os.environ.get("SHEETGEN_REQUIRE_LIBREOFFICE") == "1":
        pytest.fail("Gnumeric (ssconvert) not found but SHEETGEN_REQUIRE_LIBREOFFICE=1")
    pytest.skip("Gnumeric (ssconvert) not found; install gnumeric, or set SHEETGEN_SSCONVERT")


@pytest.fixture
def gnumeric() -> None:
    """Use in a test that needs Gnumeric's ssconvert."""
    require_gnumeric()


# In the required mode (SHEETGEN_REQUIRE_LIBREOFFICE=1, as CI sets) no test may skip:
# a skip there means an engine or tool CI installs is missing, or a test that
# silently did nothing.  The only skips allowed are the optional extras CI does not
# install (pip install 'sheetgen[torch]').
OPTIONAL_EXTRAS = ("torch", "transformers")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if not report.skipped or hasattr(report, "wasxfail"):
        return
    if os.environ.get("SHEETGEN_REQUIRE_LIBREOFFICE") != "1":
        return
    reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
    if any(extra in reason for extra in OPTIONAL_EXTRAS):
        return
    report.outcome = "failed"
    report.longrepr = f"skipped with SHEETGEN_REQUIRE_LIBREOFFICE=1, which allows no skip: {reason}"


def fast_engine() -> str:
    """The engine for a test that needs a whole workbook recalculated but no engine in
    particular: Gnumeric where installed (its ssconvert used about a quarter of pycel's
    CPU on a 12-column workbook: 1.7 s against 6.7 s), else pycel.  The engine matrices
    (test_workbook, test_parallelism, ...) still compare every engine key by key."""
    return "gnumeric" if gnumeric_available() else "pycel"


# `pytest -m "not slow"` runs the fast tests (about a minute of CPU).  Slow: every test that needs
# LibreOffice or Gnumeric (their markers or fixtures), any test marked
# `@pytest.mark.slow`, and these tests, which recalculate, print, edit or generate
# whole workbooks (each took over 0.8 s in a profiled run): module -> test functions.
ALL = "*"
SLOW_TESTS: dict[str, set[str] | str] = {
    "test_accelerators": {"test_matrix_reaches_every_new_accelerator_and_format", "test_libreoffice_equals_reference", "test_gnumeric_equals_reference", "test_inprocess_engine_equals_reference", "test_default_workbook_is_the_same_in_other_engines"},
    "test_advise": {"test_advised_plans_recalculate_in_libreoffice", "test_bad_advise_input_ends_in_one_line", "test_deadline_and_budget", "test_moe_uses_expert_parallelism", "test_write_never_loses_a_file"},
    "test_budget_proposal": {"test_new_keys_equal_reference_in_libreoffice", "test_new_keys_equal_reference_in_pycel", "test_new_keys_equal_reference_in_gnumeric"},
    "test_charts": {"test_month_categories_are_calendar_months_that_follow_the_start_date"},
    "test_check": {"test_a_name_typed_as_a_formula", "test_check_cli_exit_codes", "test_failing_check_and_invalid_input", "test_formula_altered", "test_formulas_engine_checks_a_one_scenario_workbook", "test_hanging_libreoffice_times_out", "test_inputs_keeps_an_existing_file", "test_inputs_round_trip_every_shipped_scenario_file", "test_invalid_typed_inputs_are_flagged", "test_missing_libreoffice_is_a_clear_error", "test_round_trip_edit_export_regenerate", "test_row_deleted", "test_sheet_deleted", "test_unknown_model_gives_error_values", "test_untouched_workbook_passes", "test_value_pasted_over_formula"},
    "test_cli": {"test_generate_reruns_and_keeps_an_edited_file"},
    "test_edit_proof": {"test_check_reports_a_plan_that_is_not_ok_as_a_warning", "test_edit_gpus_tp_and_name_in_a_spreadsheet", "test_new_keys_in_inprocess_engine", "test_new_keys_in_libreoffice", "test_new_keys_in_gnumeric"},
    "test_engines": {"test_check_with_engine", "test_gnumeric_ignores_wrong_cached_values", "test_gnumeric_timeout_kills_whole_process_group", "test_recalculate_dispatches_to_every_available_engine"},
    "test_framework_memory": {"test_frameworks_gnumeric_equals_reference", "test_frameworks_libreoffice_equals_reference", "test_frameworks_pycel_equals_reference"},
    "test_hostile": {"test_any_numeric_flag_text_is_a_result_or_one_line", "test_forged_stored_value_is_reported", "test_generate_from_refuses_emptied_or_text_cells", "test_gnumeric_resave_checks_clean", "test_libreoffice_resave_checks_clean", "test_libreoffice_resave_keeps_text_as_text", "test_moved_defined_name_is_reported", "test_real_edit_after_resave_still_reported", "test_too_many_scenarios_refused_at_once"},
    "test_hostile_inputs": {"test_long_base_chain_is_one_line", "test_zip_bomb_is_refused_before_it_is_loaded"},
    "test_hostile_messages": {"test_libreoffice_gets_a_private_tmpdir"},
    "test_hostile_workbooks": ALL,
    "test_inference": {"test_edited_inference_inputs_follow_in_libreoffice", "test_gnumeric_equals_reference", "test_inprocess_engine_equals_reference", "test_libreoffice_equals_reference", "test_libreoffice_inference_cells_are_numbers", "test_libreoffice_flags_a_configuration_that_does_not_fit"},
    "test_messages": {"test_check_names_check_scenario_numbers_and_reason", "test_error_check_message_quotes_its_inputs"},
    "test_other_writers": ALL,
    "test_parallelism": {"test_layouts_gnumeric_equals_reference", "test_layouts_inprocess_engine_equals_reference", "test_layouts_libreoffice_equals_reference"},
    "test_presentation": ALL,
    "test_print_legibility": ALL,
    "test_pycel_fast": {"test_same_python_for_every_formula_cell", "test_same_value_for_every_cell", "test_cached_values_are_not_read_back"},
    "test_properties": ALL,
    "test_recalc": {"test_engines_agree", "test_libreoffice_ignores_wrong_cached_values", "test_libreoffice_parallel_calls", "test_libreoffice_recalc_to_dst_and_default", "test_libreoffice_recalculates_after_openpyxl_edit", "test_libreoffice_values", "test_timeout_kills_whole_process_group"},
    "test_signals": ALL,
    "test_team_presets": {"test_check_in_libreoffice", "test_check_without_the_team_folder", "test_generate_check_inputs_with_team_presets"},
    "test_throughput": {"test_deadline_picks_the_cheapest_plan_that_meets_it", "test_edits_in_a_spreadsheet_move_the_clock_range_and_verdict", "test_inprocess_engine_equals_reference_on_every_key", "test_libreoffice_equals_reference_on_every_key", "test_summary_days_and_cost_equal_what_advise_printed", "test_write_keeps_the_name_numbers_and_distinct_plans"},
    "test_workbook": {"test_edited_inputs_follow_in_libreoffice", "test_gnumeric_equals_reference", "test_inprocess_engine_equals_reference", "test_libreoffice_equals_reference"},
    "test_writers": {"test_concurrent_runs_as_they_come", "test_concurrent_runs_to_one_new_path", "test_file_size_limit_every_writer", "test_real_full_and_read_only_file_systems", "test_rerun_replaces_own_output_and_keeps_an_edit", "test_stdout_on_a_full_device"},
}  # fmt: skip
ENGINE_MARKERS = ("libreoffice", "gnumeric")
ENGINE_FIXTURES = {"lo", "gnumeric"}


# The modules with the most engine work, heaviest first (a profiled run's total per
# module, pytest --durations=0): they are collected first, so that pytest-xdist's
# loadscope hands them out first and the run does not end on one worker finishing a
# long module while the other waits (longest first; each module stays whole).
HEAVY_FIRST = (
    "test_check", "test_hostile_workbooks", "test_writers", "test_hostile", "test_edit_proof",
    "test_inference", "test_properties", "test_throughput", "test_hardware_sheet",
    "test_workbook", "test_presentation", "test_serving", "test_parallelism", "test_scaling",
    "test_print_legibility", "test_framework_memory", "test_other_writers", "test_advise",
    "test_window", "test_recalc", "test_finetune", "test_pycel_fast", "test_budget_proposal",
    "test_engines",
)  # fmt: skip


def _module(item) -> str:
    return item.module.__name__.rsplit(".", 1)[-1] if item.module else ""


def pytest_collection_modifyitems(config, items) -> None:
    rank = {m: i for i, m in enumerate(HEAVY_FIRST)}
    items.sort(key=lambda item: rank.get(_module(item), len(HEAVY_FIRST)))  # stable
    for item in items:
        module = _module(item)
        name = getattr(item, "originalname", item.name)
        listed = SLOW_TESTS.get(module, ())
        if (
            listed == ALL
            or name in listed
            or any(item.get_closest_marker(m) for m in ENGINE_MARKERS)
            or ENGINE_FIXTURES & set(getattr(item, "fixturenames", ()))
        ):
            item.add_marker(pytest.mark.slow)
