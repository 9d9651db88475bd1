"""railsim from Python: rail-only vs rail-optimized networks for LLM training clusters.

Each function takes the command line's inputs as keyword arguments (``gpus=1024``,
``hb_domain=8``, ``model="GPT-1T"``, ...) and returns the document that ``railsim <command>
--json`` prints, as a :class:`Result`: a dict whose keys are the JSON field names, also readable
as attributes. Bad input raises :class:`InputError` (a ``ValueError``) with the CLI's one-line
message, naming the field.
"""
import json as _json

from . import _railsim
from ._railsim import InputError, presets

__all__ = ["InputError", "Result", "presets", "design", "plan", "traffic", "whatif", "optimize"]


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


def design(**kwargs):
    """One network design over one cluster: bill of materials, cost, power (``railsim design``)."""
    return _wrap(_railsim.design(**kwargs))


def plan(**kwargs):
    """The fastest parallelization strategies on one network (``railsim plan``)."""
    return _wrap(_railsim.plan(**kwargs))


def traffic(**kwargs):
    """The bytes of one iteration between GPUs (``railsim traffic``): the summary (``--json``'s
    summary fields, the same keys) and every pair with traffic as NumPy arrays: ``pair_src``,
    ``pair_dst`` and ``pair_bytes`` (one row per pair, columns tp, sp, pp, dp, ep), sparse COO
    triplets for any cluster size.
    With tp, pp or dp given the strategy is that one; otherwise the best plan's."""
    out = _railsim.traffic(**kwargs)
    r = _wrap(out["summary"])
    r["pair_src"], r["pair_dst"], r["pair_bytes"] = out["src"], out["dst"], out["bytes"]
    return r


def whatif(**kwargs):
    """What a set of failed components does on each design (``railsim fail whatif``)."""
    return _wrap(_railsim.whatif(**kwargs))


def optimize(**kwargs):
    """The cheapest network that trains the models fast enough (``railsim optimize``)."""
    return _wrap(_railsim.optimize(**kwargs))
