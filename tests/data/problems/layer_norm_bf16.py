# A problem file of our own, in KernelBench's form: layer normalisation with
# its affine, module and input in bfloat16, for the layer_norm family storing
# bf16 (statistics in f32 and f64).
import torch
import torch.nn as nn


class Model(nn.Module):
    """Layer normalisation over the last axis, in bf16."""
    def __init__(self, dim):
        super().__init__()
        self.ln = nn.LayerNorm(dim).to(torch.bfloat16)

    def forward(self, x):
        return self.ln(x)


batch = 96
dim = 4099


def get_inputs():
    return [torch.randn(batch, dim, dtype=torch.bfloat16)]


def get_init_inputs():
    return [dim]
