"""estimate, sim, sweep and fail_goodput from Python against the CLI's --json (exact equality),
Calculon files as --model/--gpu, and bad input: InputError naming the argument."""
import json
import os
import subprocess
import threading

import pytest

import railsim

CLI = os.environ.get("RAILSIM_CLI", "railsim")
DATA = os.path.join(os.path.dirname(__file__), "..", "data", "calculon")
CALC_1T = os.path.join(DATA, "models", "megatron-1T.json")
CALC_A100 = os.path.join(DATA, "systems", "a100-sxm-80gb.json")


def cli(*args):
    out = subprocess.run([CLI, *args, "--json"], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def cli_run(*args):
    return subprocess.run([CLI, *args], capture_output=True, text=True)


# --- each capability equals the CLI ---------------------------------------------------------

def test_estimate_equals_cli():
    py = railsim.estimate(gpus=1024, design="rail_only", model="GPT-3-175B", tp=8, pp=8,
                          recompute="selective", sp=True, dist_opt=False, batch=512)
    c = cli("estimate", "--gpus", "1024", "--design", "rail_only", "--model", "GPT-3-175B",
            "--tp", "8", "--pp", "8", "--recompute", "selective", "--sp", "on", "--dist-opt",
            "off", "--batch", "512")
    assert py.to_dict() == c
    assert py.strategy.tp == 8 and py.strategy.pp == 8 and py.strategy.dp == 16
    assert py.iteration_time_s > 0 and py.comm


def test_per_op_and_per_layer_checkpointing_equal_cli():
    args = dict(gpus=64, gpu="A100-SXM-80GB", model="Llama-3-8B", seq=8192, batch=64, tp=1,
                pp=1, dp=64, stack="torchtitan-2024")
    times = {}
    for mode in ("none", "op", "layer", "full"):
        py = railsim.estimate(recompute=mode, **args)
        c = cli("estimate", "--gpus", "64", "--gpu", "A100-SXM-80GB", "--model", "Llama-3-8B",
                "--seq", "8192", "--batch", "64", "--tp", "1", "--pp", "1", "--dp", "64",
                "--stack", "torchtitan-2024", "--recompute", mode)
        assert py.to_dict() == c
        assert py.strategy.recompute == mode
        times[mode] = py.iteration_time_s
    # Each keeps less and recomputes more than the one before.
    assert times["none"] < times["op"] < times["layer"] < times["full"]
    # A stack without them names the option.
    with pytest.raises(railsim.InputError, match="recompute"):
        railsim.estimate(recompute="op", **{**args, "stack": "megatron-core-2024"})


def test_torch_compile_equals_cli():
    args = dict(gpus=64, gpu="A100-SXM-80GB", model="Llama-3-8B", seq=8192, batch=64, tp=1,
                pp=1, dp=64, stack="torchtitan-2024")
    on = railsim.estimate(compile=True, **args)
    c = cli("estimate", "--gpus", "64", "--gpu", "A100-SXM-80GB", "--model", "Llama-3-8B",
            "--seq", "8192", "--batch", "64", "--tp", "1", "--pp", "1", "--dp", "64",
            "--stack", "torchtitan-2024", "--compile", "on")
    assert on.to_dict() == c
    off = railsim.estimate(**args)
    assert on.compile and not off.compile
    assert off.elementwise_kernels == "eager" and on.elementwise_kernels == "fused"
    assert off.iteration_time_s > on.iteration_time_s
    with pytest.raises(railsim.InputError, match="^compile: stack megatron-core-2024 has no"):
        railsim.estimate(compile=True, **{**args, "stack": "megatron-core-2024"})


def test_ep_dispatch_equals_cli():
    args = dict(gpus=256, gpu="H800", switch="QM9700", model="DeepSeek-V3", seq=4096, batch=512,
                tp=1, pp=4, dp=64, ep=64, micro_batch=1)
    hier = railsim.estimate(ep_dispatch="hierarchical", **args)
    c = cli("estimate", "--gpus", "256", "--gpu", "H800", "--switch", "QM9700", "--model",
            "DeepSeek-V3", "--seq", "4096", "--batch", "512", "--tp", "1", "--pp", "4", "--dp",
            "64", "--ep", "64", "--micro-batch", "1", "--ep-dispatch", "hierarchical")
    assert hier.to_dict() == c
    direct = railsim.estimate(**args)
    assert hier.ep_dispatch == "hierarchical" and direct.ep_dispatch == "direct"
    assert hier.to_dict()["breakdown"]["ep_comm_s"] < direct.to_dict()["breakdown"]["ep_comm_s"]
    with pytest.raises(railsim.InputError, match="^ep_dispatch: got 'deepep'"):
        railsim.estimate(ep_dispatch="deepep", **args)


def test_ep_overlap_equals_cli():
    args = dict(gpus=256, gpu="H100-SXM", switch="QM9700", routing="adaptive",
                model="Qwen3-235B-A22B", seq=4096, batch=2048, tp=2, pp=8, ep=32, etp=1,
                interleave=4, micro_batch=1, stack="nemo-perf-2025", ep_dispatch="hierarchical")
    on = railsim.estimate(ep_overlap=True, **args)
    c = cli("estimate", "--gpus", "256", "--gpu", "H100-SXM", "--switch", "QM9700", "--routing",
            "adaptive", "--model", "Qwen3-235B-A22B", "--seq", "4096", "--batch", "2048",
            "--tp", "2", "--pp", "8", "--ep", "32", "--etp", "1", "--interleave", "4",
            "--micro-batch", "1", "--stack", "nemo-perf-2025", "--ep-dispatch", "hierarchical",
            "--ep-overlap", "on")
    assert on.to_dict() == c
    off = railsim.estimate(**args)
    assert on.ep_overlap and not off.ep_overlap
    assert on.iteration_time_s < off.iteration_time_s
    with pytest.raises(railsim.InputError, match="^ep_overlap: stack megatron-core-2024 has no"):
        railsim.estimate(ep_overlap=True, **{**args, "stack": "megatron-core-2024"})
    with pytest.raises(railsim.InputError, match="^ep_overlap: combined 1F1B needs interleaving"):
        railsim.estimate(ep_overlap=True, **{**args, "interleave": 1})


def test_fp8_output_layer_equals_cli():
    args = dict(gpus=64, gpu="GB300", hb_domain=64, nic_gbps=800, switch="Q3400",
                model="Llama-3-8B", seq=8192, batch=128, tp=1, pp=1, micro_batch=1,
                stack="nemo-perf-2025", dtype="mxfp8")
    on = railsim.estimate(fp8_output_layer=True, **args)
    c = cli("estimate", "--gpus", "64", "--gpu", "GB300", "--hb-domain", "64", "--nic-gbps",
            "800", "--switch", "Q3400", "--model", "Llama-3-8B", "--seq", "8192", "--batch",
            "128", "--tp", "1", "--pp", "1", "--micro-batch", "1", "--stack", "nemo-perf-2025",
            "--dtype", "mxfp8", "--fp8-output-layer", "on")
    assert on.to_dict() == c
    off = railsim.estimate(**args)
    assert on.fp8_output_layer and not off.fp8_output_layer
    assert on.iteration_time_s < off.iteration_time_s
    with pytest.raises(railsim.InputError, match="^fp8_output_layer: the output layer runs in "
                                                 "MXFP8 only under MXFP8 training"):
        railsim.estimate(fp8_output_layer=True, **{**args, "dtype": "fp8"})


def test_fp8_casts_equal_cli():
    # torchtitan-2024 casts fp8 operands in kernels of their own (torchao); Python states it as
    # the CLI does, and charges it as the CLI does.
    r = railsim.estimate(gpus=8, gpu="H100-SXM-96GB", hb_domain=8, model="Llama-3-8B", seq=8192,
                         batch=16, tp=1, pp=1, micro_batch=2, compile=True,
                         stack="torchtitan-2024", dtype="fp8")
    c = cli("estimate", "--gpus", "8", "--gpu", "H100-SXM-96GB", "--hb-domain", "8", "--model",
            "Llama-3-8B", "--seq", "8192", "--batch", "16", "--tp", "1", "--pp", "1",
            "--micro-batch", "2", "--compile", "on", "--stack", "torchtitan-2024", "--dtype",
            "fp8")
    assert r.to_dict() == c
    assert r.fp8_casts == "separate"
    assert railsim.estimate(model="Llama-3-8B", gpus=64).fp8_casts == "fused"


def test_cp_comm_equals_cli():
    args = dict(model="Llama-3-8B", gpus=64, gpu="H100-SXM", seq=16384, batch=64, tp=8, cp=2)
    gathered = railsim.estimate(cp_comm="all_gather", **args)
    c = cli("estimate", "--model", "Llama-3-8B", "--gpus", "64", "--gpu", "H100-SXM", "--seq",
            "16384", "--batch", "64", "--tp", "8", "--cp", "2", "--cp-comm", "all_gather")
    assert gathered.to_dict() == c
    ring = railsim.estimate(**args)  # megatron-core-2024's p2p
    assert ring.cp_comm == "p2p" and gathered.cp_comm == "all_gather"
    assert ring.to_dict()["breakdown"]["cp_comm_s"] < gathered.to_dict()["breakdown"]["cp_comm_s"]
    assert ring.iteration_time_s < gathered.iteration_time_s
    with pytest.raises(railsim.InputError, match="^cp_comm: got 'ring'"):
        railsim.estimate(cp_comm="ring", **args)


def test_offload_layers_equals_cli():
    args = dict(model="Llama-3-70B", gpus=64, gpu="H100-SXM", seq=8192, batch=128, tp=8, pp=1,
                recompute="none")
    off = railsim.estimate(offload_layers=40, **args)
    c = cli("estimate", "--model", "Llama-3-70B", "--gpus", "64", "--gpu", "H100-SXM", "--seq",
            "8192", "--batch", "128", "--tp", "8", "--pp", "1", "--recompute", "none",
            "--offload-layers", "40")
    assert off.to_dict() == c
    assert off.to_dict()["strategy"]["offload_layers"] == 40
    assert off.memory_gib < railsim.estimate(**args).memory_gib
    with pytest.raises(railsim.InputError, match="^offload_layers: activation offload runs "
                                                 "without pipeline parallelism"):
        railsim.estimate(offload_layers=8, **{**args, "pp": 2})


def test_expert_folding_equals_cli():
    args = dict(model="Qwen3-30B-A3B", gpus=64, gpu="H100-SXM", seq=4096, batch=64,
                stack="nemo-perf-2025", tp=2, pp=1)
    folded = railsim.estimate(ep=16, etp=1, **args)
    c = cli("estimate", "--model", "Qwen3-30B-A3B", "--gpus", "64", "--gpu", "H100-SXM", "--seq",
            "4096", "--batch", "64", "--stack", "nemo-perf-2025", "--tp", "2", "--pp", "1",
            "--ep", "16", "--etp", "1")
    assert folded.to_dict() == c
    assert folded.to_dict()["strategy"]["etp"] == 1
    # ep 64 spans tp x dp = 64: only folded; etp must divide tp.
    with pytest.raises(railsim.InputError, match="^ep: ep = 64 must divide dp = 32"):
        railsim.estimate(ep=64, **args)
    with pytest.raises(railsim.InputError, match="^etp: got 3, expected a divisor of tp = 4"):
        railsim.estimate(ep=8, etp=3, **{**args, "tp": 4})
    # Between 1 and tp: the experts split over pairs of the four TP ranks, as the CLI says it.
    mid = railsim.estimate(ep=16, etp=2, **{**args, "tp": 4})
    assert mid.to_dict() == cli("estimate", "--model", "Qwen3-30B-A3B", "--gpus", "64", "--gpu",
                                "H100-SXM", "--seq", "4096", "--batch", "64", "--stack",
                                "nemo-perf-2025", "--tp", "4", "--pp", "1", "--ep", "16",
                                "--etp", "2")
    assert mid.to_dict()["strategy"]["etp"] == 2


def test_sim_collective_equals_cli():
    py = railsim.sim(gpus=256, design="rail_only", collective="all_to_all", bytes="64MB",
                     forwarding="pipelined", chunks=4)
    c = cli("sim", "--gpus", "256", "--design", "rail_only", "--collective", "all_to_all",
            "--bytes", "64MB", "--forwarding", "pipelined", "--chunks", "4")
    assert py.to_dict() == c
    assert py.bytes == 64e6 and py.groups == 1
    # A size as a number is the same as its text.
    assert railsim.sim(gpus=256, design="rail_only", collective="all_to_all", bytes=64e6,
                       forwarding="pipelined", chunks=4).to_dict() == c


def test_sim_schedule_equals_cli():
    py = railsim.sim(gpus=64, schedule=True, model="Megatron-22B", batch=64, tp=8, pp=2)
    c = cli("sim", "--gpus", "64", "--schedule", "--model", "Megatron-22B", "--batch", "64",
            "--tp", "8", "--pp", "2")
    assert py.to_dict() == c
    assert py.strategy == {"tp": 8, "pp": 2, "dp": 4, "ep": 1}


def test_sweep_rows_equal_cli():
    rows = railsim.sweep(gpus=[1024, 2048], hb_domain="8,16", model="Megatron-22B", batch=256,
                         threads=2)
    c = cli("sweep", "--gpus", "1024,2048", "--hb-domain", "8,16", "--model", "Megatron-22B",
            "--batch", "256", "--threads", "2")
    assert isinstance(rows, list)
    assert [dict(r) for r in json.loads(json.dumps(rows))] == c["rows"]
    assert len(rows) == 2 * 2 * 3  # points x designs
    assert rows[0].best_iteration_time_s > 0
    # no_perf=True is --no-perf.
    assert json.loads(json.dumps(railsim.sweep(gpus=1024, no_perf=True))) == \
        cli("sweep", "--gpus", "1024", "--no-perf")["rows"]
    # The routing is a swept axis, stated on every row, as in the CLI.
    routed = railsim.sweep(gpus=1024, batch=1024, routing="auto,spray", switch="QM9700")
    assert [dict(r) for r in json.loads(json.dumps(routed))] == \
        cli("sweep", "--gpus", "1024", "--batch", "1024", "--routing", "auto,spray", "--switch",
            "QM9700")["rows"]
    assert [r.routing for r in routed] == ["adaptive"] * 3 + ["spray"] * 3


def test_fail_goodput_equals_cli():
    py = railsim.fail_goodput(gpus=1024, trials=200, seed=7, days=30, repair_h=12.0)
    c = cli("fail", "goodput", "--gpus", "1024", "--trials", "200", "--seed", "7", "--days",
            "30", "--repair-h", "12")
    assert py.to_dict() == c
    assert [d.design for d in py.designs] == ["rail_optimized", "rail_only"]
    assert 0 < py.designs[0].ettr.mean < 1


def test_fail_goodput_from_the_fabric_equals_cli():
    py = railsim.fail_goodput(gpus=256, trials=100, model="Megatron-22B", batch=64,
                              design="rail_only")
    c = cli("fail", "goodput", "--gpus", "256", "--trials", "100", "--model", "Megatron-22B",
            "--batch", "64", "--design", "rail_only")
    assert py.to_dict() == c
    # The tokens to train without a throughput: each design's best plan gives its own.
    py = railsim.fail_goodput(gpus=256, trials=100, model="Megatron-22B", batch=64, tokens=1e11)
    c = cli("fail", "goodput", "--gpus", "256", "--trials", "100", "--model", "Megatron-22B",
            "--batch", "64", "--tokens", "1e11")
    assert py.to_dict() == c
    assert all(d["tokens_per_s"] > 0 and d["time_to_train_days"]["mean"] > 0 for d in c["designs"])


def test_report_of_ones_own_cluster_equals_cli(tmp_path):
    """The HTML report of a GB200 NVL72 cluster from Python: the CLI's bytes for the same options
    (the page states its inputs, --out included, so both write the same path in turn)."""
    out = str(tmp_path / "report.html")
    kw = dict(gpu="GB200", gpus=1152, hb_domain=72, nic_gbps=800, model=["GPT-3-175B"],
              batch=1152, train_tokens=3e11, studies="none", no_failures=True, out=out)
    assert railsim.report(**kw) is None
    with open(out, encoding="utf-8") as f:
        py = f.read()
    r = cli_run("report", "--gpu", "GB200", "--gpus", "1152", "--hb-domain", "72", "--nic-gbps",
                "800", "--model", "GPT-3-175B", "--batch", "1152", "--train-tokens", "300000000000",
                "--studies", "none", "--no-failures", "--out", out)
    assert r.returncode == 0, r.stderr
    assert r.stdout == f"report written to {out}\n"
    with open(out, encoding="utf-8") as f:
        assert f.read() == py
    assert "1,152 x GB200 (HB domain K=72" in py and "days to train" in py
    assert '<div class="verdict' in py
    with pytest.raises(railsim.InputError) as e:
        railsim.report(out=out, gpus=1000, hb_domain=256)
    assert str(e.value).startswith("hb_domain:")


def test_plan_against_the_users_plan_equals_cli():
    """plan --against and --explain from Python: the CLI's document, the user's plan explained."""
    py = railsim.plan(gpus=1024, model="GPT-3-175B", top=2, explain=True,
                      against="tp8 pp8 dp16 mb1")
    c = cli("plan", "--gpus", "1024", "--model", "GPT-3-175B", "--top", "2", "--explain",
            "--against", "tp8 pp8 dp16 mb1")
    assert py.to_dict() == c
    assert c["against"]["strategy"]["pp"] == 8 and c["against"]["vs_best_pct"] >= 0
    assert len(c["explain"]["other_shapes"]) == 3
    with pytest.raises(railsim.InputError) as e:
        railsim.plan(gpus=1024, model="GPT-3-175B", against="tp8 warp9")
    assert str(e.value).startswith("against:")


def test_compare_of_a_job_with_the_users_plan_and_days_equals_cli():
    """compare's job on part of a cluster, the user's plan on each design and the days to train,
    from Python: the CLI's rows."""
    kw = dict(gpu="GB200", gpus=2304, hb_domain=72, nic_gbps=800, job_gpus=2232,
              model="GPT-3-175B", batch=1116, train_tokens=1e11, against="tp8 pp9 dp31")
    py = railsim.compare(**kw)
    c = cli("compare", "--gpu", "GB200", "--gpus", "2304", "--hb-domain", "72", "--nic-gbps",
            "800", "--job-gpus", "2232", "--model", "GPT-3-175B", "--batch", "1116",
            "--train-tokens", "100000000000", "--against", "tp8 pp9 dp31")
    assert py.to_dict() == c
    rows = c["designs"]
    assert all(r["job_gpus"] == 2232 and r["train_days"] > 0 for r in rows)
    assert all(r["against_iteration_time_s"] >= r["best_iteration_time_s"] for r in rows
               if r["against_why"] and "does not fit" not in r["against_why"])
    with pytest.raises(railsim.InputError) as e:
        railsim.compare(gpu="GB200", gpus=2304, hb_domain=72, job_gpus=2300)
    assert str(e.value).startswith("job_gpus:")


def test_version_is_the_clis():
    r = cli_run("--version")
    assert r.returncode == 0 and r.stdout.strip() == "railsim " + railsim.__version__


def test_sim_default_tolerance_and_exact_state_themselves():
    """The simulator's default batch tolerance and --exact, from Python as from the CLI: each
    document states what it ran at, and the two completion times differ by less than the bound."""
    kw = dict(gpus=256, collective="all_to_all", bytes="64MB", skew="zipf:1.2", experts=256)
    fast = railsim.sim(**kw)
    exact = railsim.sim(exact=True, **kw)
    assert fast.to_dict() == cli("sim", "--gpus", "256", "--collective", "all_to_all", "--bytes",
                                 "64MB", "--skew", "zipf:1.2", "--experts", "256")
    assert fast.batching["tolerance"] == 1e-4 and not fast.batching["exact"]
    assert exact.batching["exact"]
    assert abs(fast.completion_time_s / exact.completion_time_s - 1) <= \
        fast.batching["error_bound"]


def test_design_export_names_nodes_as_sim(tmp_path):
    """design's DOT from Python: labelled nodes with the simulator's names, one cluster per HB
    domain."""
    dot = str(tmp_path / "f.dot")
    railsim.design(gpus=64, hb_domain=8, export=["dot", dot])
    with open(dot, encoding="utf-8") as f:
        text = f.read()
    assert text.count("subgraph cluster_hb") == 8
    assert '"gpu0"' in text and "rank=same" in text and "label=" in text


def test_optimize_days_to_train_equals_cli():
    py = railsim.optimize(gpus=1024, model=["GPT-3-175B"], hb_domain="8", within=10,
                          train_tokens=1e11)
    c = cli("optimize", "--gpus", "1024", "--model", "GPT-3-175B", "--hb-domain", "8", "--within",
            "10", "--train-tokens", "100000000000")
    assert py.to_dict() == c
    assert all(r["GPT-3-175B_train_days"] > 0 for r in c["frontier"])


def test_long_calls_release_the_gil():
    # Two threads planning at once both finish with the same answer as one alone; with the GIL
    # held they would still be correct, so the check is that results agree and nothing hangs.
    out = [None, None]

    def run(i):
        out[i] = railsim.estimate(gpus=4096, model="GPT-1T", tp=8, pp=16).iteration_time_s

    ts = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(60)
    assert out[0] == out[1] == railsim.estimate(gpus=4096, model="GPT-1T", tp=8,
                                                pp=16).iteration_time_s


# --- Calculon files --------------------------------------------------------------------------

def test_calculon_model_times_as_the_preset():
    preset = cli("estimate", "--gpus", "512", "--gpu", "A100-SXM-80GB", "--model", "Megatron-1T",
                 "--tp", "8", "--pp", "64", "--batch", "512", "--stack", "megatron-lm-2022")
    run = cli_run("estimate", "--gpus", "512", "--gpu", "A100-SXM-80GB", "--model", CALC_1T,
                  "--tp", "8", "--pp", "64", "--batch", "512", "--stack", "megatron-lm-2022",
                  "--json")
    assert run.returncode == 0, run.stderr
    calc = json.loads(run.stdout)
    assert calc["model"] == "megatron-1T"
    del calc["model"], preset["model"]
    assert calc == preset
    # One warning line on stderr naming what was assumed.
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("railsim: warning: --model: ")
    assert "Calculon application file" in lines[0] and "vocab 51200" in lines[0]


def test_calculon_system_names_unmapped_fields_and_python_agrees():
    run = cli_run("plan", "--gpu", CALC_A100, "--gpus", "512", "--model", "Megatron-1T",
                  "--batch", "512", "--top", "1", "--json")
    assert run.returncode == 0, run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1
    for field in ("--gpu: ", "vector", "mem2", "processing_mode", "networks[0].ops"):
        assert field in lines[0], field
    c = json.loads(run.stdout)
    assert c["gpu"] == "a100-sxm-80gb" and c["hb_domain"] == 8
    py = railsim.plan(gpu=CALC_A100, gpus=512, model="Megatron-1T", batch=512, top=1)
    assert py.to_dict() == c
    est = railsim.estimate(gpu=CALC_A100, gpus=512, model=CALC_1T, batch=512, tp=8, pp=64)
    assert est.gpu == "a100-sxm-80gb" and est.model == "megatron-1T"


def test_calculon_bad_file_names_the_field(tmp_path):
    bad = tmp_path / "m.json"
    bad.write_text(json.dumps({"hidden": 25600, "feedforward": 102400, "seq_size": 2048,
                               "attn_heads": 160, "attn_size": 100, "num_blocks": 128}))
    with pytest.raises(railsim.InputError) as e:
        railsim.estimate(model=str(bad), gpus=1024)
    assert "model.attn_size" in str(e.value)
    run = cli_run("estimate", "--model", str(bad), "--gpus", "1024")
    assert run.returncode == 2 and "model.attn_size" in run.stderr


# --- bad input -------------------------------------------------------------------------------

@pytest.mark.parametrize("call, field", [
    (lambda: railsim.estimate(gpus="many"), "gpus"),
    (lambda: railsim.estimate(gpus=True), "gpus"),
    (lambda: railsim.estimate(gpuz=8), "gpuz"),
    (lambda: railsim.estimate(gpus=-8), "gpus"),
    (lambda: railsim.estimate(model="no-such-model"), "model"),
    (lambda: railsim.estimate(gpus=1024, tp=-2), "tp"),
    (lambda: railsim.estimate(gpus=1024, sp="on"), "sp"),
    (lambda: railsim.estimate(gpus=1024, batch=0), "batch"),
    (lambda: railsim.estimate(gpus=1024, hb_GBps=float("nan")), "hb_GBps"),
    (lambda: railsim.sim(gpus=64, bytes=-5), "bytes"),
    (lambda: railsim.sim(gpus=64, bytes="lots"), "bytes"),
    (lambda: railsim.sim(gpus=64, group="everyone"), "group"),
    (lambda: railsim.sim(gpus=64, chunks=0), "chunks"),
    (lambda: railsim.sim(gpus=64, tp=8), "tp"),  # strategy without schedule=True
    (lambda: railsim.sim(gpus=64, collective=3), "collective"),
    (lambda: railsim.sweep(gpus=[1024, "x"]), "gpus"),
    (lambda: railsim.sweep(gpus={"a": 1}), "gpus"),
    (lambda: railsim.sweep(gpus=1024, model="nope"), "model"),
    (lambda: railsim.sweep(gpus=1024, max_points=0), "max_points"),
    (lambda: railsim.sweep(gpus=[10**30]), "gpus"),
    (lambda: railsim.estimate(gpus=10**30), "gpus"),
    (lambda: railsim.estimate(gpus=1024, hb_GBps=1e400), "hb_GBps"),
    (lambda: railsim.fail_goodput(gpus=1024, days=-1.0), "days"),
    (lambda: railsim.fail_goodput(gpus=1024, trials=0), "trials"),
    (lambda: railsim.fail_goodput(gpus=1024, rates="nope"), "rates"),
    (lambda: railsim.fail_goodput(gpus=1024, tokens=1e12), "tokens_per_s"),
    (lambda: railsim.fail_goodput(gpus=1024, pxn="auto"), "pxn"),
    (lambda: railsim.fail_goodput(gpus=1024, tp=8), "tp"),
    (lambda: railsim.design(gpus=0), "gpus"),
    (lambda: railsim.plan(gpus=-8), "gpus"),
    (lambda: railsim.presets("bogus"), "kind"),
    (lambda: railsim.presets(None), "kind"),
    (lambda: railsim.optimize(gpus=0, within=1), "gpus"),
    (lambda: railsim.optimize(gpus=1024, within=1e308), "within"),
    (lambda: railsim.optimize(gpus=1024, within=1, switch=[]), "switch"),
    (lambda: railsim.optimize(gpus=1024, within=1, model=[]), "model"),
    (lambda: railsim.whatif(gpus=1024, fail=["nic:0"], design=[]), "design"),
])
def test_bad_input_raises_input_error_naming_the_field(call, field):
    with pytest.raises(railsim.InputError) as e:
        call()
    msg = str(e.value)
    assert msg.startswith(field + ":"), msg
    assert "--" not in msg, msg  # options are named as keyword arguments, never as CLI flags
    assert "\n" not in msg
    assert isinstance(e.value, ValueError) and isinstance(e.value, TypeError)


def test_design_and_plan_take_every_network_and_strategy_option():
    py = railsim.design(gpus=4096, design="rail_only", switch_counting="ports",
                        oversubscription=2.0, copper_gpu_leaf=True)
    assert py.to_dict() == cli("design", "--gpus", "4096", "--design", "rail_only",
                               "--switch-counting", "ports", "--oversubscription", "2",
                               "--copper-gpu-leaf")
    py = railsim.plan(gpus=1024, model="Megatron-22B", batch=256, sp=False, recompute="full",
                      placement="tp_across_domains", top=2, threads=1)
    assert py.to_dict() == cli("plan", "--gpus", "1024", "--model", "Megatron-22B", "--batch",
                               "256", "--sp", "off", "--recompute", "full", "--placement",
                               "tp_across_domains", "--top", "2", "--threads", "1")
    assert all(p.strategy.recompute == "full" and not p.strategy.sp for p in py.plans)


@pytest.mark.parametrize("call, field", [
    (lambda: railsim.design(gpus="many"), "gpus"),
    (lambda: railsim.design(gpus=1024, catalog="nope"), "catalog"),
    (lambda: railsim.design(gpus=1024, oversubscription="2"), "oversubscription"),
    (lambda: railsim.plan(gpus=1024, top=0), "top"),
    (lambda: railsim.plan(gpus=1024, threads=-1), "threads"),
    (lambda: railsim.plan(gpus=1024, modle="GPT-1T"), "modle"),
])
def test_design_and_plan_bad_input(call, field):
    with pytest.raises(railsim.InputError) as e:
        call()
    assert (field + ":") in str(e.value), str(e.value)
