# A problem file of our own, in KernelBench's form: group normalisation, for the
# stat_norm family (statistics per sample and group of channels).
import torch
import torch.nn as nn


class Model(nn.Module):
    """Group normalisation over channels."""
    def __init__(self, channels, groups):
        super().__init__()
        self.gn = nn.GroupNorm(groups, channels)

    def forward(self, x):
        return self.gn(x)


batch = 16
channels = 64
groups = 8
height, width = 32, 32


def get_inputs():
    return [torch.randn(batch, channels, height, width)]


def get_init_inputs():
    return [channels, groups]
