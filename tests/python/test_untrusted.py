"""The Python module with untrusted input and Ctrl-C: the CLI's checks, a KeyboardInterrupt that
stops the C++ work, and errors that stay one bounded line."""
import os
import signal
import subprocess
import sys
import textwrap

import pytest

import railsim


@pytest.mark.parametrize("call, field", [
    (lambda: railsim.design(gpu="\udc80"), "gpu"),
    (lambda: railsim.design(**{"x\udc80": 1}), "argument name"),
    (lambda: railsim.presets("\udc80"), "kind"),
    (lambda: railsim.sweep(gpus=["64", "\udcff"]), "gpus"),
])
def test_a_lone_surrogate_is_an_input_error_naming_the_argument(call, field):
    # What os.fsdecode makes of bytes that are not UTF-8: not encodable, so not a name.
    with pytest.raises(railsim.InputError) as e:
        call()
    assert str(e.value).startswith(field + ": is not valid Unicode text")


def test_errors_are_one_line_of_at_most_2000_bytes():
    with pytest.raises(railsim.InputError) as e:
        railsim.design(gpu="x" * 100_000)
    text = str(e.value)
    assert "\n" not in text
    assert len(text.encode()) <= 2003  # 2,000 and the "..." of the cut
    with pytest.raises(railsim.InputError) as e:
        railsim.design(gpu="a\nb\x1b[2J")
    assert "\n" not in str(e.value) and "\x1b" not in str(e.value)
    assert "'a\\nb\\x1b[2J'" in str(e.value)


def test_the_cli_checks_apply(tmp_path):
    with pytest.raises(railsim.InputError, match="checkpoint_interval|checkpoint-interval"):
        railsim.fail_goodput(gpus=1024, checkpoint_interval_min=1e-300)
    with pytest.raises(railsim.InputError, match="threads"):
        railsim.sweep(gpus=1024, threads=5000)
    model = tmp_path / "evil.json"
    model.write_text('{"name": "M\\u001b]0;x\\u0007", "layers": 4, "hidden": 1024, "heads": 16,'
                     ' "ffn_hidden": 4096, "vocab": 32000, "seq_len": 2048}')
    with pytest.raises(railsim.InputError, match="model.name: .* holds U\\+001B"):
        railsim.estimate(gpus=64, batch=64, tp=8, pp=1, dp=8, model=str(model))


def test_ctrl_c_stops_a_long_call_with_keyboard_interrupt():
    # A child interpreter sends itself SIGINT (as a terminal's Ctrl-C does) one second into a
    # Monte Carlo of minutes: the C++ work stops, KeyboardInterrupt is raised in the calling thread, and
    # the module works again afterwards. The subprocess timeout only bounds a hang.
    script = textwrap.dedent("""
        import os, signal, threading, time
        import railsim
        signal.signal(signal.SIGINT, signal.default_int_handler)
        threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
        try:
            railsim.fail_goodput(trials=1400000)
            print("finished")
        except KeyboardInterrupt:
            print("KeyboardInterrupt")
        print(railsim.design(gpus=1024, design="rail_only").switches.total)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=120, env=os.environ)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["KeyboardInterrupt", "8"], out.stdout + out.stderr
