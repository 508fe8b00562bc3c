# A problem file of our own, in KernelBench's form: average pooling over
# three spatial axes with PyTorch's default divisor (padded places counted).
import torch
import torch.nn as nn


class Model(nn.Module):
    """Average pooling over depth, height and width."""
    def __init__(self, kernel_size, stride, padding):
        super().__init__()
        self.pool = nn.AvgPool3d(kernel_size, stride=stride, padding=padding)

    def forward(self, x):
        return self.pool(x)


batch = 4
channels = 16
depth, height, width = 24, 40, 66


def get_inputs():
    return [torch.rand(batch, channels, depth, height, width)]


def get_init_inputs():
    return [3, 2, 1]
