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
system files (docs/calculon.md). Every command of the CLI but ``completion`` (a shell feature)
has a function here, made from the command's table; :func:`commands` lists them with their
options.
"""
import json as _json

from . import _railsim
from ._railsim import InputError, __version__


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

def traffic(**kwargs):
    """The bytes of one iteration between GPUs (``railsim traffic``): the document ``--json``
    prints and every pair with traffic as NumPy arrays: ``pair_src``, ``pair_dst`` and
    ``pair_bytes`` (one row per pair, columns tp, sp, pp, dp, ep), sparse COO triplets for any
    cluster size. With tp, pp, dp or ep given the strategy is that one; otherwise the best
    plan's."""
    out = _railsim.traffic(**kwargs)
    r = _wrap(out["summary"])
    r["pair_src"], r["pair_dst"], r["pair_bytes"] = out["src"], out["dst"], out["bytes"]
    return r


traffic.__doc__ += " " + _doc(_COMMANDS["traffic"]).split(" Keyword", 1)[1]


def sweep(**kwargs):
    """A parameter study (``railsim sweep --json``): the rows, a list of dicts, one per point and
    design. A swept option takes a list (``hb_domain=[8, 16, 32]``), one value, or the CLI's text
    (``"200:800:200"``, ``"1024..8192x2"``)."""
    return _wrap(_railsim.run("sweep", **kwargs))["rows"]


sweep.__doc__ += " " + _doc(_COMMANDS["sweep"]).split(" Keyword", 1)[1]


__all__ = ["InputError", "Result", "commands"] + sorted(_COMMANDS)


def commands():
    """Every command: its ``path`` on the command line, ``python`` function name, ``summary`` and
    ``fields`` (key, flag, type, default, help, choices)."""
    return [dict(c) for c in _railsim.commands()]
