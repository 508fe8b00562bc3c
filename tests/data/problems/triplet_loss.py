# A problem file of our own, in KernelBench's form: the triplet margin loss
# (two distances per row, a hinge, the mean over rows), for the
# row_reduce family.
import torch
import torch.nn as nn


class Model(nn.Module):
    """Triplet margin loss."""
    def __init__(self, margin):
        super().__init__()
        self.loss = nn.TripletMarginLoss(margin=margin)

    def forward(self, anchor, positive, negative):
        return self.loss(anchor, positive, negative)


batch = 100
dim = 2049


def get_inputs():
    return [torch.randn(batch, dim), torch.randn(batch, dim), torch.randn(batch, dim)]


def get_init_inputs():
    return [0.5]
