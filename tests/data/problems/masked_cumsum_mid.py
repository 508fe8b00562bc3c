# A problem file of our own, in KernelBench's form: a cumulative sum
# along a middle axis of the values a bool mask keeps (the mask first in
# the product), for the scan family's column walk.
import torch
import torch.nn as nn


class Model(nn.Module):
    """cumsum(keep * x) along the middle axis."""
    def __init__(self):
        super().__init__()

    def forward(self, x, keep):
        return torch.cumsum(keep * x, dim=1)


batch = 12
steps = 40
cols = 129


def get_inputs():
    return [torch.randn(batch, steps, cols), torch.randint(0, 2, (batch, steps, cols)).bool()]


def get_init_inputs():
    return []
