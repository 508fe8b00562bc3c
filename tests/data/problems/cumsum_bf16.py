# A problem file of our own, in KernelBench's form: a cumulative sum along
# the rows in bfloat16, for the scan family storing bf16 (the running sum in
# f32, each output rounded once).
import torch
import torch.nn as nn


class Model(nn.Module):
    """Inclusive cumulative sum along dim 1, in bf16."""
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.cumsum(x, dim=1)


batch = 128
dim = 4001


def get_inputs():
    return [torch.rand(batch, dim, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
