"""A reusable graph convolutional encoder (torch + torch_geometric): node, graph and global embeddings.

The layer is the JobFusion/Decima aggregation (eq. 4 of the JobFusion paper), generalised to
several edge relations::

    e_v = g( sum_r sum_{u in N_r(v)} w_uv * f_r(e_u) ) + e_v

``N_r(v)`` are the sources of the edges of relation ``r`` that point at ``v`` (in a DAG: the
children of ``v``), ``w_uv`` an optional edge weight (1 by default), ``f_r`` a small MLP per relation
and ``g`` a small MLP shared by all relations; the ``+ e_v`` term is the skip connection (the node's
own features ``x_v`` at the first layer, after a linear projection to the hidden width). The sum is
torch_geometric's ``MessagePassing(aggr="add")``.

On top of the node embeddings, :class:`GraphEncoder` returns one embedding per graph of a batch
(``sum`` of its node embeddings through an MLP: the DAG-level embedding of JobFusion) and one global
embedding (the sum of the graph embeddings through another MLP). A batch of graphs is one disjoint
union (:func:`collate`), with ``batch`` giving each node's graph, as in torch_geometric.

Node kinds (apps and hosts; stages) share one feature width: each kind fills its own columns and a
one-hot kind column (:class:`Graph`), so one input projection acts as one projection per kind.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import nn
from torch_geometric.nn import MessagePassing, global_add_pool


def mlp(n_in: int, hidden: int, n_out: int, *, zero_last: bool = False) -> nn.Sequential:
    """``Linear -> ReLU -> Linear`` (the last layer zero-initialised when ``zero_last``)."""
    net = nn.Sequential(nn.Linear(n_in, hidden), nn.ReLU(), nn.Linear(hidden, n_out))
    if zero_last:
        last = net[2]
        assert isinstance(last, nn.Linear)
        nn.init.zeros_(last.weight)
        nn.init.zeros_(last.bias)
    return net


class SumConv(MessagePassing):
    """One eq.-4 layer over ``n_relations`` edge relations (see the module docstring).

    Args:
        dim: embedding width ``H`` (input and output).
        n_relations: number of edge relations ``T``.
    """

    def __init__(self, dim: int, n_relations: int) -> None:
        super().__init__(aggr="add")
        self.dim, self.n_relations = dim, n_relations
        self.f = nn.ModuleList([mlp(dim, dim, dim) for _ in range(n_relations)])
        self.g = mlp(dim, dim, dim)

    def forward(self, h: torch.Tensor, edge_index: torch.Tensor, edge_type: torch.Tensor,
                edge_weight: torch.Tensor | None = None) -> torch.Tensor:
        """New embeddings.

        Args:
            h: node embeddings, shape ``(N, H)``.
            edge_index: ``[source, target]`` per edge, shape ``(2, E)`` int64.
            edge_type: relation per edge in ``0 .. T-1``, shape ``(E,)`` int64.
            edge_weight: weight per edge, shape ``(E,)`` (default 1).

        Returns:
            Shape ``(N, H)``.
        """
        n = h.shape[0]
        fx = torch.cat([f(h) for f in self.f], dim=0)  # (T * N, H): f_r(e_u) at row r * N + u
        src = edge_index[0] + edge_type * n
        w = edge_weight if edge_weight is not None else torch.ones(src.shape[0], dtype=h.dtype)
        agg = self.propagate(torch.stack([src, edge_index[1]]), x=(fx, h), w=w,
                             size=(self.n_relations * n, n))
        return self.g(agg) + h

    def message(self, x_j: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        """``w_uv * f_r(e_u)`` per edge, shape ``(E, H)``."""
        return w.unsqueeze(-1) * x_j


@dataclass
class Graph:
    """A graph (or a disjoint union of graphs) as tensors.

    Attributes:
        x: node features, shape ``(N, F)`` float32. Nodes of different kinds share the width ``F``:
            give each kind its own columns (zeros elsewhere) and a one-hot kind column, which is the
            same as one input projection per kind.
        edge_index: ``[source, target]``, shape ``(2, E)`` int64.
        edge_type: relation per edge, shape ``(E,)`` int64.
        edge_weight: weight per edge, shape ``(E,)`` float32.
        batch: graph of each node, shape ``(N,)`` int64 (all zeros for one graph).
        n_graphs: number of graphs.
    """

    x: torch.Tensor
    edge_index: torch.Tensor
    edge_type: torch.Tensor
    edge_weight: torch.Tensor
    batch: torch.Tensor
    n_graphs: int = 1


def collate(graphs: Sequence[Graph]) -> tuple[Graph, torch.Tensor]:
    """The disjoint union of one-graph ``graphs``: nodes graph by graph, edges shifted.

    Returns:
        ``(union, offsets)``: ``offsets[i]`` is the global index of graph ``i``'s node 0, shape
        ``(n_graphs,)`` int64.
    """
    sizes = torch.tensor([g.x.shape[0] for g in graphs], dtype=torch.int64)
    offsets = torch.cumsum(sizes, 0) - sizes
    union = Graph(torch.cat([g.x for g in graphs]),
                  torch.cat([g.edge_index + offsets[i] for i, g in enumerate(graphs)], 1),
                  torch.cat([g.edge_type for g in graphs]), torch.cat([g.edge_weight for g in graphs]),
                  torch.repeat_interleave(torch.arange(len(graphs)), sizes), len(graphs))
    return union, offsets


class GraphEncoder(nn.Module):
    """Input projection, ``layers`` :class:`SumConv` layers, graph and global embeddings.

    Args:
        in_dim: node feature width ``F``.
        dim: embedding width ``H``.
        n_relations: edge relations ``T``.
        layers: number of message-passing layers.
        pool: ``"sum"`` (JobFusion's DAG summary) or ``"mean"`` (size-independent: a policy trained on
            small graphs then sees the same scale on large ones).
    """

    def __init__(self, in_dim: int, dim: int, n_relations: int, layers: int = 2, pool: str = "sum"
                 ) -> None:
        super().__init__()
        if pool not in ("sum", "mean"):
            raise ValueError(f"pool must be 'sum' or 'mean', got {pool!r}")
        self.dim, self.pool = dim, pool
        self.input = nn.Linear(in_dim, dim)
        self.convs = nn.ModuleList([SumConv(dim, n_relations) for _ in range(layers)])
        self.graph_mlp = mlp(dim, dim, dim)
        self.global_mlp = mlp(dim, dim, dim)

    def forward(self, g: Graph) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Embeddings of ``g``.

        Returns:
            ``(nodes, graphs, global)``: shapes ``(N, H)``, ``(n_graphs, H)`` and ``(H,)``.
        """
        h = self.input(g.x)
        for conv in self.convs:
            h = conv(h, g.edge_index, g.edge_type, g.edge_weight)
        pooled = global_add_pool(h, g.batch, size=g.n_graphs)
        if self.pool == "mean":
            n = torch.bincount(g.batch, minlength=g.n_graphs).clamp(min=1).to(h.dtype)
            pooled = pooled / n.unsqueeze(-1)
        graphs = self.graph_mlp(pooled)
        glob = graphs.sum(0) if self.pool == "sum" else graphs.mean(0)
        return h, graphs, self.global_mlp(glob)


__all__ = ["Graph", "GraphEncoder", "SumConv", "collate", "mlp"]
