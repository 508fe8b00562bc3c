# A problem file of our own, in KernelBench's form: a per-row scale and a
# per-column bias broadcast over a matrix whose rows and columns are as many
# (so only the views tell them apart), then tanh, in f16: the broadcast
# family, as KernelBench's 12 (diag(A) @ B) is.
import torch
import torch.nn as nn


class Model(nn.Module):
    """tanh(s[:, None] * x + b[None, :])."""
    def __init__(self):
        super().__init__()

    def forward(self, s, x, b):
        return torch.tanh(s.unsqueeze(1) * x + b.unsqueeze(0))


n = 1001


def get_inputs():
    return [torch.randn(n, dtype=torch.float16), torch.randn(n, n, dtype=torch.float16),
            torch.randn(n, dtype=torch.float16)]


def get_init_inputs():
    return []
