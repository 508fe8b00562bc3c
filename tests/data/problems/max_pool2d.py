# A problem file of our own, in KernelBench's form: max pooling with every
# knob PyTorch has (stride, padding, dilation, ceil mode), for the pool family.
import torch
import torch.nn as nn


class Model(nn.Module):
    """Max pooling over two spatial axes."""
    def __init__(self, kernel_size, stride, padding, dilation):
        super().__init__()
        self.pool = nn.MaxPool2d(kernel_size, stride=stride, padding=padding, dilation=dilation,
                                 ceil_mode=True)

    def forward(self, x):
        return self.pool(x)


batch = 8
channels = 32
height = 96
width = 130


def get_inputs():
    return [torch.randn(batch, channels, height, width)]


def get_init_inputs():
    return [(3, 2), (2, 1), 1, (2, 1)]
