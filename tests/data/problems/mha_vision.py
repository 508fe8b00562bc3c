# A problem file of our own, in KernelBench's form: a feature map's
# pixels attend to each other through nn.MultiheadAttention, then
# LayerNorm of the map plus the attention, the map's layout kept (batch,
# channels, height, width): for the mha family's norm_flash. 3 heads of
# 16 channels, 9 x 14 pixels (126 positions: no tile of keys or rows
# divides them).
import torch
import torch.nn as nn


class Model(nn.Module):
    """Self-attention over a feature map's pixels, then a residual LayerNorm."""
    def __init__(self, channels, heads):
        super().__init__()
        self.attn = nn.MultiheadAttention(channels, heads)
        self.norm = nn.LayerNorm(channels)

    def forward(self, x):
        B, C, H, W = x.shape
        s = x.view(B, C, H * W).permute(2, 0, 1)
        a, _ = self.attn(s, s, s)
        return self.norm(a + s).permute(1, 2, 0).view(B, C, H, W)


batch_size = 3
channels = 48
heads = 3
height = 9
width = 14


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels, heads]
