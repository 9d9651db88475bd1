"""The railsim Python module against the CLI: the same inputs give the same JSON, exactly."""
import json
import os
import subprocess

import pytest

import railsim

CLI = os.environ.get("RAILSIM_CLI", "railsim")


def cli(*args):
    out = subprocess.run([CLI, *args, "--json"], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def test_presets():
    assert "GPT-1T" in railsim.presets("models")
    assert "megatron-core-2024" in railsim.presets("stacks")


def test_design_equals_cli():
    py = railsim.design(gpus=32768, hb_domain=8, design="rail_only")
    assert py.to_dict() == cli("design", "--gpus", "32768", "--hb-domain", "8",
                               "--design", "rail_only")
    assert py.tiers == 2 and py.switches.total == 768


def test_plan_equals_cli():
    py = railsim.plan(gpus=4096, design="rail_only", model="GPT-1T", top=3, threads=1)
    c = cli("plan", "--gpus", "4096", "--design", "rail_only", "--model", "GPT-1T", "--top", "3",
            "--threads", "1")
    assert py.to_dict() == c
    assert py.plans[0].rank == 1


def test_whatif_equals_cli():
    py = railsim.whatif(gpus=1024, fail=["leaf:3"], sim="off")
    assert py.to_dict() == cli("fail", "whatif", "--gpus", "1024", "--fail", "leaf:3",
                               "--sim", "off")
    assert py.designs[1].nic_load_factor == pytest.approx(8 / 7)


def test_optimize_equals_cli():
    py = railsim.optimize(gpus=1024, within=10.0, switch=["ETH-51.2T-128x400G", "QM9700"])
    c = cli("optimize", "--gpus", "1024", "--within", "10", "--switch",
            "ETH-51.2T-128x400G,QM9700")
    assert py.to_dict() == c
    assert py.cheapest.meets_target


def test_zero_bubble_v_from_a_user_stack_equals_cli(tmp_path):
    stack = cli("presets", "stacks", "megatron-core-2024")
    stack["name"] = "core-with-zb-v"
    stack["knobs"]["pipeline_schedules"] = ["1f1b", "zb-v"]
    path = tmp_path / "stack.json"
    path.write_text(json.dumps(stack))
    args = dict(gpus=64, gpu="A100-SXM-80GB", model="Megatron-175B", batch=64, tp=8, pp=8, dp=1,
                micro_batch=1, stack=str(path))
    v = railsim.estimate(**args, pp_schedule="zb-v")
    assert v.to_dict() == cli("estimate", "--gpus", "64", "--gpu", "A100-SXM-80GB", "--model",
                              "Megatron-175B", "--batch", "64", "--tp", "8", "--pp", "8", "--dp",
                              "1", "--micro-batch", "1", "--stack", str(path), "--pp-schedule",
                              "zb-v")
    assert v.to_dict()["breakdown"]["bubble_s"] < \
        0.5 * railsim.estimate(**args).to_dict()["breakdown"]["bubble_s"]
    with pytest.raises(railsim.InputError) as e:
        railsim.estimate(**args, pp_schedule="zb-v", interleave=2)
    assert str(e.value).startswith("pp_schedule:"), str(e.value)


def test_own_validation_table_equals_cli(tmp_path):
    """validate(table=...): one's own runs, each with the band it would be printed with."""
    own = {"table": {"id": "mine", "title": "Mine", "metric": "tokens_per_s_per_gpu",
                     "max_tolerance": 0.1, "mean_tolerance": 0.05},
           "common": {"gpu": "H100-SXM-96GB", "stack": "torchtitan-2024", "model": "Llama-3-8B",
                      "gpus": 8, "global_batch": 16, "seq_len": 8192, "micro_batch": 2,
                      "recompute": "op", "tp": 1, "pp": 1},
           "rows": [{"label": "eager bf16", "dtype": "bf16", "tokens_per_s_per_gpu": 5762}]}
    path = tmp_path / "own.json"
    path.write_text(json.dumps(own))
    py = railsim.validate(table=str(path))
    assert py.to_dict()["own"] == cli("validate", "--table", str(path))["own"]
    point = py.to_dict()["own"]["table"]["points"][0]
    # TorchTitan's eager bf16 run (Table 1): +10.7%, inside the band of H100 96 GB on its stack.
    assert abs(point["error"] - 0.107) < 0.001, point
    assert point["inside_band"] and point["evidence"] == "GPU and stack measured", point
    own["rows"][0]["tp_comm_overlaps"] = True
    path.write_text(json.dumps(own))
    with pytest.raises(railsim.InputError) as e:
        railsim.validate(table=str(path))
    assert str(e.value).startswith("table: rows[0].tp_comm_overlaps: unknown field"), str(e.value)


def test_validation_docs_adding_runs_example_prints_what_the_page_says(tmp_path):
    """docs/validation.md's "Adding runs" example, run as its text says, prints what it quotes."""
    page = open(os.path.join(os.path.dirname(__file__), "..", "..", "docs",
                             "validation.md")).read()
    section = page[page.index("## Adding runs"):]
    example = section[section.index("```json") + len("```json"):]
    example = example[:example.index("```")]
    path = tmp_path / "my-runs.json"
    path.write_text(example)
    out = subprocess.run([CLI, "validate", "--table", str(path)], check=True,
                         capture_output=True, text=True).stdout
    own = out[out.index("Your runs (hold-outs"):]
    # The row as the page quotes it ("ends with `Llama 3 70B ... inside (...)`"), band included,
    # word for word up to the column spacing.
    quoted = section[section.index("ends with `") + len("ends with `"):]
    quoted = quoted[:quoted.index("`")].split()
    assert quoted[:3] == ["Llama", "3", "70B"] and "inside" in quoted, quoted
    assert any(line.split() == quoted for line in own.splitlines()), (quoted, own)
    assert "Your runs: 1 run with a figure, 0 without" in own, own
    assert "1 of 1 inside the band estimate and plan print for them" in own, own


def test_model_docs_band_check_prints_what_the_page_says():
    """docs/model.md section 10 quotes validate's check of the bands on unseen tables: the counts
    it states are the ones `validate --json` gives (`error_band_check`), word for word."""
    page = open(os.path.join(os.path.dirname(__file__), "..", "..", "docs", "model.md")).read()
    section = " ".join(page[page.index("## 10. Error bands"):].split())
    check = cli("validate")["error_band_check"]
    dense_bf16, dense_fp8, moe_bf16, moe_fp8 = check
    assert [(c["models"], c["precision"]) for c in check] == [
        ("dense", "bf16"), ("dense", "fp8"), ("moe", "bf16"), ("moe", "fp8")]

    def pct(c):
        return 100 * c["share_inside"]
    quoted = [
        f"{dense_bf16['inside']} of {dense_bf16['runs']} dense BF16 hold-outs "
        f"({pct(dense_bf16):.0f}%) and {dense_fp8['inside']} of {dense_fp8['runs']} dense FP8 "
        f"ones ({pct(dense_fp8):.0f}%) fall inside, at a mean band of "
        f"+-{100 * dense_bf16['mean_fraction']:.1f}% and +-{100 * dense_fp8['mean_fraction']:.1f}%",
        f"({moe_bf16['inside']} of the {moe_bf16['runs']} BF16 MoE hold-outs fall inside",
        f"judges: {moe_fp8['inside']} of the {moe_fp8['runs']} FP8 MoE hold-outs fall inside "
        f"({pct(moe_fp8):.0f}%)",
    ]
    by_level = [f"{lv['inside']} of {lv['runs']}" if lv["runs"] else "none"
                for c in (dense_bf16, dense_fp8) for lv in c["by_evidence"]]
    quoted.append(f"of the dense BF16 hold-outs, {by_level[0]} with GPU and stack measured, "
                  f"{by_level[1]} with the GPU measured on other stacks and {by_level[2]} with the "
                  f"GPU never measured; of the dense FP8 ones, {by_level[3]}, {by_level[4]} and "
                  f"{by_level[5]}")
    new = [c["new_gpu"] for c in check]
    quoted.append(f"the band of a GPU never measured held {new[0]['inside']} of the "
                  f"{new[0]['runs']} dense BF16 hold-outs ({100 * new[0]['share_inside']:.0f}%) and "
                  f"{new[1]['inside']} of the {new[1]['runs']} dense FP8 ones "
                  f"({100 * new[1]['share_inside']:.0f}%) on the GPUs it had not seen "
                  f"({new[2]['inside']} of {new[2]['runs']} BF16 MoE and {new[3]['inside']} of "
                  f"{new[3]['runs']} FP8 MoE ones)")
    for q in quoted:
        assert q in section, q
    assert moe_fp8["thin"] == 0


@pytest.mark.parametrize("call, field", [
    (lambda: railsim.design(gpus=1001), "hb_domain"),
    (lambda: railsim.design(gpus=-5), "gpus"),
    (lambda: railsim.plan(gpus=1024, model="no-such-model"), "model"),
    (lambda: railsim.plan(gpus=1024, tp=0), "tp"),
    (lambda: railsim.whatif(gpus=1024, fail=["fan:1"]), "fail"),
    (lambda: railsim.optimize(gpus=1024), "within"),
])
def test_bad_input_raises_input_error_naming_the_field(call, field):
    with pytest.raises(railsim.InputError) as e:
        call()
    assert str(e.value).startswith(field + ":"), str(e.value)
    assert "--" not in str(e.value), str(e.value)
    assert "\n" not in str(e.value)
    assert isinstance(e.value, ValueError)


def test_wrong_type_is_a_type_error_not_a_crash():
    with pytest.raises(TypeError):
        railsim.design(gpus="many")


@pytest.mark.parametrize("call, field", [
    (lambda: railsim.traffic(gpus="256"), "gpus"),
    (lambda: railsim.traffic(gpus=256, tp=1.5), "tp"),
    (lambda: railsim.whatif(gpus=1024, fail="leaf:3", sim=False), "sim"),
    (lambda: railsim.whatif(gpus=1024, design=["rail_only", 3]), "design"),
    (lambda: railsim.optimize(gpus=1024, within="10"), "within"),
    (lambda: railsim.optimize(gpus=1024, hb_domain=[8, "16"]), "hb_domain"),
    (lambda: railsim.optimize(gpus=1024, witin=10.0), "witin"),
])
def test_wrong_types_are_input_errors_naming_the_argument(call, field):
    with pytest.raises(railsim.InputError) as e:
        call()
    assert str(e.value).startswith(field + ":"), str(e.value)


def test_traffic_matrix_equals_cli():
    import numpy as np
    py = railsim.traffic(gpus=256, model="Megatron-22B", batch=256)
    c = cli("traffic", "--gpus", "256", "--model", "Megatron-22B", "--batch", "256")
    for key in ("total_bytes", "gpus", "hb_domain", "pairs_with_traffic", "bytes_by_locality",
                "bytes_by_parallelism", "busiest_pair", "busiest_nic", "forwarded_bytes"):
        assert py[key] == c[key], key
    assert py.strategy == c["strategy"]
    assert py["bytes"] == c["bytes"]
    assert py.pairs_with_traffic == len(py.pair_src)
    assert isinstance(py.pair_bytes, np.ndarray) and py.pair_bytes.shape == (len(py.pair_src), 5)
    assert py.pair_bytes.sum() == pytest.approx(c["total_bytes"], rel=1e-12)
    assert len(py.pair_src) == len(py.pair_dst) and (py.pair_src != py.pair_dst).all()
