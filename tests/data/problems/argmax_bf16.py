# A problem file of our own, in KernelBench's form: argmax along a middle
# axis of a bfloat16 tensor (int64 indices out), for the mid_reduce family
# storing bf16. Ties are likely in bf16; the first index wins, as in PyTorch.
import torch
import torch.nn as nn


class Model(nn.Module):
    """Index of the largest value along dim 1, in bf16."""
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.argmax(x, dim=1)


batch = 16
rows = 257
cols = 255


def get_inputs():
    return [torch.randn(batch, rows, cols, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
