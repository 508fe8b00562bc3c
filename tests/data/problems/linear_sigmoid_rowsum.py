# A problem file of our own, in KernelBench's form: a linear layer, sigmoid,
# and the sum of each row. The product and its sigmoid are gemm's; the sum
# along the features is mid_reduce's: a chain of two stages (docs/tasks.md).
import torch
import torch.nn as nn


class Model(nn.Module):
    """sigmoid(x @ W.T + b) summed over the features, one value a row."""
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)

    def forward(self, x):
        return torch.sum(torch.sigmoid(self.fc(x)), dim=1, keepdim=True)


batch = 128
in_features = 768
out_features = 2048


def get_inputs():
    return [torch.randn(batch, in_features)]


def get_init_inputs():
    return [in_features, out_features]
