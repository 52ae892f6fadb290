"""Data-only, atomic checkpoint and agent files; the registry of agent classes.

File format. Run checkpoints (``checkpoint.pt``) and agent files (``Agent.save``) are
``torch.save`` archives that hold *data only*: tensors, Python numbers, strings, ``None``,
and lists, tuples and dicts of those. They are read with ``torch.load(weights_only=True)``,
whose unpickler builds nothing else, so a file can never run code or name a class to
build; a file that tries (a pickled object, a class reference) is refused with
:class:`UnsafeFileError` and nothing in it runs. What training state holds beyond that is
converted on the way out and back by :func:`to_data` / :func:`from_data`:

==========================  ============================================================
In memory                   In the file
==========================  ============================================================
``torch.Tensor``            the tensor, in host memory (one on a GPU is copied to the CPU)
``numpy.ndarray``           ``{"__ndarray__": tensor, "dtype": "<f4"}``, bit for bit
numpy scalar                the Python number (``.item()``)
numpy generator state       already plain (nested dicts of ints and strings)
``np.random.get_state()``   a tuple whose key array is stored as above
dataclass instance          the dict of its fields (rebuilt by whoever reads it)
==========================  ============================================================

An agent file names its class by a *registered name* (:func:`register_agent_class`,
called for every ``Agent`` subclass when it is defined); loading looks that name up in
:data:`AGENT_CLASSES` (a :class:`hiddenenvs.registries.Registry` that records a name two
classes share as ambiguous), importing only the project's own agent modules
(:data:`PROJECT_AGENT_MODULES`), never a module the file names.

Atomic writes. A file is written to a temporary file in the target's directory, flushed
and fsynced, renamed over the target with ``os.replace`` (atomic on POSIX), and the
directory is fsynced so the rename itself survives a crash: a process killed at any
moment leaves either the previous file or the new one, never half a file.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import random
import signal
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import torch

from agents.catalogue import agent_modules
from hiddenenvs.files import atomic_write
from hiddenenvs.registries import AmbiguousNameError, Registry, UnknownNameError

NDARRAY_TAG = "__ndarray__"
ZIP_MAGIC = b"PK\x03\x04"  # the first bytes of a zip archive (a local file header)
# Imported (from this fixed list, never from a file) when a file names an agent class not
# yet registered: the modules that define the project's saveable agents (the baselines, the
# scripted bots, and those of the trainers' catalogue entries).
PROJECT_AGENT_MODULES = ("agents.baselines", "agents.scripted", *agent_modules())

# Agent class name -> class. Two classes of one name (in different modules) are both legal
# Python, so the name is recorded as ambiguous rather than refused: saving or loading it fails.
AGENT_CLASSES: Registry[type] = Registry(
    "agent class", plugin_modules=PROJECT_AGENT_MODULES, track_ambiguity=True
)


class UnsafeFileError(ValueError):
    """A checkpoint or agent file that is not data only (or not a torch file at all)."""


class CorruptedFileError(ValueError):
    """A checkpoint or agent file that is damaged: truncated, or its bytes changed after it
    was written (a member's CRC-32 does not match); nothing in it was run."""


# ---- the agent registry -------------------------------------------------------------------
def _agent_name(cls: type) -> str:
    return cls.__dict__.get("AGENT_NAME") or cls.__name__


def register_agent_class(cls: type) -> None:
    """Register ``cls`` under its name (``cls.AGENT_NAME`` if set, else ``cls.__name__``).

    Classes defined inside functions are not registered (they cannot be found again in
    another process). Two different classes under one name make the name ambiguous: saving
    or loading it then fails, naming both.
    """
    if "<locals>" not in cls.__qualname__:
        AGENT_CLASSES.register(_agent_name(cls), cls)


def registered_agent_name(cls: type) -> str:
    """The name an agent file stores for ``cls``; ValueError if it cannot be loaded back."""
    name = _agent_name(cls)
    ambiguous = AGENT_CLASSES.ambiguous_origins(name)
    if ambiguous or AGENT_CLASSES.get(name) is not cls:
        raise ValueError(
            f"cannot save a {cls.__qualname__}: agent files name a registered agent class, and "
            + (
                f"{name!r} is ambiguous ({', '.join(ambiguous)}); set AGENT_NAME"
                if ambiguous
                else "classes defined inside functions are not registered"
            )
        )
    return name


def agent_class_named(name: Any, path: str | Path) -> type:
    """The registered agent class ``name`` (from the file at ``path``)."""
    if not isinstance(name, str) or not name:
        raise UnsafeFileError(f"{path}: the agent class must be a registered name, got {name!r}")
    try:
        return AGENT_CLASSES[name]
    except AmbiguousNameError as error:
        raise UnsafeFileError(f"{path}: {error}") from None
    except UnknownNameError:
        raise UnsafeFileError(
            f"{path}: no registered agent class {name!r} (registered: "
            f"{', '.join(AGENT_CLASSES.names())}); import the module that defines it before loading"
        ) from None


# ---- data-only conversion -------------------------------------------------------------------
def to_data(value: Any, where: str = "payload") -> Any:
    """``value`` as tensors, numbers, strings, None, lists, tuples and dicts (module docstring)."""
    if isinstance(value, np.generic):  # before float: np.float64 is a float subclass
        return value.item()
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, torch.Tensor):  # a GPU's tensors are stored in host memory
        return value.cpu()
    if isinstance(value, np.ndarray):
        if value.dtype.hasobject or value.dtype.kind not in "biufc":
            raise TypeError(f"{where}: cannot store a numpy array of dtype {value.dtype} as data")
        native = np.ascontiguousarray(value, dtype=value.dtype.newbyteorder("="))
        return {NDARRAY_TAG: torch.from_numpy(native.copy()), "dtype": value.dtype.str}
    if isinstance(value, dict):
        return {
            to_data(key, where): to_data(item, f"{where}[{key!r}]") for key, item in value.items()
        }
    if isinstance(value, (list, tuple)):
        converted = [to_data(item, f"{where}[{k}]") for k, item in enumerate(value)]
        return converted if isinstance(value, list) else tuple(converted)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return to_data({f.name: getattr(value, f.name) for f in dataclasses.fields(value)}, where)
    raise TypeError(
        f"{where}: a {type(value).__qualname__} is not data; files hold tensors, numbers, strings, "
        f"None, lists, tuples and dicts (numpy arrays and dataclasses are converted)"
    )


def from_data(value: Any) -> Any:
    """Inverse of :func:`to_data` (dataclasses come back as dicts)."""
    if isinstance(value, dict):
        if NDARRAY_TAG in value:
            tensor, dtype = value[NDARRAY_TAG], np.dtype(value.get("dtype"))
            if not isinstance(tensor, torch.Tensor) or dtype.kind not in "biufc":
                raise ValueError(f"a malformed array entry (dtype {dtype})")
            return tensor.numpy().astype(dtype, copy=True)
        return {key: from_data(item) for key, item in value.items()}
    if isinstance(value, list):
        return [from_data(item) for item in value]
    if isinstance(value, tuple):
        return tuple(from_data(item) for item in value)
    return value


# ---- files --------------------------------------------------------------------------------------
class FileWriteError(OSError):
    """A checkpoint or agent file that could not be written (a full disk, a read-only
    directory, a path too long); the message names the file, the reason and whether the
    previous file there is intact. Nothing half-written is left behind."""

    def __str__(self) -> str:  # the message alone, without OSError's "[Errno 28]" prefix
        return str(self.strerror)


def atomic_torch_save(payload: Any, path: str | Path) -> None:
    """Write ``payload`` (converted by :func:`to_data`) atomically to ``path``.

    A failed write raises :class:`FileWriteError` in one line naming the cause (torch
    reports a full disk as ``RuntimeError: ... unexpected pos``, with the ``OSError``
    only in the exception's context); the previous file at ``path`` is left as it was."""
    data = to_data(payload)
    try:
        atomic_write(path, lambda handle: torch.save(data, handle))
    except (OSError, RuntimeError) as error:
        cause = _os_error_in_chain(error)
        if cause is None and not isinstance(error, OSError):
            raise  # not a failed write: torch refused the data itself
        raise FileWriteError(
            *_write_failure(Path(path), cause or error)  # type: ignore[arg-type]
        ) from None


def _os_error_in_chain(error: BaseException) -> OSError | None:
    """The first ``OSError`` among ``error``, its cause and its context."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        if isinstance(current, OSError):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


def _write_failure(path: Path, error: OSError) -> tuple[int, str]:
    """``(errno, one-line message)`` for a failed write of ``path``."""
    code = error.errno or 0
    reason = error.strerror or type(error).__name__
    name = errno.errorcode.get(code)
    shown = str(path)
    if len(shown) > 250:
        shown = shown[:120] + "..." + shown[-120:]
    try:
        kept = path.is_file()
    except OSError:  # the path itself is what failed (too long, a loop of links)
        kept = False
    previous = "the previous file there is intact" if kept else "nothing was written"
    return code, f"{shown}: not written: {reason}{f' ({name})' if name else ''}; {previous}"


def check_archive(path: str | Path) -> None:
    """Raise :class:`CorruptedFileError` naming ``path`` unless it is a whole zip archive
    whose members all match their CRC-32 (what ``torch.save`` writes; torch itself reads a
    changed member without noticing)."""
    try:
        with zipfile.ZipFile(path) as archive:
            damaged = archive.testzip()
    except zipfile.BadZipFile as error:
        raise CorruptedFileError(
            f"{path}: corrupted or truncated (not a whole torch archive: "
            f"{error}); nothing in it was run"
        ) from None
    except (OSError, EOFError, RuntimeError, ValueError) as error:  # a member's header damaged
        raise CorruptedFileError(
            f"{path}: corrupted or truncated ({type(error).__name__}: "
            f"{str(error)[:100]}); nothing in it was run"
        ) from None
    if damaged is not None:
        raise CorruptedFileError(
            f"{path}: corrupted (member {damaged[:60]!r} does not match its "
            f"header or CRC-32: the file changed after it was written); nothing "
            f"in it was run"
        )


def load_checkpoint(path: str | Path) -> Any:
    """The data in a file written by :func:`atomic_torch_save`; nothing in it runs.

    Raises :class:`CorruptedFileError` naming the file when it is truncated or its bytes
    changed (:func:`check_archive`), and :class:`UnsafeFileError` when it holds anything but
    data (a pickled object, a class reference); both are ``ValueError``.
    """
    try:
        with open(path, "rb") as handle:
            head = handle.read(len(ZIP_MAGIC))
        # torch.save writes zip archives: one cut short, or whose first bytes changed, is one too
        is_archive = head == ZIP_MAGIC[: len(head)] or zipfile.is_zipfile(path)
    except zipfile.BadZipFile:  # is_zipfile found an end record, a damaged one
        is_archive = True
    except OSError as error:
        raise UnsafeFileError(f"{path}: cannot read it ({error.strerror})") from None
    if is_archive:
        check_archive(path)
    try:
        data = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:  # noqa: BLE001 - weights_only runs nothing; any failure is the file's
        # (UnpicklingError, BadZipFile, EOFError, RuntimeError, IndexError, struct.error, ...)
        reason = str(error).strip().splitlines()
        detail = next((line for line in reason if "GLOBAL" in line or "Unsupported" in line), None)
        if is_archive and (
            detail is None or "Unsupported operand" in detail
        ):  # damage, not a class
            raise CorruptedFileError(
                f"{path}: corrupted or truncated (torch cannot read it: "
                f"{(reason[0] if reason else type(error).__name__)[:100]}); "
                f"nothing in it was run"
            ) from None
        detail = detail or (reason[0] if reason else type(error).__name__)
        raise UnsafeFileError(
            f"{path}: not a data-only checkpoint or agent file ({detail.strip()[:200]}); refusing to load "
            f"it, nothing in it was run. Files written before data-only files existed must be "
            f"re-created."
        ) from None
    try:
        return from_data(data)
    except (ValueError, TypeError, RecursionError) as error:
        raise UnsafeFileError(
            f"{path}: not a checkpoint or agent file: {str(error)[:200]}"
        ) from None


# ---- an agent and the game it is to play ------------------------------------------------------
class AgentGameMismatchError(ValueError):
    """An agent file made for another game: its action count or input size differ."""


def check_agent_fits_game(agent: Any, game: Any, source: str | Path) -> None:
    """Raise :class:`AgentGameMismatchError` naming ``source`` when ``agent`` cannot play
    ``game``: its action count differs from the game's, or its network reads inputs of a
    size that neither of the game's tensors (information state, observation) has."""
    info = game.info
    name = getattr(getattr(game, "spec", None), "name", None) or info.short_name
    architecture = getattr(agent, "architecture", None)
    if isinstance(architecture, dict):
        size = architecture.get("input_size")
        if size is None and architecture.get("input_shape") is not None:
            size = int(np.prod(architecture["input_shape"]))
        state_size = int(np.prod(info.information_state_tensor_shape))
        observation_size = int(np.prod(info.observation_tensor_shape))
        if isinstance(size, int) and size not in (state_size, observation_size):
            raise AgentGameMismatchError(
                f"{source}: the agent reads inputs of size {size}, {name}'s information state has "
                f"size {state_size} (observation {observation_size}): it was made for another game"
            )
    actions = getattr(agent, "num_actions", None)
    if isinstance(actions, int) and actions != info.num_distinct_actions:
        raise AgentGameMismatchError(
            f"{source}: the agent has {actions} actions, {name} has {info.num_distinct_actions}: "
            f"it was made for another game"
        )


# ---- Ctrl-C -------------------------------------------------------------------------------------
@contextlib.contextmanager
def interrupts_deferred() -> Iterator[None]:
    """Hold Ctrl-C (SIGINT) until the block ends, then deliver it: a checkpoint or a metrics
    row is written whole, and whoever catches the ``KeyboardInterrupt`` knows it is on disk.
    (Outside the main thread, where no signal handler can be set, the block runs as is.)"""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda number, frame: received.append(number))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if received:
            if callable(previous):
                previous(signal.SIGINT, None)  # Python's default: raise KeyboardInterrupt
            elif previous != signal.SIG_IGN:
                raise KeyboardInterrupt


# ---- generators ---------------------------------------------------------------------------------
def global_rng_state() -> dict[str, Any]:
    """The process-wide generators: Python's ``random``, numpy's legacy one, torch's."""
    return {
        "python": random.getstate(),
        "numpy": np.random.get_state(),
        "torch": torch.get_rng_state(),
    }


def set_global_rng_state(state: dict[str, Any]) -> None:
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)
