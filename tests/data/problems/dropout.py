# Dropout in training mode: not a function of its inputs (refused).
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.drop = nn.Dropout(p)

    def forward(self, x):
        return self.drop(x) * 2


n = 4096


def get_inputs():
    return [torch.rand(n, n)]


def get_init_inputs():
    return [0.5]
