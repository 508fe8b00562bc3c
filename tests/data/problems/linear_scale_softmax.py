# A problem file of our own, in KernelBench's form: a linear layer, a scale
# of shape (1,) (a parameter of one value), and a softmax over the features:
# a chain of three stages (docs/tasks.md), gemm, broadcast, row_norm.
import torch
import torch.nn as nn


class Model(nn.Module):
    """softmax(scale * (x @ W.T + b)) over the features, scale of shape (1,)."""
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.scale = nn.Parameter(torch.ones(1) * 0.5)

    def forward(self, x):
        return torch.softmax(self.scale * self.fc(x), dim=1)


batch = 128
in_features = 512
out_features = 3072


def get_inputs():
    return [torch.randn(batch, in_features)]


def get_init_inputs():
    return [in_features, out_features]
