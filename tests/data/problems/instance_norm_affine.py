# A problem file of our own, in KernelBench's form: instance normalisation
# with its affine (PyTorch repeats weight and bias once per sample before
# the batch norm it runs), for the stat_norm family.
import torch
import torch.nn as nn


class Model(nn.Module):
    """Instance normalisation with weight and bias."""
    def __init__(self, channels):
        super().__init__()
        self.norm = nn.InstanceNorm2d(channels, affine=True)

    def forward(self, x):
        return self.norm(x)


batch = 12
channels = 24
height, width = 40, 33


def get_inputs():
    return [torch.rand(batch, channels, height, width)]


def get_init_inputs():
    return [channels]
