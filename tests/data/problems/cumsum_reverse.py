# A problem file of our own, in KernelBench's form: a cumulative sum from
# the end of each row (flip, cumsum, flip), for the scan family.
import torch
import torch.nn as nn


class Model(nn.Module):
    """Reverse cumulative sum along one axis."""
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.cumsum(x.flip(self.dim), dim=self.dim).flip(self.dim)


batch = 64
length = 4097


def get_inputs():
    return [torch.randn(batch, length)]


def get_init_inputs():
    return [1]
