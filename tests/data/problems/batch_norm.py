# A problem file of our own, in KernelBench's form: batch normalisation as
# a module in training mode runs it (statistics of the batch), for the
# stat_norm family.
import torch
import torch.nn as nn


class Model(nn.Module):
    """Batch normalisation over (batch, height, width) per channel."""
    def __init__(self, channels):
        super().__init__()
        self.bn = nn.BatchNorm2d(channels)

    def forward(self, x):
        return self.bn(x)


batch = 10
channels = 48
height, width = 30, 41


def get_inputs():
    return [torch.randn(batch, channels, height, width) * 2 + 1]


def get_init_inputs():
    return [channels]
