# A problem file of our own, in KernelBench's form: hardtanh of uniform(0, 1)
# draws is a copy of its input, and so is it of uniform(-1, 1): the
# importer's null-kernel gate widens the draws until a copy fails.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """HardTanh."""
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.hardtanh(x, min_val=-1.0, max_val=1.0)


batch = 64
dim = 4099


def get_inputs():
    return [torch.rand(batch, dim)]


def get_init_inputs():
    return []
