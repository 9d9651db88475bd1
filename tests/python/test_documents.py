"""Documents the Python module and the CLI write with one library function each: the same inputs
give the same JSON, every field (traffic's summary included, beside its NumPy pair arrays)."""
import json
import os
import subprocess

import railsim

CLI = os.environ.get("RAILSIM_CLI", "railsim")


def cli(*args):
    out = subprocess.run([CLI, *args, "--json"], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def document(result):
    """The JSON part of a traffic() result (without its NumPy pair arrays), as plain objects."""
    arrays = ("pair_src", "pair_dst", "pair_bytes")
    return json.loads(json.dumps({k: v for k, v in result.items() if k not in arrays}))


def test_traffic_of_the_best_plan_is_the_cli_document():
    py = railsim.traffic(gpus=256, model="Megatron-22B", batch=256)
    c = cli("traffic", "--gpus", "256", "--model", "Megatron-22B", "--batch", "256")
    assert document(py) == c
    assert py.strategy_source.startswith("best plan of ")
    assert py.iteration_time_s > 0 and py.matrix_memory_bytes > 0


def test_traffic_of_a_given_strategy_is_the_cli_document():
    py = railsim.traffic(gpus=64, model="Megatron-22B", batch=64, tp=8, pp=2)
    c = cli("traffic", "--gpus", "64", "--model", "Megatron-22B", "--batch", "64", "--tp", "8",
            "--pp", "2")
    assert document(py) == c
    assert py.strategy_source == "given" and py.strategy.tp == 8 and py.strategy.pp == 2


def test_estimate_is_the_cli_document():
    py = railsim.estimate(gpus=64, gpu="A100-SXM-80GB", model="Megatron-175B", batch=64, tp=8,
                          pp=8, stack="megatron-lm-2022")
    c = cli("estimate", "--gpus", "64", "--gpu", "A100-SXM-80GB", "--model", "Megatron-175B",
            "--batch", "64", "--tp", "8", "--pp", "8", "--stack", "megatron-lm-2022")
    assert py.to_dict() == c
    assert len(py.comm) > 0 and py.error_band.low_s < py.iteration_time_s < py.error_band.high_s
