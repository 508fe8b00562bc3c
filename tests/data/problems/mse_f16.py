# A problem file of our own, in KernelBench's form: the mean squared error of
# two half-precision tensors, for the global_reduce family storing f16.
import torch
import torch.nn as nn


class Model(nn.Module):
    """Mean squared error, in f16."""
    def __init__(self):
        super().__init__()

    def forward(self, predictions, targets):
        return torch.mean((predictions - targets) ** 2)


batch = 128
dim = 4093


def get_inputs():
    return [torch.randn(batch, dim).half(), torch.randn(batch, dim).half()]


def get_init_inputs():
    return []
