# A problem file of our own, in KernelBench's form: a hinge loss whose
# labels, one per column, broadcast along the rows; its sizes are tied
# (the (n,) labels only broadcast against (batch, *shape) when batch
# equals shape[0]), as KernelBench's hinge loss has them.
import torch
import torch.nn as nn


class Model(nn.Module):
    """The mean hinge loss of scores against +-1 labels."""
    def __init__(self):
        super().__init__()

    def forward(self, scores, labels):
        return torch.mean(torch.clamp(1 - scores * labels, min=0))


batch = 1024
shape = (1024,)


def get_inputs():
    return [torch.randn(batch, *shape), torch.randint(0, 2, (batch,)).float() * 2 - 1]


def get_init_inputs():
    return []
