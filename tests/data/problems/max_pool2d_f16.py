# A problem file of our own, in KernelBench's form: max pooling in half
# precision, for the pool family storing f16.
import torch
import torch.nn as nn


class Model(nn.Module):
    """Max pooling over two spatial axes, in f16."""
    def __init__(self, kernel_size, stride, padding):
        super().__init__()
        self.pool = nn.MaxPool2d(kernel_size, stride=stride, padding=padding)

    def forward(self, x):
        return self.pool(x)


batch = 8
channels = 32
height = 96
width = 130


def get_inputs():
    return [torch.randn(batch, channels, height, width, dtype=torch.float16)]


def get_init_inputs():
    return [3, 2, 1]
