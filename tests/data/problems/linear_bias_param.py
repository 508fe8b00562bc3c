# A linear layer without its own bias, then a bias parameter of the
# module's own added, then a ReLU: the gemm family's bias, the task's
# inputs put in the kernels' order (x, the weight, the bias) though the
# module declares its bias before the linear's weight.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, n_in, n_out):
        super().__init__()
        self.proj = nn.Linear(n_in, n_out, bias=False)
        self.shift = nn.Parameter(torch.randn(n_out))

    def forward(self, x):
        return torch.relu(self.proj(x) + self.shift)


rows, n_in, n_out = 512, 1024, 768


def get_inputs():
    return [torch.randn(rows, n_in)]


def get_init_inputs():
    return [n_in, n_out]
