# A problem file of our own, in KernelBench's form: log-softmax over the
# last axis, for the row_norm family's softmax statistic.
import torch
import torch.nn as nn


class Model(nn.Module):
    """Log-softmax of each row."""
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.log_softmax(x, dim=1)


batch = 64
dim = 5003


def get_inputs():
    return [torch.randn(batch, dim) * 3]


def get_init_inputs():
    return []
