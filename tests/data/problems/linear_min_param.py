# A problem file of our own, in KernelBench's form: a linear layer, then the
# minimum with a scalar parameter of the module, less that parameter. The
# parameter is an input of one value: no product epilogue reads it, so the
# task is a chain (docs/tasks.md), gemm then broadcast with a single value.
import torch
import torch.nn as nn


class Model(nn.Module):
    """min(x @ W.T + b, c) - c, c a parameter of one value."""
    def __init__(self, in_features, out_features, c):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.c = nn.Parameter(torch.tensor(c))

    def forward(self, x):
        y = self.fc(x)
        return torch.min(y, self.c) - self.c


batch = 96
in_features = 640
out_features = 1536
c = 0.25


def get_inputs():
    return [torch.randn(batch, in_features)]


def get_init_inputs():
    return [in_features, out_features, c]
