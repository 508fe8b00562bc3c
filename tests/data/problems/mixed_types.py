# A problem file of our own, in KernelBench's form: a sum of an f16 and an f32
# tensor. It imports, but no family serves it: a family stores one float type.
import torch
import torch.nn as nn


class Model(nn.Module):
    """x (f16) widened and added to y (f32)."""
    def __init__(self):
        super().__init__()

    def forward(self, x, y):
        return x.float() + y


n = 1021


def get_inputs():
    return [torch.randn(n, n).half(), torch.randn(n, n)]


def get_init_inputs():
    return []
