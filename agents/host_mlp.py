"""NFSP's learning step for small MLPs on the CPU, in numpy.

A gradient step of NFSP on a small game (Leduc: 30 inputs, 128 hidden units, 3 actions,
minibatches of 128) is a few hundred thousand multiply-adds: PyTorch's per-call overhead
(autograd's graph, the dispatcher, the optimizer's Python wrapper) costs several times
the arithmetic. This module computes the same step with numpy on the networks' own memory:
forward passes, the two losses' gradients written out by hand (the chain rule through
Linear and ReLU layers) and Adam (Kingma & Ba 2015, PyTorch's variant: bias corrections,
``eps`` added after the square root) or plain SGD, on one flat buffer per network.

The networks stay ``torch.nn.Sequential`` modules: :class:`FlatParameters` moves each
network's parameters into one contiguous float32 buffer and points the modules'
parameters at views of it, so acting, evaluation, checkpoints and weight copies see the
weights this step writes, with no copy. The optimizer's moments live in the same way in
the ``torch.optim`` optimizer's state (views of flat buffers), so its ``state_dict`` is
PyTorch's and a checkpoint resumes on either path.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn

from agents.networks import ILLEGAL_LOGIT


class FlatParameters:
    """``network``'s parameters as views of one flat float32 numpy buffer.

    ``layers`` holds, per ``nn.Linear`` in order, its weight ``[out, in]`` and bias ``[out]``
    as numpy views; the module's parameters are torch views of the same memory."""

    def __init__(self, network: nn.Sequential):
        linears = [module for module in network if isinstance(module, nn.Linear)]
        others = [m for m in network if not isinstance(m, nn.Linear | nn.ReLU)]
        if others or not isinstance(network[-1], nn.Linear):
            raise ValueError(
                "host_mlp needs a Sequential of Linear layers with ReLU between them, got "
                f"{network}"
            )
        self.parameters = [p for linear in linears for p in (linear.weight, linear.bias)]
        total = sum(p.numel() for p in self.parameters)
        self.flat = np.empty(total, np.float32)
        self.views = self.bind(self.flat)
        with torch.no_grad():
            for parameter, view in zip(self.parameters, self.views):
                view[...] = parameter.detach().cpu().numpy()
                parameter.data = torch.from_numpy(view)
        self.layers = [(self.views[2 * i], self.views[2 * i + 1]) for i in range(len(linears))]

    def bind(self, flat: np.ndarray) -> list[np.ndarray]:
        """Views of ``flat`` shaped as the parameters, in order."""
        views, offset = [], 0
        for parameter in self.parameters:
            size = parameter.numel()
            views.append(flat[offset : offset + size].reshape(tuple(parameter.shape)))
            offset += size
        return views

    def forward(self, inputs: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
        """The network's output and the input of every layer (for :meth:`backward`)."""
        activations = [inputs]
        for weight, bias in self.layers[:-1]:
            hidden = activations[-1] @ weight.T
            hidden += bias
            np.maximum(hidden, 0.0, out=hidden)
            activations.append(hidden)
        weight, bias = self.layers[-1]
        output = activations[-1] @ weight.T
        output += bias
        return output, activations

    def backward(
        self, output_gradient: np.ndarray, activations: list[np.ndarray], gradient: np.ndarray
    ) -> None:
        """The loss's gradient with respect to every parameter, written into ``gradient`` (a
        flat buffer laid out as :attr:`flat`), from its gradient at the output."""
        views = self.bind(gradient)
        upstream = output_gradient
        for index in range(len(self.layers) - 1, -1, -1):
            layer_input = activations[index]
            np.matmul(upstream.T, layer_input, out=views[2 * index])
            np.sum(upstream, axis=0, out=views[2 * index + 1])
            if index:
                upstream = upstream @ self.layers[index][0]
                upstream *= layer_input > 0.0  # ReLU passes gradient where it was active


class FlatOptimizer:
    """PyTorch's Adam or SGD (no momentum, no weight decay) on a :class:`FlatParameters`,
    its moments kept as views in ``optimizer.state`` (so ``optimizer.state_dict()`` is the
    one ``torch.optim`` writes and reads)."""

    def __init__(self, parameters: FlatParameters, optimizer: torch.optim.Optimizer):
        (group,) = optimizer.param_groups
        self.parameters, self.optimizer, self.group = parameters, optimizer, group
        self.adam = isinstance(optimizer, torch.optim.Adam)
        if self.adam and (
            group["weight_decay"]
            or group["amsgrad"]
            or group["maximize"]
            or group.get("decoupled_weight_decay")
        ):
            raise ValueError("host_mlp's Adam is plain Adam (no weight decay, amsgrad, maximize)")
        if not self.adam and (group["momentum"] or group["weight_decay"] or group["maximize"]):
            raise ValueError("host_mlp's SGD is plain SGD (no momentum, weight decay, maximize)")
        self.gradient = np.zeros_like(parameters.flat)
        if self.adam:
            self.exp_avg = np.zeros_like(parameters.flat)
            self.exp_avg_sq = np.zeros_like(parameters.flat)
            # One step count per parameter, as torch.optim keeps them (fused Adam adds one to
            # each), updated together here.
            self.step_counts = np.zeros(len(parameters.parameters), np.float32)
            self.scratch = np.empty_like(parameters.flat)
            self.adopt_state()

    def adopt_state(self) -> None:
        """Take the optimizer's current state (empty, or loaded from a checkpoint) into the
        flat buffers and point the optimizer's state at views of them."""
        if not self.adam:
            return
        state = self.optimizer.state
        step = 0.0
        for parameter, average, square in zip(
            self.parameters.parameters,
            self.parameters.bind(self.exp_avg),
            self.parameters.bind(self.exp_avg_sq),
        ):
            previous = state.get(parameter)
            if previous:
                average[...] = previous["exp_avg"].detach().cpu().numpy()
                square[...] = previous["exp_avg_sq"].detach().cpu().numpy()
                step = float(previous["step"])
            else:
                average[...] = 0.0
                square[...] = 0.0
        self.step_counts[...] = step
        for index, (parameter, average, square) in enumerate(
            zip(
                self.parameters.parameters,
                self.parameters.bind(self.exp_avg),
                self.parameters.bind(self.exp_avg_sq),
            )
        ):
            state[parameter] = {
                "step": torch.from_numpy(self.step_counts[index : index + 1].reshape(())),
                "exp_avg": torch.from_numpy(average),
                "exp_avg_sq": torch.from_numpy(square),
            }

    def step(self) -> None:
        """One update of the parameters from :attr:`gradient`."""
        learning_rate = float(self.group["lr"])
        flat = self.parameters.flat
        if not self.adam:
            flat -= learning_rate * self.gradient
            return
        beta1, beta2 = self.group["betas"]
        self.step_counts += 1.0
        step = float(self.step_counts[0])
        gradient, average, square, scratch = (
            self.gradient,
            self.exp_avg,
            self.exp_avg_sq,
            self.scratch,
        )
        average *= beta1
        average += (1.0 - beta1) * gradient
        square *= beta2
        np.multiply(gradient, gradient, out=scratch)
        scratch *= 1.0 - beta2
        square += scratch
        bias_correction1 = 1.0 - beta1**step
        bias_correction2_sqrt = math.sqrt(1.0 - beta2**step)
        np.sqrt(square, out=scratch)
        scratch /= bias_correction2_sqrt
        scratch += self.group["eps"]
        np.divide(average, scratch, out=scratch)
        scratch *= learning_rate / bias_correction1
        flat -= scratch


def masked_max(values: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """The largest value over the legal entries of each row (illegal ones at ``ILLEGAL_LOGIT``)."""
    return np.where(masks != 0, values, np.float32(ILLEGAL_LOGIT)).max(axis=1)


def td_loss_gradient(
    q_values: np.ndarray, actions: np.ndarray, targets: np.ndarray
) -> tuple[float, np.ndarray]:
    """``mean((Q(s, a) - target)^2)`` and its gradient with respect to ``q_values``."""
    rows = np.arange(len(actions))
    error = q_values[rows, actions] - targets
    gradient = np.zeros_like(q_values)
    gradient[rows, actions] = error * np.float32(2.0 / len(actions))
    return float(np.mean(error * error)), gradient


def cross_entropy_gradient(
    logits: np.ndarray, masks: np.ndarray, actions: np.ndarray
) -> tuple[float, np.ndarray]:
    """The mean cross-entropy of ``actions`` under the softmax of ``logits`` with illegal
    entries pushed to ``ILLEGAL_LOGIT`` (as :func:`agents.networks.masked_logits`), and its
    gradient with respect to ``logits`` (none reaches the illegal entries, which the mask
    replaced)."""
    legal = masks != 0
    masked = np.where(legal, logits, np.float32(ILLEGAL_LOGIT))
    shifted = masked - masked.max(axis=1, keepdims=True)
    exponentials = np.exp(shifted)
    totals = exponentials.sum(axis=1, keepdims=True)
    rows = np.arange(len(actions))
    loss = float(np.mean(np.log(totals[:, 0]) - shifted[rows, actions]))
    gradient = exponentials / totals
    gradient[rows, actions] -= 1.0
    gradient *= legal
    gradient *= np.float32(1.0 / len(actions))
    return loss, gradient
