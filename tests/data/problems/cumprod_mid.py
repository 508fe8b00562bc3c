# A problem file of our own, in KernelBench's form: a cumulative product
# along a middle axis (columns walked in order), for the scan family.
import torch
import torch.nn as nn


class Model(nn.Module):
    """Cumulative product along the middle axis."""
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.cumprod(x, dim=self.dim)


batch = 16
steps = 96
cols = 257


def get_inputs():
    return [torch.rand(batch, steps, cols) * 0.5 + 0.75]


def get_init_inputs():
    return [1]
