# A problem file of our own, in KernelBench's form: a linear layer, an
# average pool of 4 along its features (the rows viewed as one channel),
# and each row's maximum. The rest reads the pool's result through a
# squeeze, a view of all of it: the chain (docs/tasks.md) is gemm, pool,
# mid_reduce, the buffer between the last two of the squeezed shape.
import torch
import torch.nn as nn


class Model(nn.Module):
    """max over features of avg_pool1d(x @ W.T + b, 4)."""
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.pool = nn.AvgPool1d(4)

    def forward(self, x):
        y = self.pool(self.fc(x).unsqueeze(1)).squeeze(1)
        return torch.max(y, dim=1).values


batch = 160
in_features = 384
out_features = 2048


def get_inputs():
    return [torch.randn(batch, in_features)]


def get_init_inputs():
    return [in_features, out_features]
