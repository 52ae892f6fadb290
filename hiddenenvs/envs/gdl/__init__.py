"""GDL and GDL-II rule sheets as games: reader, validation, grounding, propnet, game.

See :mod:`hiddenenvs.envs.gdl.parser` for the term representation and error classes.
"""

from hiddenenvs.envs.gdl.parser import (
    GdlError,
    GdlGroundingLimitError,
    GdlPlayError,
    GdlRecursionError,
    GdlRuleError,
    GdlSafetyError,
    GdlStratificationError,
    GdlSyntaxError,
    RuleSheet,
    error_line,
    parse_file,
    parse_text,
)

__all__ = [
    "GdlError",
    "GdlGroundingLimitError",
    "GdlPlayError",
    "GdlRecursionError",
    "GdlRuleError",
    "GdlSafetyError",
    "GdlStratificationError",
    "GdlSyntaxError",
    "RuleSheet",
    "error_line",
    "parse_file",
    "parse_text",
]
