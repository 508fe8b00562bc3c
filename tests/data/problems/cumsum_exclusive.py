# A problem file of our own, in KernelBench's form: an exclusive cumulative
# sum (a zero, then the sums of all but the last place), for the scan family.
import torch
import torch.nn as nn


class Model(nn.Module):
    """Exclusive cumulative sum along the last axis."""
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        head = torch.zeros_like(x.select(self.dim, 0).unsqueeze(self.dim))
        body = torch.cumsum(x.narrow(self.dim, 0, x.size(self.dim) - 1), dim=self.dim)
        return torch.cat((head, body), dim=self.dim)


batch = 32
length = 8191


def get_inputs():
    return [torch.rand(batch, length)]


def get_init_inputs():
    return [1]
