# A problem file of our own, in KernelBench's form: a cumulative sum of
# the values a bool mask keeps, along the rows.
import torch
import torch.nn as nn


class Model(nn.Module):
    """cumsum(x * mask) along dim 1."""
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x, mask):
        return torch.cumsum(x * mask, dim=self.dim)


batch = 256
length = 4000
dim = 1


def get_inputs():
    x = torch.randn(batch, length)
    return [x, torch.rand(batch, length) < 0.5]


def get_init_inputs():
    return [dim]
