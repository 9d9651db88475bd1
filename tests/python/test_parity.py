"""The CLI and Python are one command surface, checked from both ends.

The commands and options are read from the CLI's own --help, the Python side from the command
tables the module exposes (railsim.commands()) and from calling the functions: every CLI command
has a Python function, every CLI option is a keyword argument of it, and for inputs generated from
the tables (a valid one and, per field, an invalid one) the Python result equals the CLI's --json
document and a Python error equals the CLI's error, with the flag spelled as the keyword."""
import json
import os
import re
import subprocess

import pytest

import railsim

CLI = os.environ.get("RAILSIM_CLI", "railsim")
# A shell feature, not a computation: nothing for Python to call.
CLI_ONLY = {"completion"}


def run_cli(*args):
    return subprocess.run([CLI, *args], capture_output=True, text=True)


def cli_commands():
    """Command paths as the CLI's --help lists them ("fail whatif" under its group)."""
    def listed(*path):
        text = run_cli(*path, "--help").stdout
        section = text.split("Subcommands:", 1)
        if len(section) < 2:
            return []
        return [line.split()[0] for line in section[1].splitlines() if line.startswith("  ")]

    out = []
    for name in listed():
        subs = listed(name)
        out.extend(f"{name} {s}" for s in subs) if subs else out.append(name)
    return out


def cli_options(path):
    """The option flags and positional names of one command, from its --help."""
    text = run_cli(*path.split(), "--help").stdout
    flags = set(re.findall(r"^\s+(?:-h,)?(--[\w-]+)", text, re.M)) - {"--help"}
    positionals = re.findall(r"^Positionals:\n((?:  .*\n)+)", text, re.M)
    names = {line.split()[0] for block in positionals for line in block.splitlines()
             if re.match(r"  \w", line)}
    return flags | names


TABLES = {c["path"]: c for c in railsim.commands()}


def keyword(text):
    """An error or a flag as Python spells it: --hb-domain is hb_domain."""
    return re.sub(r"(^|[ ('])--(?!help\b)([A-Za-z][\w-]*)",
                  lambda m: m.group(1) + m.group(2).replace("-", "_"), text)


def test_every_cli_command_has_a_python_function_with_every_option():
    commands = cli_commands()
    assert "estimate" in commands and "fail goodput" in commands
    for path in commands:
        if path in CLI_ONLY:
            continue
        assert path in TABLES, f"railsim {path} has no command table"
        table = TABLES[path]
        assert callable(getattr(railsim, table["python"], None)), table["python"]
        keys = {f["key"] for f in table["fields"]}
        for option in cli_options(path):
            assert keyword(option) in keys, f"railsim {path} {option} has no keyword"
        # And each keyword is taken (a wrong type is an error naming it, not an unknown name).
        fn = getattr(railsim, table["python"])
        for key in keys - {table["sets"]}:
            with pytest.raises(railsim.InputError) as e:
                fn(**{key: object()})
            assert str(e.value).startswith(key + ":"), (path, key, str(e.value))


# A valid input per command: small, quick. Commands that write files or take minutes are run with
# invalid inputs only.
VALID = {
    "presets": {"kind": "models"},
    "design": {"gpus": 1024, "design": "rail_only"},
    "compare": {"gpus": 1024, "hb_domain": 8, "no_perf": True},
    "estimate": {"gpus": 1024, "model": "GPT-3-175B", "tp": 8, "pp": 8},
    "plan": {"gpus": 512, "model": "GPT-3-175B", "top": 2},
    "traffic": {"gpus": 256, "model": "GPT-3-175B", "tp": 8, "pp": 4},
    "sim": {"gpus": 256, "collective": "all_to_all", "bytes": "64MB"},
    "fail whatif": {"gpus": 1024, "model": "GPT-3-175B", "fail": "leaf:0"},
    "fail goodput": {"gpus": 1024, "trials": 20, "days": 5},
    "sweep": {"gpus": "512,1024", "no_perf": True},
    "optimize": {"gpus": 1024, "model": "GPT-3-175B", "hb_domain": "8", "within": 10},
    "validate": {},
}


def cli_args(table, kw):
    args = table["path"].split()
    fields = {f["key"]: f for f in table["fields"]}
    for key, value in kw.items():
        f = fields[key]
        if not f["flag"]:
            args.append(str(value))
        elif isinstance(value, bool):
            if f["type"] == "on|off":
                args += [f["flag"], "on" if value else "off"]
            elif value:
                args.append(f["flag"])
        elif isinstance(value, (list, tuple)):
            args += [f["flag"], *map(str, value)]
        else:
            args += [f["flag"], str(value)]
    if table["sets"]:
        args.append(fields[table["sets"]]["flag"])
    return args


def cli_error(table, kw):
    r = run_cli(*cli_args(table, kw))
    assert r.returncode == 2, (table["path"], kw, r.returncode, r.stderr)
    line = r.stderr.strip().splitlines()[-1]
    assert line.startswith("railsim: error: "), line
    return line[len("railsim: error: "):]


def python_error(table, kw):
    with pytest.raises(railsim.InputError) as e:
        getattr(railsim, table["python"])(**kw)
    return str(e.value)


def invalid_inputs(table):
    """Per field, a value the field's table says is wrong: below an integer's range, a name
    outside the choices, a number that cannot be read."""
    for f in table["fields"]:
        if f["key"] == table["sets"]:
            continue
        if f["type"] == "INT":
            yield f["key"], -1
        elif f["choices"]:
            yield f["key"], "bogus"
        elif f["type"] == "on|off":
            continue  # a bool cannot be wrong; the CLI's "maybe" has no Python spelling
        elif f["type"] == "FLOAT":
            yield f["key"], -1e300


@pytest.mark.parametrize("path", sorted(VALID))
def test_valid_input_gives_the_same_document(path):
    if path not in TABLES:
        pytest.skip(f"railsim {path} is not a table command")
    table = TABLES[path]
    kw = VALID[path]
    r = run_cli(*cli_args(table, kw))
    assert r.returncode == 0, r.stderr
    py = getattr(railsim, table["python"])(**kw)
    doc = json.loads(r.stdout)
    if path == "presets":
        doc = doc[kw["kind"]]
    if path == "sweep":
        doc = doc["rows"]
    if path == "traffic":
        py = {k: v for k, v in py.items() if k not in ("pair_src", "pair_dst", "pair_bytes")}
    assert json.loads(json.dumps(py)) == doc


@pytest.mark.parametrize("path", sorted(VALID))
def test_invalid_inputs_give_the_same_error(path):
    if path not in TABLES:
        pytest.skip(f"railsim {path} is not a table command")
    table = TABLES[path]
    checked = 0
    cases = list(invalid_inputs(table))
    for key, value in cases:
        kw = {k: v for k, v in VALID[path].items() if k != key}
        kw[key] = value
        r = run_cli(*cli_args(table, kw))
        if r.returncode == 0:
            continue  # a value this command accepts after all (a negative seed on a hash)
        cli = cli_error(table, kw)
        assert python_error(table, kw) == keyword(cli), (path, key)
        checked += 1
    assert checked > 0 or not cases
