# A problem file of our own, in KernelBench's form: a squared error with
# one weight per row, broadcast along the columns, reduced to its mean.
import torch
import torch.nn as nn


class Model(nn.Module):
    """The row-weighted mean squared error."""
    def __init__(self):
        super().__init__()

    def forward(self, a, b, w):
        return torch.mean(w.unsqueeze(1) * (a - b) ** 2)


rows = 2048
cols = 1002


def get_inputs():
    return [torch.randn(rows, cols), torch.randn(rows, cols), torch.rand(rows)]


def get_init_inputs():
    return []
