"""The one registry mechanism: a read-only mapping of names to things of one kind.

Every table that maps a name a user types to a thing is a :class:`Registry`: the games
(:data:`hiddenenvs.registry.REGISTRY`), the vector kernels
(:data:`hiddenenvs.vector.VECTOR_GAMES`), the trainers (:data:`agents.catalogue.TRAINERS`),
the agent specs (:data:`agents.search.SPEC_BUILDERS`) and the saveable agent classes
(:data:`agents.checkpoint.AGENT_CLASSES`). They share one set of rules:

- :meth:`Registry.register` adds a thing, called directly or as a decorator. A name is
  taken once: registering a different thing under it raises ``ValueError`` naming both.
  The same thing again is accepted: the same object, an equal value, or a class or
  function of the same module-qualified name (its module was reloaded).
- A thing registered as a string ``"module:attribute"`` is lazy: the module is imported
  the first time the name is looked up, so a registry of trainers does not import torch
  until a trainer is asked for.
- ``plugin_modules`` are modules whose import registers more names (a module that
  decorates its builders); they are imported the first time a lookup misses, or when the
  whole registry is listed.
- An unknown name raises :class:`UnknownNameError` (both a ``KeyError`` and a
  ``ValueError``): ``unknown <kind> 'x'; registered <kind>s: a, b, c``.
- ``track_ambiguity=True`` turns a conflict into a recorded ambiguity instead of an error
  (two agent classes of one name in different modules are both legal Python): registering
  succeeds, and looking the name up raises :class:`AmbiguousNameError` naming both.

>>> shapes = Registry("shape", {"square": "builtins:len"})
>>> @shapes.register("circle")
... def circle(radius):
...     return 3.14159 * radius**2
>>> shapes.names()
['circle', 'square']
>>> shapes["square"]([1, 2])  # imported on this lookup
2
>>> try:
...     shapes["triangle"]
... except KeyError as error:
...     print(error)
unknown shape 'triangle'; registered shapes: circle, square
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, TypeVar, overload

Thing = TypeVar("Thing")


class UnknownNameError(KeyError, ValueError):
    """A name no one registered: a ``KeyError`` (the mapping's contract) and a
    ``ValueError`` (a bad input, which is how callers report it)."""

    def __str__(self) -> str:  # KeyError's own would quote the whole message
        return str(self.args[0])


class AmbiguousNameError(ValueError):
    """A name under which different things were registered (``track_ambiguity=True``)."""


def _plural(kind: str) -> str:
    return kind + ("es" if kind.endswith(("s", "x", "ch", "sh")) else "s")


def origin(thing: Any) -> str | None:
    """``"module:qualified.name"`` of a class or function (None for other values): where
    it is defined, which survives a reload of its module."""
    module, qualname = getattr(thing, "__module__", None), getattr(thing, "__qualname__", None)
    if isinstance(module, str) and isinstance(qualname, str):
        return f"{module}:{qualname}"
    return None


def _import_target(target: str) -> Any:
    module_name, _, attribute = target.partition(":")
    module = importlib.import_module(module_name)
    try:
        return getattr(module, attribute)
    except AttributeError:
        raise ImportError(f"{target!r}: module {module_name!r} has no {attribute!r}") from None


class Registry(Mapping[str, Thing]):
    """Names to things of one ``kind`` (see the module docstring for the rules).

    ``entries`` are registered first, in order; ``plugin_modules`` are imported on the first
    miss; ``track_ambiguity`` records a name taken by two different things instead of
    refusing the second.
    """

    def __init__(
        self,
        kind: str,
        entries: Mapping[str, Thing | str] | None = None,
        *,
        plugin_modules: Iterable[str] = (),
        track_ambiguity: bool = False,
    ):
        self.kind = kind
        self.plugin_modules = tuple(plugin_modules)
        self.track_ambiguity = track_ambiguity
        # name -> the thing, or its "module:attribute" until the first lookup imports it
        self._entries: dict[str, Any] = {}
        self._lazy_targets: dict[str, str] = {}  # names registered lazily -> "module:attribute"
        self._ambiguous: dict[str, set[str]] = {}  # name -> the origins registered under it
        self._plugins_imported = not self.plugin_modules
        self._importing_plugins = False
        for name, thing in (entries or {}).items():
            self.register(name, thing)

    # ---- registering ----------------------------------------------------------------------
    @overload
    def register(self, name: str) -> Callable[[Thing], Thing]: ...

    @overload
    def register(self, name: str, thing: Thing | str) -> Thing | str: ...

    def register(self, name: str, thing: Any = None) -> Any:
        """Register ``thing`` (an object, or ``"module:attribute"`` imported on lookup)
        under ``name`` and return it; without ``thing``, a decorator that does so."""
        if thing is None:

            def decorate(decorated: Thing) -> Thing:
                self.register(name, decorated)
                return decorated

            return decorate
        if not isinstance(name, str) or not name:
            raise ValueError(f"a {self.kind} name must be a non-empty string, got {name!r}")
        if isinstance(thing, str):
            module_name, separator, attribute = thing.partition(":")
            if not (module_name and separator and attribute) or ":" in attribute:
                raise ValueError(
                    f"{self.kind} {name!r}: a lazy entry is 'module:attribute', got {thing!r}"
                )
        if name in self._entries:
            known = self._lazy_targets.get(name, self._entries[name])
            if not _same(known, thing):
                if not self.track_ambiguity:
                    raise ValueError(
                        f"{self.kind} {name!r} is already registered as {_describe(known)}; "
                        f"cannot register {_describe(thing)} under the same name"
                    )
                self._ambiguous.setdefault(name, {_describe(known)}).add(_describe(thing))
        self._entries[name] = thing  # the same thing again: the newest object (a reload's)
        if isinstance(thing, str):
            self._lazy_targets[name] = thing
        else:
            self._lazy_targets.pop(name, None)
        return thing

    # ---- looking up -----------------------------------------------------------------------
    def __getitem__(self, name: str) -> Thing:
        if name not in self._entries:
            self._import_plugins()
            if name not in self._entries:
                raise UnknownNameError(
                    f"unknown {self.kind} {name!r}; registered {_plural(self.kind)}: "
                    f"{', '.join(self.names())}"
                )
        if name in self._ambiguous:
            raise AmbiguousNameError(
                f"{self.kind} {name!r} is ambiguous ({', '.join(self.ambiguous_origins(name))})"
            )
        thing = self._entries[name]
        if isinstance(thing, str):  # a lazy entry's first lookup
            thing = self._entries[name] = _import_target(thing)
        return thing

    def __contains__(self, name: object) -> bool:
        if name not in self._entries:
            self._import_plugins()
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        self._import_plugins()
        return iter(list(self._entries))  # registration order; names() sorts

    def __len__(self) -> int:
        self._import_plugins()
        return len(self._entries)

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}: {', '.join(self._entries)})"

    def names(self) -> list[str]:
        """Every registered name, sorted."""
        return sorted(self)

    def target(self, name: str) -> str:
        """Where ``name``'s thing is defined, as ``"module:attribute"``: a lazy entry's
        string as registered (nothing is imported), else the class's or function's origin."""
        if name in self._lazy_targets:
            return self._lazy_targets[name]
        found = origin(self[name])
        if found is None:
            raise ValueError(f"{self.kind} {name!r} is a value, not a class or function")
        return found

    def ambiguous_origins(self, name: str) -> list[str]:
        """The different things registered under ``name``, sorted (empty unless ambiguous)."""
        return sorted(self._ambiguous.get(name, ()))

    def _import_plugins(self) -> None:
        if self._plugins_imported or self._importing_plugins:
            return  # a plugin module's own import may look a name up: no recursion
        self._importing_plugins = True
        try:
            for module in self.plugin_modules:
                importlib.import_module(module)
            self._plugins_imported = True
        finally:
            self._importing_plugins = False


def _describe(thing: Any) -> str:
    return thing if isinstance(thing, str) else origin(thing) or repr(thing)


def _same(known: Any, thing: Any) -> bool:
    """Whether registering ``thing`` over ``known`` registers the same thing again."""
    if isinstance(known, str) and isinstance(thing, str):
        return known == thing
    if isinstance(known, str):  # a lazy entry against an object: compare what it names
        known = _import_target(known)
    elif isinstance(thing, str):
        thing = _import_target(thing)
    if known is thing or (origin(known) is not None and origin(known) == origin(thing)):
        return True
    try:
        return bool(known == thing)  # an equal value (a dataclass entry made again)
    except Exception:  # a value whose == is not a truth value (an array): not the same
        return False
