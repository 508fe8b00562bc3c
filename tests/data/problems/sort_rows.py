# Sorting: no template family computes it (the llm backend serves it).
import torch
import torch.nn as nn


class Model(nn.Module):
    """Each row sorted."""
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.sort(x, dim=1)[0]


batch = 64
cols = 1000


def get_inputs():
    return [torch.randn(batch, cols)]


def get_init_inputs():
    return []
