# A problem file of our own, in KernelBench's form: an elementwise map.
import torch
import torch.nn as nn


class Model(nn.Module):
    """Scales, then applies tanh."""
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        return torch.tanh(x * self.scale)


rows = 1024
cols = 4096


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return [0.5]
