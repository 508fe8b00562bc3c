# A problem file of our own, in KernelBench's form: a masked cumulative sum
# along the rows in float16 (the running sum in f32, each output rounded
# once), the mask torch.bool; rows a multiple of 4 long, so the scan reads
# x and the mask 4 at a time.
import torch
import torch.nn as nn


class Model(nn.Module):
    """cumsum(x * mask) along dim 1, in f16."""
    def __init__(self):
        super().__init__()

    def forward(self, x, mask):
        return torch.cumsum(x * mask, dim=1)


batch = 96
dim = 2048


def get_inputs():
    return [torch.rand(batch, dim, dtype=torch.float16), torch.randint(0, 2, (batch, dim)).bool()]


def get_init_inputs():
    return []
