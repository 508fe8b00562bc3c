# A problem file of our own, in KernelBench's form: nn.MultiheadAttention
# as a transformer layer takes it, the sequence first (seq x batch x embd),
# then LayerNorm of the input plus the attention: for the mha family's
# norm_flash, x gathered from rows of seq-major order. 2 heads of 30, 70
# positions.
import torch
import torch.nn as nn


class Model(nn.Module):
    """Seq-first self-attention and a residual LayerNorm (eps 1e-6)."""
    def __init__(self, embd, heads):
        super().__init__()
        self.attn = nn.MultiheadAttention(embd, heads)
        self.norm = nn.LayerNorm(embd, eps=1e-6)

    def forward(self, x):
        return self.norm(x + self.attn(x, x, x, need_weights=False)[0])


seq_len = 70
batch_size = 2
embd = 60
heads = 2


def get_inputs():
    return [torch.randn(seq_len, batch_size, embd)]


def get_init_inputs():
    return [embd, heads]
