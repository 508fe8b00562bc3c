# A problem file of our own, in KernelBench's form: a linear layer, the
# logsumexp of each row, and GELU of it (KernelBench level 2's 64 in
# small). The product is gemm's, the logsumexp mid_reduce's (the running
# maximum and sum of exponentials), the GELU a map: a chain of three
# stages (docs/tasks.md).
import torch
import torch.nn as nn


class Model(nn.Module):
    """gelu(logsumexp(x @ W.T + b) over the features), one value a row."""
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)

    def forward(self, x):
        return torch.nn.functional.gelu(torch.logsumexp(self.fc(x), dim=1, keepdim=True))


batch = 128
in_features = 512
out_features = 1536


def get_inputs():
    return [torch.randn(batch, in_features)]


def get_init_inputs():
    return [in_features, out_features]
