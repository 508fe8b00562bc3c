# Half-precision inputs: htam serves f32, f64, i32 and i64 (refused).
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x * 2


n = 1024


def get_inputs():
    return [torch.rand(n, n).half()]


def get_init_inputs():
    return []
