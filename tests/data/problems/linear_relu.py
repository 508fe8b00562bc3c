# F.linear with a bias, then relu: the gemm family with an epilogue.
import torch
import torch.nn as nn


class Model(nn.Module):
    """A linear layer followed by relu."""
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)

    def forward(self, x):
        return torch.relu(self.fc(x))


batch = 256
in_features = 1024
out_features = 512


def get_inputs():
    return [torch.rand(batch, in_features) * 2 - 1]


def get_init_inputs():
    return [in_features, out_features]
