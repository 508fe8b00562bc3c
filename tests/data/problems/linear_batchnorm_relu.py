# A problem file of our own, in KernelBench's form: a linear layer, batch
# normalisation (training mode) of its outputs, then ReLU. It imports as a
# chain (docs/tasks.md): gemm, then stat_norm with the batch as outer and
# the features as groups side by side (inner 1: stat_norm's cols), then
# elementwise.
import torch
import torch.nn as nn


class Model(nn.Module):
    """A linear layer, batch norm over the batch for each feature, and ReLU."""
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.bn = nn.BatchNorm1d(out_features)

    def forward(self, x):
        return torch.relu(self.bn(self.fc(x)))


batch = 512
in_features = 256
out_features = 1024


def get_inputs():
    return [torch.randn(batch, in_features)]


def get_init_inputs():
    return [in_features, out_features]
