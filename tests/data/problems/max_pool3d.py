# A problem file of our own, in KernelBench's form: max pooling over three
# spatial axes with dilation (so that pool's stream variant moves its
# window by one slice, not by the stride) and ceil mode, in half precision.
# The width is a literal, not a size: the check sizes keep it (rows of
# whole 16-byte vectors) while the other sizes are odd, so the vector
# paths meet every edge but the row's.
import torch
import torch.nn as nn


class Model(nn.Module):
    """Max pooling over depth, height and width."""
    def __init__(self, kernel_size, stride, padding, dilation):
        super().__init__()
        self.pool = nn.MaxPool3d(kernel_size, stride=stride, padding=padding,
                                 dilation=dilation, ceil_mode=True)

    def forward(self, x):
        return self.pool(x)


batch = 2
channels = 8
depth, height = 30, 36


def get_inputs():
    return [torch.randn(batch, channels, depth, height, 40, dtype=torch.float16)]


def get_init_inputs():
    return [3, 2, 1, 2]
