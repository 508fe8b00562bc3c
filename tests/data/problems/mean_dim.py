# A problem file of our own, in KernelBench's form: a reduction along one
# axis that the mid_reduce family serves by its ops.
import torch
import torch.nn as nn


class Model(nn.Module):
    """Means along one axis."""
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.mean(x, dim=self.dim)


batch = 16
rows = 256
cols = 255


def get_inputs():
    return [torch.rand(batch, rows, cols) + 0.5]


def get_init_inputs():
    return [1]
