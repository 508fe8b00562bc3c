# A problem file of our own, in KernelBench's form: a linear layer, the
# mean of each row, and the input added back (KernelBench level 2's 51 in
# small: x cloned before the product). x is read by the product and by the
# last stage: the chain names its first stage's inputs (first_inputs,
# docs/tasks.md).
import torch
import torch.nn as nn


class Model(nn.Module):
    """mean(sigmoid(x @ W.T + b)) over the features, plus x."""
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)

    def forward(self, x):
        r = x.clone().detach()
        return torch.sigmoid(self.fc(x)).mean(1, keepdim=True) + r


batch = 128
in_features = 768
out_features = 1024


def get_inputs():
    return [torch.randn(batch, in_features)]


def get_init_inputs():
    return [in_features, out_features]
