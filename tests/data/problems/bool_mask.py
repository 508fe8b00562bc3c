# A problem file of our own, in KernelBench's form: a masked fill whose mask
# is torch.bool: it imports (a bool input, a byte of 0 or 1), but no family
# computes x * mask (their templates read every input as a float).
import torch
import torch.nn as nn


class Model(nn.Module):
    """x where mask is set, else 0."""
    def __init__(self):
        super().__init__()

    def forward(self, x, mask):
        return x * mask


n = 1024


def get_inputs():
    return [torch.randn(n, n), torch.randn(n, n) > 0]


def get_init_inputs():
    return []
