# A problem file of our own, in KernelBench's form: causal scaled dot-product
# attention at sizes no tile divides (70 queries, 93 keys, head dimension 40,
# values of 24), for the attention family. F.scaled_dot_product_attention's
# mask is aligned at the top left: query i sees keys 0 to i.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Causal attention, queries and keys of different lengths."""
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


batch = 3
heads = 5
q_len = 70
kv_len = 93
head_dim = 40
v_dim = 24


def get_inputs():
    return [torch.randn(batch, heads, q_len, head_dim), torch.randn(batch, heads, kv_len, head_dim),
            torch.randn(batch, heads, kv_len, v_dim)]


def get_init_inputs():
    return []
