# A problem file of our own, in KernelBench's form: two linear layers with a
# relu between (level 3's MLPs are deeper). A chain (docs/tasks.md) of two
# gemm stages: the same family twice, whose kernels (launched or not) the
# second stage renames so that the one source defines each once.
import torch
import torch.nn as nn


class Model(nn.Module):
    """fc2(relu(fc1(x)))."""
    def __init__(self, in_features, hidden, out_features):
        super().__init__()
        self.fc1 = nn.Linear(in_features, hidden)
        self.fc2 = nn.Linear(hidden, out_features)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


batch = 64
in_features = 512
hidden = 1024
out_features = 256


def get_inputs():
    return [torch.randn(batch, in_features)]


def get_init_inputs():
    return [in_features, hidden, out_features]
