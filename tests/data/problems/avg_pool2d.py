# A problem file of our own, in KernelBench's form: average pooling over two
# spatial axes with windows that overlap in height and width (stride 1,
# kernel 3), padded places counted (count_include_pad, PyTorch's default),
# so that each input row is in three output rows' windows: pool's roll
# variant streams such rows once a band.
import torch
import torch.nn as nn


class Model(nn.Module):
    """Average pooling over height and width, stride 1, padded places counted."""
    def __init__(self, kernel_size, stride, padding):
        super().__init__()
        self.pool = nn.AvgPool2d(kernel_size, stride=stride, padding=padding)

    def forward(self, x):
        return self.pool(x)


batch = 4
channels = 24
height = 150
width = 132


def get_inputs():
    return [torch.randn(batch, channels, height, width)]


def get_init_inputs():
    return [3, 1, 1]
