"""Where the trainers' networks run: ``device: auto | cpu | cuda | cuda:N``.

Every trainer with networks (NFSP, ANFSP, MCNFSP, ExIt-OOS, ReBeL) takes
``trainer.params.device``; ``evaluate.py --device`` does the same for the agent files it
loads. The setting is read by :func:`check_device_setting` (a one-line error naming a bad
value, or a CUDA device this machine does not have) and decided by :func:`choose_device`,
which returns a :class:`DeviceChoice`: the ``torch.device`` and the reason, printed as the
run's first line (``device: cpu (auto: torch 2.13.0+cpu has no CUDA)``).

==============  =================================================================================
setting         meaning
==============  =================================================================================
``auto``        CUDA (the current CUDA device) when ``torch.cuda.is_available()`` and one network
                call does at least :data:`AUTO_CUDA_MIN_MULTIPLY_ADDS` multiply-adds; else the CPU
``cpu``         the CPU: the same trajectory, bit for bit, as before devices existed
``cuda``        the current CUDA device; refused where torch has none
``cuda:N``      CUDA device ``N``; refused where there is no such device
==============  =================================================================================

Why ``auto`` looks at the size of a call. A call on a GPU pays a fixed price whatever its
size: a kernel launch per operation (about 5-20 microseconds from PyTorch's eager mode; an
NFSP update is some 40 of them: forward, backward, fused Adam) and the copy of its batch
from host memory. A CPU core does some 10-30 billion float multiply-adds a second. So the GPU
gains only when the arithmetic of a call is large beside that price: a forward pass over a
batch of ``rows`` through ``weights`` parameters costs ``rows * weights`` multiply-adds
(backward twice that), and at 2**22 (4.2 million, about a third of a millisecond on one
core) the CPU's time for an update passes the GPU's fixed cost. Leduc's NFSP network
(4,611 weights, batches of 128: 0.6 million) stays on the CPU; Meier's (127,384: 16
million) and combat's commander (1.76 million weights: 226 million) go to the GPU. A
trainer whose dominant call is one search node at a time (MCNFSP's best-response search)
passes ``rows=1``, so only a very large network moves there. The threshold is reasoned,
not yet measured: ``python -m benchmarks device`` measures each trainer on both devices
(docs/results/device.md), and ``device: cuda`` overrides the rule.

Determinism. Networks are built on the CPU (so the same seed gives the same initial
weights on every device) and then moved; ``cpu`` changes nothing in what is computed. CUDA
runs are reproducible only as far as CUDA's kernels are (cuBLAS may sum in another order),
so a seed gives the same trajectory on one GPU model, not bit for bit the CPU's.

Memories stay in host memory (numpy, growing as they fill); a minibatch is gathered there
and copied to the device through page-locked ("pinned") memory, without blocking
(:func:`to_device`). Files are device-free: agent files and checkpoints hold CPU tensors
(:func:`cpu_state_dict`) and are read onto the CPU (``agents.checkpoint.load_checkpoint``
maps every tensor there), so a file trained on a GPU loads on a machine without one and the
other way round; ``load_state_dict`` then copies the weights to wherever the network lives.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn

from agents.config import quote
from agents.errors import ConfigError

DEVICE_SETTINGS = ("auto", "cpu", "cuda", "cuda:N")
# ``auto`` picks CUDA when one network call does at least this many multiply-adds
# (``rows * weights``); the module docstring gives the reasoning.
AUTO_CUDA_MIN_MULTIPLY_ADDS = 2**22
# The device setting of the agents loaded from agent files (evaluate.py --device sets it),
# read where they are loaded, so worker processes inherit it. Unset: "auto".
AGENT_DEVICE_VARIABLE = "HIDDENENVS_AGENT_DEVICE"
_SETTING = re.compile(r"auto|cpu|cuda(:(0|[1-9][0-9]{0,3}))?")


@dataclass(frozen=True)
class DeviceChoice:
    """The device a trainer or an agent runs on, and why (its :meth:`line`)."""

    device: torch.device
    setting: str
    reason: str

    @property
    def is_cuda(self) -> bool:
        return self.device.type == "cuda"

    def line(self) -> str:
        return f"device: {self.device} ({self.setting}: {self.reason})"

    def __str__(self) -> str:
        return self.line()


def check_device_setting(value: Any, where: str = "trainer.params.device") -> str:
    """``value`` if it is a device setting this machine can honour; else a one-line
    :class:`agents.config.ConfigError` (a ``ValueError``) naming ``where`` and the value,
    and what is allowed or what is missing."""
    if not isinstance(value, str) or _SETTING.fullmatch(value) is None:
        raise ConfigError(
            f"{where} must be one of {', '.join(DEVICE_SETTINGS)}; got {quote(value, 40)}"
        )
    if value.startswith("cuda"):
        if not torch.cuda.is_available():
            raise ConfigError(
                f"{where} {value!r}: {_no_cuda_reason()}; install a CUDA build of torch "
                f"(docs/guides/install.md) or use 'auto' or 'cpu'"
            )
        index = int(value.partition(":")[2] or torch.cuda.current_device())
        count = torch.cuda.device_count()
        if index >= count:
            raise ConfigError(
                f"{where} {value!r}: this machine has {count} CUDA device(s), "
                f"cuda:0 to cuda:{count - 1}"
            )
    return value


def _no_cuda_reason() -> str:
    if torch.version.cuda is None:
        return f"torch {torch.__version__} is built without CUDA"
    return f"torch {torch.__version__} finds no CUDA device (torch.cuda.is_available() is False)"


def choose_device(setting: str, weights: int, rows: int) -> DeviceChoice:
    """The device for ``setting`` (checked by :func:`check_device_setting`), for networks of
    ``weights`` parameters (the largest network) called on ``rows`` rows at a time (an
    update's minibatch; 1 for a search that evaluates one node per call)."""
    check_device_setting(setting)
    if setting == "cpu":
        return DeviceChoice(torch.device("cpu"), setting, "as set")
    if setting.startswith("cuda"):
        index = int(setting.partition(":")[2] or torch.cuda.current_device())
        return DeviceChoice(torch.device("cuda", index), setting, "as set")
    if not torch.cuda.is_available():
        return DeviceChoice(torch.device("cpu"), setting, _no_cuda_reason())
    work = weights * rows
    if work < AUTO_CUDA_MIN_MULTIPLY_ADDS:
        return DeviceChoice(
            torch.device("cpu"),
            setting,
            f"{rows:,} x {weights:,} = {work:,} multiply-adds a call, below the "
            f"{AUTO_CUDA_MIN_MULTIPLY_ADDS:,} where a GPU gains; device: cuda forces it",
        )
    index = torch.cuda.current_device()
    return DeviceChoice(
        torch.device("cuda", index),
        setting,
        f"{torch.cuda.get_device_name(index)}; {rows:,} x {weights:,} = {work:,} "
        f"multiply-adds a call, at least {AUTO_CUDA_MIN_MULTIPLY_ADDS:,}",
    )


def weight_count(*networks: nn.Module) -> int:
    """Parameters of the largest of ``networks``."""
    return max(sum(p.numel() for p in network.parameters()) for network in networks)


def agent_device(weights: int) -> torch.device:
    """The device of an agent loaded from a file: :data:`AGENT_DEVICE_VARIABLE`'s setting
    (unset: ``auto``), ``auto`` deciding for one decision at a time (``rows=1``: a GPU only
    for a network of at least :data:`AUTO_CUDA_MIN_MULTIPLY_ADDS` weights)."""
    return choose_device(agent_device_setting(), weights, rows=1).device


def agent_device_setting() -> str:
    """:data:`AGENT_DEVICE_VARIABLE`'s setting (unset: ``auto``), checked."""
    setting = os.environ.get(AGENT_DEVICE_VARIABLE) or "auto"
    return check_device_setting(setting, f"the environment variable {AGENT_DEVICE_VARIABLE}")


def to_device(array: np.ndarray, device: torch.device) -> torch.Tensor:
    """``array`` as a tensor on ``device``: on the CPU it is shared, not copied (as
    ``torch.from_numpy``); to CUDA it goes through pinned memory without blocking (PyTorch's
    caching host allocator keeps the pinned block until the copy is done)."""
    tensor = torch.from_numpy(np.ascontiguousarray(array))
    if device.type == "cpu":
        return tensor
    if device.type == "cuda":
        tensor = tensor.pin_memory()
    return tensor.to(device, non_blocking=True)


def tensors_on(batch: Mapping[str, np.ndarray], device: torch.device) -> dict[str, torch.Tensor]:
    """Each column of a minibatch on ``device`` (:func:`to_device`)."""
    return {name: to_device(column, device) for name, column in batch.items()}


def to_numpy(tensor: torch.Tensor) -> np.ndarray:
    """A tensor's values as a numpy array in host memory (shared when it is already there)."""
    return tensor.detach().cpu().numpy()


def cpu_state_dict(network: nn.Module) -> dict[str, torch.Tensor]:
    """``network.state_dict()`` with every tensor in host memory, for a file or another
    process (the same tensors, not copies, when the network is on the CPU)."""
    return {name: tensor.cpu() for name, tensor in network.state_dict().items()}


def module_device(network: nn.Module) -> torch.device:
    """The device of ``network``'s first parameter (the CPU for a network without any)."""
    parameter = next(iter(network.parameters()), None)
    return torch.device("cpu") if parameter is None else parameter.device


def move_all(networks: Iterable[nn.Module], device: torch.device) -> None:
    """Move every network to ``device`` in place (before its optimiser is built, so that the
    optimiser's state is made there too)."""
    for network in networks:
        network.to(device)
