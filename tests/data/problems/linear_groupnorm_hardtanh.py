# A problem file of our own, in KernelBench's form: a linear layer, group
# normalisation of its outputs, then hardtanh. No one family computes it: it
# imports as a chain (docs/tasks.md), gemm then stat_norm then elementwise.
import torch
import torch.nn as nn


class Model(nn.Module):
    """A linear layer, group norm over its features, and hardtanh."""
    def __init__(self, in_features, out_features, groups):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.gn = nn.GroupNorm(groups, out_features)

    def forward(self, x):
        return torch.clamp(self.gn(self.fc(x)), -2.0, 2.0)


batch = 256
in_features = 512
out_features = 1024
groups = 16


def get_inputs():
    return [torch.randn(batch, in_features)]


def get_init_inputs():
    return [in_features, out_features, groups]
