"""``key=value`` parameters from a command line, each value read as YAML reads a scalar.

One parser for every command that takes game parameters (``--param`` of ``evaluate.py``,
``python -m agents.play`` and the examples; ``train.py``'s ``env.params.<key>=<value>``
overrides read their values the same way), so a value has the same type everywhere:

>>> parse_params(["imp_info=True", "num_cards=5", "rate=0.5", "lr=1e-3", "name=text"])
{'imp_info': True, 'num_cards': 5, 'rate': 0.5, 'lr': 0.001, 'name': 'text'}

``true``/``True``/``false`` are booleans, ``3`` an int, ``0.5`` and ``1e-3`` floats (the
latter YAML 1.2's, which PyYAML's YAML 1.1 reads as text), ``[1, 2]`` a list, anything
else text; quote a value to keep it text (``name='3'``).
"""

from __future__ import annotations

import re
from typing import Any

import yaml


class ValueLoader(yaml.SafeLoader):
    """PyYAML's safe loader with YAML 1.2's scientific notation (``1e-3``) as a float."""


ValueLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9][0-9_]*)[eE][-+]?[0-9]+$"),
    list("-+0123456789."),
)


def parse_value(text: str) -> Any:
    """``text`` as YAML reads it (see the module docstring); ValueError if it is not YAML."""
    try:
        return yaml.load(text, Loader=ValueLoader)  # noqa: S506 (a safe loader)
    except yaml.YAMLError as error:
        raise ValueError(f"{text!r} is not a YAML value: {error}") from None


def parse_params(pairs: list[str], option: str = "--param") -> dict[str, Any]:
    """``["key=value", ...]`` as a dict, values typed by :func:`parse_value`."""
    params = {}
    for pair in pairs:
        key, separator, value = pair.partition("=")
        if not separator or not key:
            raise ValueError(f"{option} {pair!r}: expected key=value, e.g. {option} num_cards=5")
        try:
            params[key] = parse_value(value)
        except ValueError as error:
            raise ValueError(f"{option} {pair!r}: {error}") from None
    return params
