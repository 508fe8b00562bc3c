# A problem file of our own, in KernelBench's form: a linear layer (B stored
# N x K, F.linear's) with relu, then a product with a parameter stored K x N.
# A chain (docs/tasks.md) of two gemm stages of different b_layout: the
# first stage's layout flag must not reach the second's source.
import torch
import torch.nn as nn


class Model(nn.Module):
    """relu(x @ W1.T + b1) @ W2, W2 stored hidden x out."""
    def __init__(self, in_features, hidden, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, hidden)
        self.w = nn.Parameter(torch.randn(hidden, out_features) * 0.05)

    def forward(self, x):
        return torch.matmul(torch.relu(self.fc(x)), self.w)


batch = 48
in_features = 320
hidden = 640
out_features = 192


def get_inputs():
    return [torch.randn(batch, in_features)]


def get_init_inputs():
    return [in_features, hidden, out_features]
