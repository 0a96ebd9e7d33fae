"""Which query and key/value heads each rank handles at each UPipe stage (grouped-query attention included).

Notation: ``C`` ranks, ``H`` query heads, ``Hkv`` key/value heads, ``g = H / Hkv``.  When ``Hkv < C`` every
KV head is repeated ``C / Hkv`` times so that there are ``Hkv' = max(Hkv, C)`` KV heads and ``g' = H / Hkv'``.

The pairing is the one of the reference implementation: at *micro-stage* ``t`` (one query head per rank),

    kv'(t, r) = (t // g') * C + r,        query(t, r) = kv'(t, r) * g' + t % g',

so the ``C`` KV heads of chunk ``t // g'`` are shared by ``g'`` consecutive micro-stages.  A UPipe stage with
``U`` query heads (``u = U / C`` per rank) runs micro-stages ``s*u ... s*u + u - 1`` together.  ``query``
is a permutation of the heads (not the natural order ``0..H-1``) and ``query // g == kv`` for the original
KV head ``kv = kv' // (C / Hkv)``: the standard ``i // g`` GQA pairing is kept, only the order changes, and
:meth:`HeadGeometry.inverse_order` undoes it.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["HeadGeometry"]


def _positive_int(name: str, v) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError(f"{name} must be an int, got {type(v).__name__}")
    if v < 1:
        raise ValueError(f"{name} must be >= 1, got {v}")
    return v


@dataclass(frozen=True)
class HeadGeometry:
    """Head pairing and stage plan for headwise-chunked context parallelism (build it with :meth:`build`)."""

    cp_size: int
    num_heads: int
    num_kv_heads: int
    heads_per_stage: int

    @classmethod
    def build(cls, cp_size: int, num_heads: int, num_kv_heads: int, heads_per_stage: int | None = None):
        """Validate the head / world-size combination and return the geometry.

        Requirements (each raises ``ValueError`` naming the argument): ``num_heads % cp_size == 0``;
        ``num_heads % num_kv_heads == 0``; ``num_kv_heads % cp_size == 0`` or ``cp_size % num_kv_heads == 0``;
        ``heads_per_stage`` (default ``cp_size``) a multiple of ``cp_size`` dividing ``num_heads``; and the
        per-rank stage width ``u = heads_per_stage / cp_size`` and ``g'`` must divide one another.
        """
        c = _positive_int("cp_size", cp_size)
        h = _positive_int("num_heads", num_heads)
        hk = _positive_int("num_kv_heads", num_kv_heads)
        u_all = c if heads_per_stage is None else _positive_int("heads_per_stage", heads_per_stage)
        if h % c:
            raise ValueError(f"num_heads ({h}) must be divisible by the context-parallel size cp_size ({c})")
        if h % hk:
            raise ValueError(f"num_kv_heads ({hk}) must divide num_heads ({h})")
        if hk % c and c % hk:
            raise ValueError(
                f"num_kv_heads ({hk}) must be a multiple of cp_size ({c}) or divide it (then KV heads are replicated)"
            )
        if u_all % c or h % u_all:
            raise ValueError(
                f"heads_per_stage ({u_all}) must be a multiple of cp_size ({c}) that divides num_heads ({h})"
            )
        geo = cls(c, h, hk, u_all)
        u, g = geo.heads_per_rank, geo.group_size_eff
        if u % g and g % u:
            raise ValueError(
                f"heads_per_stage / cp_size ({u}) and the effective GQA ratio ({g}) must divide one another; "
                f"choose heads_per_stage in {geo.valid_heads_per_stage()}"
            )
        return geo

    # -- derived sizes -----------------------------------------------------------------------------------
    @property
    def group_size(self) -> int:
        """GQA ratio ``g = H / Hkv`` of the model."""
        return self.num_heads // self.num_kv_heads

    @property
    def kv_replicas(self) -> int:
        """How often each KV head is repeated (``C / Hkv`` when ``Hkv < C``, else 1)."""
        return max(1, self.cp_size // self.num_kv_heads)

    @property
    def kv_heads_eff(self) -> int:
        return self.num_kv_heads * self.kv_replicas

    @property
    def group_size_eff(self) -> int:
        """``g' = H / Hkv'`` after replication."""
        return self.num_heads // self.kv_heads_eff

    @property
    def heads_per_rank(self) -> int:
        """``u = U / C``: query heads each rank attends per stage."""
        return self.heads_per_stage // self.cp_size

    @property
    def num_stages(self) -> int:
        """Pipe degree ``P = H / U``."""
        return self.num_heads // self.heads_per_stage

    def valid_heads_per_stage(self) -> list[int]:
        c, h, g = self.cp_size, self.num_heads, self.num_heads // max(1, self.num_kv_heads * self.kv_replicas)
        return [c * u for u in range(1, h // c + 1) if h % (c * u) == 0 and (u % g == 0 or g % u == 0)]

    # -- pairing -----------------------------------------------------------------------------------------
    def _check(self, t: int, r: int, n_t: int) -> None:
        if not 0 <= t < n_t:
            raise ValueError(f"stage index must lie in [0, {n_t}), got {t}")
        if not 0 <= r < self.cp_size:
            raise ValueError(f"rank must lie in [0, {self.cp_size}), got {r}")

    def kv_head_eff(self, t: int, r: int) -> int:
        """Replicated KV head index ``kv'(t, r)`` at micro-stage ``t`` on rank ``r``."""
        self._check(t, r, self.num_heads // self.cp_size)
        return (t // self.group_size_eff) * self.cp_size + r

    def kv_head(self, t: int, r: int) -> int:
        """Original KV head used at micro-stage ``t`` (one query head per rank) on rank ``r``."""
        return self.kv_head_eff(t, r) // self.kv_replicas

    def query_head(self, t: int, r: int) -> int:
        """Query head attended at micro-stage ``t`` on rank ``r``."""
        return self.kv_head_eff(t, r) * self.group_size_eff + t % self.group_size_eff

    def order(self) -> list[int]:
        """Query heads in UPipe order: position ``t * C + r`` holds ``query_head(t, r)``."""
        c = self.cp_size
        return [self.query_head(t, r) for t in range(self.num_heads // c) for r in range(c)]

    def inverse_order(self) -> list[int]:
        """``inv[h]`` = position of query head ``h`` in :meth:`order` (so ``order()[inv[h]] == h``)."""
        inv = [0] * self.num_heads
        for pos, h in enumerate(self.order()):
            inv[h] = pos
        return inv

    # -- stage plan (what the UPipe loop uses) ------------------------------------------------------------
    def stage_query_heads(self, s: int) -> list[int]:
        """Query heads of stage ``s`` in all-to-all order: rank-major, ``u`` heads per rank."""
        u = self.heads_per_rank
        if not 0 <= s < self.num_stages:
            raise ValueError(f"stage must lie in [0, {self.num_stages}), got {s}")
        return [self.query_head(s * u + j, r) for r in range(self.cp_size) for j in range(u)]

    def stage_kv_chunk(self, s: int) -> int:
        """Index of the first KV chunk (``C`` replicated KV heads) stage ``s`` needs."""
        return (s * self.heads_per_rank) // self.group_size_eff

    def stage_kv_heads(self, s: int) -> list[int]:
        """Original KV heads of stage ``s`` in all-to-all order: rank-major, ``max(1, u // g')`` per rank."""
        u, g, c = self.heads_per_rank, self.group_size_eff, self.cp_size
        n = max(1, u // g)
        first = self.stage_kv_chunk(s)
        return [((first + i) * c + r) // self.kv_replicas for r in range(c) for i in range(n)]

    def stage_starts_kv(self, s: int) -> bool:
        """True if stage ``s`` needs a KV chunk the previous stage did not have."""
        return (
            s == 0 or self.stage_kv_chunk(s) != self.stage_kv_chunk(s - 1) or self.heads_per_rank > self.group_size_eff
        )

    def stage_ends_kv(self, s: int) -> bool:
        """True if the KV chunk(s) of stage ``s`` are not used by stage ``s + 1``."""
        return s == self.num_stages - 1 or self.stage_starts_kv(s + 1)

    def validate(self) -> None:
        """Check the pairing invariants; raise ``ValueError`` if one fails.

        Every query head appears exactly once over (stage, rank); every query head is paired with KV head
        ``query // g``; within a stage, rank ``r``'s ``u`` query heads use only rank ``r``'s KV heads.
        """
        c, h, g = self.cp_size, self.num_heads, self.group_size
        seen = sorted(self.order())
        if seen != list(range(h)):
            raise ValueError(f"query heads are not a permutation of 0..{h - 1}: {seen}")
        for t in range(h // c):
            for r in range(c):
                if self.query_head(t, r) // g != self.kv_head(t, r):
                    raise ValueError(f"micro-stage {t}, rank {r}: query head does not match its KV head")
        u, ge = self.heads_per_rank, self.group_size_eff
        n = max(1, u // ge)
        for s in range(self.num_stages):
            qs, ks = self.stage_query_heads(s), self.stage_kv_heads(s)
            for r in range(c):
                mine_q = qs[r * u : (r + 1) * u]
                mine_k = ks[r * n : (r + 1) * n]
                for j, q in enumerate(mine_q):
                    local = j // ge if u >= ge else 0
                    if q // g != mine_k[local]:
                        raise ValueError(f"stage {s}, rank {r}: local query {j} is not paired with its KV head")
