# A problem file of our own, in KernelBench's form: attention written out
# (the scores divided by the root of the head dimension, a softmax over the
# keys, the product with the values) on a 3-D batch, for the attention
# family's importer and kernels; the sizes tile nothing.
import math

import torch
import torch.nn as nn


class Model(nn.Module):
    """softmax(Q K^T / sqrt(d)) V."""
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        s = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(q.size(-1))
        return torch.matmul(torch.softmax(s, dim=-1), v)


batch = 7
q_len = 131
kv_len = 77
head_dim = 72
v_dim = 136


def get_inputs():
    return [torch.rand(batch, q_len, head_dim), torch.rand(batch, kv_len, head_dim),
            torch.rand(batch, kv_len, v_dim)]


def get_init_inputs():
    return []
