# A problem file of our own, in KernelBench's form: average pooling over
# three spatial axes dividing by the places inside the input
# (count_include_pad off). The width is a literal, not a size: the check
# sizes keep it (rows of whole 16-byte vectors) while the other sizes are
# odd, so the vector paths meet every edge but the row's.
import torch
import torch.nn as nn


class Model(nn.Module):
    """Average pooling over depth, height and width, padded places not counted."""
    def __init__(self, kernel_size, stride, padding):
        super().__init__()
        self.pool = nn.AvgPool3d(kernel_size, stride=stride, padding=padding,
                                 count_include_pad=False)

    def forward(self, x):
        return self.pool(x)


batch = 3
channels = 5
depth, height = 21, 26


def get_inputs():
    return [torch.rand(batch, channels, depth, height, 36)]


def get_init_inputs():
    return [3, 2, 1]
