# A problem file of our own, in KernelBench's form: average pooling along
# one axis, padded places left out of the divisor, for the pool family.
import torch
import torch.nn as nn


class Model(nn.Module):
    """Average pooling along the last axis."""
    def __init__(self, kernel_size, stride, padding):
        super().__init__()
        self.pool = nn.AvgPool1d(kernel_size, stride=stride, padding=padding,
                                 ceil_mode=True, count_include_pad=False)

    def forward(self, x):
        return self.pool(x)


batch = 16
channels = 64
length = 4099


def get_inputs():
    return [torch.rand(batch, channels, length)]


def get_init_inputs():
    return [5, 3, 2]
