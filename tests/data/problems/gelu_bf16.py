# A problem file of our own, in KernelBench's form: GELU in bfloat16, for the
# elementwise family storing bf16.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """GELU (erf form) of every value, in bf16."""
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.gelu(x)


batch = 256
dim = 8191


def get_inputs():
    return [torch.randn(batch, dim, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
