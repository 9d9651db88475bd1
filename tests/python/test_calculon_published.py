"""Calculon's published estimates of the Megatron-LM runs (tests/data/calculon/
calculon-validation-sc23.json, the Calculon column of docs/calculon.md): the file must agree with
itself and with the measurements it quotes, so that a mistyped figure fails here."""
import json
import os

import pytest

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data")


def load(*path):
    with open(os.path.join(DATA, *path)) as f:
        return json.load(f)


CALC = load("calculon", "calculon-validation-sc23.json")
MODES = ("full", "selective_sp")
RUNS = ("22B", "175B", "530B", "1T")


def test_measured_times_are_korthikanti_table5():
    k = load("megatron-korthikanti-2022.json")["iteration_time_s"]
    for mode in MODES:
        assert CALC["measured_s"][mode] == {r: k[mode][r] for r in RUNS}, mode


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("run", RUNS)
def test_printed_time_and_error_agree(mode, run):
    # Calculon prints Calc to two decimals and Delta = 100 (1 - Calc / Profile) from the unrounded
    # time: the time the printed Delta implies rounds to the printed time (to within the Delta's
    # own two decimals).
    measured = CALC["measured_s"][mode][run]
    delta = CALC["printed_delta_percent"][mode][run]
    implied = measured * (1 - delta / 100)
    assert abs(implied - CALC["iteration_time_s"][mode][run]) <= 0.005 + measured * 0.00005


def test_printed_summary():
    deltas = [abs(CALC["printed_delta_percent"][m][r]) for m in MODES for r in RUNS]
    assert sum(deltas) / len(deltas) == pytest.approx(3.65, abs=0.005)
    assert max(deltas) == 8.87


def test_every_figure_is_sourced():
    assert "calculon-ai/calculon" in CALC["source"] and "seqsel_tab5" in CALC["source"]
    assert set(CALC["calculon_models"]) == set(RUNS)
