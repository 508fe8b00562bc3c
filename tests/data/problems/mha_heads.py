# A problem file of our own, in KernelBench's form: multi-head
# self-attention without a mask, for the mha family: 4 heads of an odd 25
# (no 16-byte load or 8-byte store of a head's row lines up), 45
# positions, the scores over the root of the head dimension, F.linear in
# and out.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Self-attention over all positions, heads split and merged by views."""
    def __init__(self, n_embd, n_head):
        super().__init__()
        self.qkv = nn.Linear(n_embd, 3 * n_embd)
        self.out = nn.Linear(n_embd, n_embd)
        self.n_head = n_head

    def forward(self, x):
        B, T, C = x.shape
        h = self.n_head
        q, k, v = self.qkv(x).split(C, dim=2)
        q = q.view(B, T, h, C // h).transpose(1, 2)
        k = k.view(B, T, h, C // h).transpose(1, 2)
        v = v.view(B, T, h, C // h).transpose(1, 2)
        att = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(C // h)
        y = torch.matmul(F.softmax(att, dim=-1), v)
        return self.out(y.transpose(1, 2).contiguous().view(B, T, C))


batch_size = 2
seq_len = 45
n_embd = 100
n_head = 4


def get_inputs():
    return [torch.randn(batch_size, seq_len, n_embd)]


def get_init_inputs():
    return [n_embd, n_head]
