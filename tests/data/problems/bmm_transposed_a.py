# A problem file of our own, in KernelBench's form: a batched product whose
# A is stored k x m per batch (torch.bmm(a.transpose(1, 2), b)), for the
# gemm family's transposed-A path under a batch; the sizes tile nothing.
import torch
import torch.nn as nn


class Model(nn.Module):
    """bmm(A^T, B) per batch."""
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.bmm(a.transpose(1, 2), b)


batch = 6
m = 150
k = 97
n = 131


def get_inputs():
    return [torch.randn(batch, k, m), torch.randn(batch, k, n)]


def get_init_inputs():
    return []
