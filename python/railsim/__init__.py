"""railsim from Python: rail-only vs rail-optimized networks for LLM training clusters.

Each function takes the command line's inputs as keyword arguments (``gpus=1024``,
``hb_domain=8``, ``model="GPT-1T"``, ...) and returns the document that ``railsim <command>
--json`` prints, as a :class:`Result`: a dict whose keys are the JSON field names, also readable
as attributes. Bad input raises :class:`InputError` (a ``ValueError``) with the CLI's one-line
message, naming the field as the keyword argument that carries it (``hb_domain``, where the CLI
says ``--hb-domain``); it is also a ``TypeError``, raised as well for an argument of the
wrong type or an unknown argument name.
The GIL is released while the library computes, so threads may call these concurrently; Ctrl-C
(SIGINT) stops a call within a fraction of a second and raises ``KeyboardInterrupt``. Errors are
one line of at most 2,000 bytes, with control characters escaped.

``--model`` and ``--gpu`` values, here as on the command line, may be Calculon application and
system files (docs/calculon.md).
"""
import json as _json

from . import _railsim
from ._railsim import InputError



class Result(dict):
    """A JSON object from the library: a dict, with its keys also readable as attributes."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError as e:
            raise AttributeError(name) from e

    def to_dict(self):
        """A plain dict (nested objects plain too), the same as the CLI's --json."""
        return _json.loads(_json.dumps(self))


def _wrap(text):
    return _json.loads(text, object_hook=Result)


# Every command of the library's table has a function here, made from its table: the keyword
# arguments are the command's options (``--hb-domain`` is ``hb_domain``, ``--no-perf`` is
# ``no_perf``; on/off options and flags are booleans; a list written with commas on the command
# line may be a Python list), and the result is the JSON document ``--json`` prints. The functions
# below whose results differ (traffic's arrays, sweep's rows, presets' names) wrap that.
_COMMANDS = {c["python"]: c for c in _railsim.commands()}


def _doc(c):
    keys = ", ".join(f["key"] for f in c["fields"] if f["key"] != c["sets"])
    return "{} (``railsim {}``). Keyword arguments: {}.".format(c["summary"], c["path"], keys)


def _make(c):
    path = c["path"]

    def command(**kwargs):
        out = _railsim.run(path, **kwargs)
        return _wrap(out) if c["sets"] == "json" else None

    command.__name__ = c["python"]
    command.__qualname__ = c["python"]
    command.__doc__ = _doc(c)
    return command


for _c in _COMMANDS.values():
    globals()[_c["python"]] = _make(_c)


def presets(kind="all", name=None):
    """The shipped presets (``railsim presets``): the names of one kind (gpus, switches,
    catalogs, models, stacks, failures), or with ``name`` that preset's JSON as a dict; ``kind``
    "all" gives every kind's names as a dict."""
    if kind is None:
        raise InputError("kind: required: one of " + ", ".join(_PRESET_KINDS))
    doc = _wrap(_railsim.run("presets", kind=kind, name=name))
    return doc if name is not None or kind == "all" else doc[kind]


_PRESET_KINDS = [c for c in next(f for f in _COMMANDS["presets"]["fields"]
                                 if f["key"] == "kind")["choices"] if c != "all"]

if "design" not in _COMMANDS:
    def design(**kwargs):
        """One network design over one cluster: bill of materials, cost, power (``railsim design``)."""
        return _wrap(_railsim.design(**kwargs))


if "plan" not in _COMMANDS:
    def plan(**kwargs):
        """The fastest parallelization strategies on one network (``railsim plan``)."""
        return _wrap(_railsim.plan(**kwargs))


if "traffic" not in _COMMANDS:
    def traffic(**kwargs):
        """The bytes of one iteration between GPUs (``railsim traffic``): the document ``--json``
        prints (the same keys and values, ranks placed rail-aligned) and every pair with traffic as
        NumPy arrays: ``pair_src``, ``pair_dst`` and ``pair_bytes`` (one row per pair, columns tp,
        sp, pp, dp, ep), sparse COO triplets for any cluster size.
        With tp, pp, dp or ep given the strategy is that one; otherwise the best plan's."""
        out = _railsim.traffic(**kwargs)
        r = _wrap(out["summary"])
        r["pair_src"], r["pair_dst"], r["pair_bytes"] = out["src"], out["dst"], out["bytes"]
        return r


if "whatif" not in _COMMANDS:
    def whatif(**kwargs):
        """What a set of failed components does on each design (``railsim fail whatif``)."""
        return _wrap(_railsim.whatif(**kwargs))


if "optimize" not in _COMMANDS:
    def optimize(**kwargs):
        """The cheapest network that trains the models fast enough (``railsim optimize``)."""
        return _wrap(_railsim.optimize(**kwargs))


if "estimate" not in _COMMANDS:
    def estimate(**kwargs):
        """Iteration time, memory and MFU of one strategy (``railsim estimate --json``). Arguments:
        the cluster (gpu, gpus, hb_domain, nic_gbps, hb_GBps, nics_per_gpu), the network (design,
        switch, oversubscription, oversubscribed_tier, copper_gpu_leaf, management_links) and the
        strategy (model, batch, seq, stack, dtype, flash_attention, tp, pp, dp, ep, micro_batch,
        interleave, recompute, sp, dist_opt, dp_overlap, placement); on/off options are booleans."""
        return _wrap(_railsim.estimate(**kwargs))


if "sim" not in _COMMANDS:
    def sim(**kwargs):
        """Flow-level simulation (``railsim sim --json``): one collective (collective, algorithm,
        group, bytes as a number or "512MB", forwarding, forward_via, chunks, hop_latency_us,
        aggregate, max_flows, top, batch_tolerance, routing, seed, efficiency), or with
        ``schedule=True`` every collective of one iteration of the strategy arguments of
        :func:`estimate`. Cluster and network arguments as :func:`estimate`'s."""
        return _wrap(_railsim.sim(**kwargs))


if "sweep" not in _COMMANDS:
    def sweep(**kwargs):
        """A parameter study (``railsim sweep --json``): the rows, a list of dicts, one per point
        and design. Swept arguments (gpus, gpu, hb_domain, nic_gbps, hb_GBps, nics_per_gpu, switch,
        catalog, oversubscription, model, batch, seq) take a list (``[8, 16, 32]``), one value, or
        the CLI's text (``"200:800:200"``, ``"1024..8192x2"``); also study, stack, dtype,
        flash_attention, switch_counting, zip, perf (False: cost only), max_points, threads,
        alltoall, forwarding."""
        return _wrap(_railsim.sweep(**kwargs))


if "fail_goodput" not in _COMMANDS:
    def fail_goodput(**kwargs):
        """Goodput of a long run under failures per design (``railsim fail goodput --json``):
        design ("both"), switch, rates, days, trials, seed, threads, checkpoint_interval_min,
        checkpoint_write_s, detect_min, restart_min, repair_h, spare_domains, gpus_per_host,
        comm_fraction, degraded_slowdown, degraded, tokens, tokens_per_s, catalog, amortize_years;
        with model (and the strategy arguments of :func:`estimate`, pxn) the network failures'
        effects come from the Fabric."""
        return _wrap(_railsim.fail_goodput(**kwargs))


__all__ = ["InputError", "Result", "presets", "commands"] + sorted(
    set(_COMMANDS) | {"design", "plan", "estimate", "sim", "sweep", "traffic", "whatif", "optimize",
                      "fail_goodput"} - {"presets"})


def commands():
    """Every command: its ``path`` on the command line, ``python`` function name, ``summary`` and
    ``fields`` (key, flag, type, default, help, choices)."""
    return [dict(c) for c in _railsim.commands()]
