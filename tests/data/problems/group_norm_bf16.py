# A problem file of our own, in KernelBench's form: group normalisation with
# its affine, module and input in bfloat16, for the stat_norm family storing
# bf16 (statistics in f32 and f64).
import torch
import torch.nn as nn


class Model(nn.Module):
    """Group normalisation over channels, in bf16."""
    def __init__(self, channels, groups):
        super().__init__()
        self.gn = nn.GroupNorm(groups, channels).to(torch.bfloat16)

    def forward(self, x):
        return self.gn(x)


batch = 16
channels = 64
groups = 8
height, width = 32, 32


def get_inputs():
    return [torch.randn(batch, channels, height, width, dtype=torch.bfloat16)]


def get_init_inputs():
    return [channels, groups]
