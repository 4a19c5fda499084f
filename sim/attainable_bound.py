#!/usr/bin/env python3
"""Attainable bound of one alltoallv algorithm on a simulated platform
(docs/results/simulation-gap.md,
"The gap to the attainable bound").

Today's lower bound (`tuna sim bound`, python/tuna_tools/sim.py) is algorithm-free and
topology-free: ceil(log2 P) rounds of os + or + one hop, or the busiest node's bytes over its
injection bandwidth. This script prices one algorithm's *real schedule* on the platform the
simulator runs:

  - the schedule is rebuilt in Python from the algorithm's C source (which rank sends how many
    bytes to which rank in which phase of which batch: TuNA's digit hops with the blocks' real
    sizes, hierarchical TuNA's intra-node engine and inter-node messages, the Bruck variants,
    the linear exchanges), metadata messages included;
  - every message is routed over the platform's links as SimGrid routes it (dimension-order
    routing on the TORUS zone, minimal routing on the DRAGONFLY zone; the cluster loopback,
    whose bandwidth SimGrid does not share between flows, inside a node);
  - every message costs the sending rank os and, if it is eager, the receiving rank or
    (SMPI's smpi/ois and smpi/or, serialised on the rank's actor; SMPI charges or only for
    detached, i.e. eager, sends: none in the rendezvous model).

Per batch (the messages a rank has in flight between two waits) three terms:
  O  the busiest rank's overheads: (messages sent) x os + (eager messages received) x or;
  L  the busiest directed link's bytes over its bandwidth, per phase (metadata, then data:
     a data receive is posted only after its metadata arrived, and SMPI starts a transfer
     when both sides are posted, in the eager as in the rendezvous model);
  C  the critical chain: a phase's transfers start when their sends (os apart, after the
     previous phase; TuNA's data sends right after its metadata sends) and their receives
     (after the previous phase) are posted; then L(phase), the longest route's latency and,
     for eager messages, or per message received.
  batch >= max(O, C); attainable = sum over batches of max(O, C).
Strict (schedule-free) companions printed next to it: the routed cut bound (bytes that must
cross the busiest cut of the nodes the run uses, over the links SimGrid's routes give that
cut) and today's bound. The attainable value is a bound for a bulk-synchronous run of the
schedule (a rank that races ahead into the next batch can overlap it), so a measurement
slightly below it is possible; far above it means the simulator charges something else.

Usage (PYTHONPATH=python):
  sim/attainable_bound.py --platform fugaku --procs 256,1024 -s 16 \\
      -a tuna:radix=4 -a coalesced:radix=4,block=8 [--meta-word 8] [--rounds] [--json F]
  (--meta-word: 'adaptive', the default, is what tuna sends; 8 prices the wide sizes of before
  the narrow encoding, the "before" columns of docs/simulation.md)
"""
import argparse
import json
import math
import os
import sys
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))

import numpy as np  # noqa: E402

from tuna_tools import sim as tsim  # noqa: E402


# ------------------------------------------------------------------ routing (SimGrid's)

class Network:
    """Directed links between the nodes of a platform, routed as SimGrid 3.32/3.35 does."""

    def __init__(self, plat):
        self.plat = plat
        self.topo = plat["topology"]
        self._cache = {}

    def route(self, a, b):
        """(list of directed link ids, latency) from node a to node b (a != b)."""
        key = (a, b)
        if key not in self._cache:
            if self.topo == "torus":
                self._cache[key] = self._torus(a, b)
            elif self.topo == "dragonfly":
                self._cache[key] = self._dragonfly(a, b)
            else:
                raise ValueError(f"topology {self.topo}: routing not mirrored "
                                 "(torus and dragonfly are)")
        return self._cache[key]

    def link_bw(self, link):
        return link[-1]

    def _torus(self, src, dst):
        """TorusZone::get_local_route: dimension by dimension, lowest first; right when the
        target is in (my, my + d/2] or when my > d/2 and (my + d/2) % d >= target (the
        coordinates of the *source* decide), one SPLITDUPLEX link direction per hop."""
        dims = self.plat["dims"]
        bw = self.plat["link_bw"]
        my, tg = [], []
        prod = 1
        for d in dims:
            my.append((src // prod) % d)
            tg.append((dst // prod) % d)
            prod *= d
        links = []
        cur = src
        while cur != dst:
            prod = 1
            for j, d in enumerate(dims):
                if (cur // prod) % d != (dst // prod) % d:
                    if (tg[j] > my[j] and tg[j] <= my[j] + d // 2) or \
                            (my[j] > d // 2 and (my[j] + d // 2) % d >= tg[j]):
                        nxt = cur + prod - prod * d if (cur // prod) % d == d - 1 else cur + prod
                    else:
                        nxt = cur - prod + prod * d if (cur // prod) % d == 0 else cur - prod
                    links.append(("t", cur, nxt, bw))
                    cur = nxt
                    break
                prod *= d
        return links, len(links) * self.plat["link_lat"]

    def _dragonfly(self, src, dst):
        """DragonflyZone::get_local_route (minimal, SimGrid 3.32-3.35) link for link: node ->
        router; between groups a green link to the router whose blade number is the target
        group, a black link to chassis 0, the group pair's one blue link (to the target
        group's chassis 0, blade = source group); then a green link to the target blade and a
        black link to the target chassis. SimGrid continues after that green link from the
        target blade's router in chassis 0 (the chassis index is dropped), so a route that
        changes blade starts its black hop in chassis 0 (or makes none when the target is in
        chassis 0); mirrored as is, it decides which links runs over two chassis share.
        SimGrid indexes green links by the target *group*: more groups than blades per
        chassis is out of its range (an error here)."""
        (g_n, g_l), (c_n, c_l), (b_n, b_l), per_blade = self.plat["dragonfly"]
        bw, lat = self.plat["link_bw"], self.plat["link_lat"]

        def coords(i):
            per_chassis = b_n * per_blade
            per_group = c_n * per_chassis
            return (i // per_group, (i % per_group) // per_chassis,
                    (i % per_chassis) // per_blade, i % per_blade)
        gs, cs, bs, ns = coords(src)
        gd, cd, bd, nd = coords(dst)
        links = [("up", src, bw)]
        cur = (gs, cs, bs)
        if cur != (gd, cd, bd):
            if gs != gd:
                if gd >= b_n:
                    raise ValueError(f"dragonfly: group {gd} >= {b_n} blades per chassis "
                                     "(SimGrid's green_links_[group] is out of range)")
                if bs != gd:
                    links.append(("green", cur, (gs, cs, gd), b_l * bw))
                    cur = (gs, cs, gd)
                if cur[1] != 0:
                    links.append(("black", cur, (gs, 0, gd), c_l * bw))
                    cur = (gs, 0, gd)
                links.append(("blue", cur, (gd, 0, gs), g_l * bw))
                cur = (gd, 0, gs)
            if bd != cur[2]:
                links.append(("green", cur, (gd, cur[1], bd), b_l * bw))
                cur = (gd, 0, bd)
            if cd != cur[1]:
                links.append(("black", cur, (gd, cd, cur[2]), c_l * bw))
        links.append(("down", dst, bw))
        return links, len(links) * lat

    def cut_bound(self, nodes_used, rpn, sizes):
        """Routed cut bound: for cuts of the used nodes into two halves along each used
        coordinate (torus) or router level (dragonfly), the bytes that must go from one
        side to the other over the directed links SimGrid's routes use from that side to
        the other (every route between two used nodes stays among links the cut counts:
        the runs fill the lowest node ids). Returns (seconds, description)."""
        N = nodes_used
        if N < 2:
            return 0.0, "one node"
        node = np.arange(sizes.shape[0]) // rpn
        nb = np.zeros((N, N))
        np.add.at(nb, (node[:, None].repeat(sizes.shape[1], 1), node[None, :].repeat(
            sizes.shape[0], 0)), sizes)
        best = (0.0, "")
        cuts = []
        if self.topo == "torus":
            prod = 1
            for j, d in enumerate(self.plat["dims"]):
                coord = (np.arange(N) // prod) % d
                span = coord.max() + 1
                if span > 1:
                    cuts.append((f"torus dim {j} (coordinate < {span // 2})",
                                 coord < span // 2))
                prod *= d
        else:
            (g_n, _), (c_n, _), (b_n, _), per_blade = self.plat["dragonfly"]
            for name, div in (("blade", per_blade), ("chassis", b_n * per_blade),
                              ("group", c_n * b_n * per_blade)):
                grp = np.arange(N) // div
                if grp.max() >= 1:
                    cuts.append((f"dragonfly {name}s < {(grp.max() + 1) // 2}",
                                 grp < (grp.max() + 1) // 2))
            cuts.append(("half the nodes", np.arange(N) < N // 2))
        for name, side in cuts:
            a = np.where(side)[0]
            b = np.where(~side)[0]
            if len(a) == 0 or len(b) == 0:
                continue
            for (x, y) in ((a, b), (b, a)):
                # A route from x to y leaves x by some link; the set of those first leaving
                # links, over all routes, is a cut the bytes of those routes cross. (SimGrid's
                # dragonfly routes can reach the other side without such a link, e.g. from
                # chassis 1 to chassis 0 by one green hop: those bytes do not count.)
                byts = 0.0
                first = set()
                for s in x:
                    for t in y:
                        for ln in self.route(int(s), int(t))[0]:
                            if self._leaves(ln, side if x is a else ~side):
                                first.add(ln)
                                byts += nb[s, t]
                                break
                cap = sum(self.link_bw(ln) for ln in first)
                t_cut = byts / cap if cap else 0.0
                if t_cut > best[0]:
                    best = (t_cut, f"{name}: {byts:.0f} B over {len(first)} links")
        return best

    def _leaves(self, ln, side_x):
        """Whether directed link ln goes from a node on side_x to one off it (torus), or is
        the first link of a route that leaves side_x's routers (dragonfly)."""
        if ln[0] == "t":
            a, b = ln[1], ln[2]
            ina = a < len(side_x) and side_x[a]
            inb = b < len(side_x) and side_x[b]
            return ina and not inb
        if ln[0] in ("green", "black", "blue"):
            (g, c, bl) = ln[1]
            (g2, c2, bl2) = ln[2]
            (_, _), (c_n, _), (b_n, _), per_blade = self.plat["dragonfly"]
            first_node = lambda r: (r[0] * c_n + r[1]) * b_n * per_blade + r[2] * per_blade
            ina = first_node(ln[1]) < len(side_x) and side_x[first_node(ln[1])]
            inb = first_node(ln[2]) < len(side_x) and side_x[first_node(ln[2])]
            return ina and not inb
        if ln[0] == "up":
            return False
        return False


# ------------------------------------------------------------------ schedules

class Phase:
    """Messages posted together whose completion the next phase waits for."""

    def __init__(self, name, early=False):
        self.name = name
        self.early = early      # its sends are posted before the previous phase's wait
        self.msgs = []          # (src rank, dst rank, bytes) -- bytes > 0 or metadata

    def add(self, src, dst, nbytes):
        self.msgs.append((int(src), int(dst), float(nbytes)))


def tuna_rounds(n, r):
    """(x, px, [z...]) of TuNA's digits: rounds (x, z) with z*r^x < n (tuna_rounds_schedule_of)."""
    out = []
    w = 0
    pw = 1
    while pw < n:
        w += 1
        pw *= r
    px = 1
    for x in range(w):
        zs = [z for z in range(1, r) if z * px < n]
        out.append((x, px, zs))
        px *= r
    return out


def round_blocks(n, px, r, z):
    """Block indices i in [1, n) whose digit at place px is z (round_blocks in the engine)."""
    i = np.arange(1, n)
    return i[(i // px) % r == z]


def header_of(meta_word):
    """The engine's and the hierarchical metadata's header byte (tuna_meta_encode): only in
    the narrow encoding; two-phase Bruck's narrow sizes have none (the length says it)."""
    return 1 if meta_word is meta_word_adaptive else 0


def engine_batches(n, r, batch, blk_bytes, members, meta_word, nsub=1, name="tuna", hdr=None):
    """The TuNA engine's batches over a group of n members (members[j] = rank of member j,
    for every group at once: members is a G x n array). blk_bytes(s, d) -> array G x ... of
    the bytes member s holds for member d (its N sub-blocks summed): called with s, d as
    G x k index arrays. Returns a list of (metadata Phase, data Phase)."""
    if n <= 1:
        return []
    if hdr is None:
        hdr = header_of(meta_word)
    r = min(max(r, 2), n)
    b = min(max(batch, 1), r - 1)
    out = []
    G = members.shape[0]
    me = np.arange(n)
    for x, px, zs in tuna_rounds(n, r):
        for k0 in range(0, len(zs), b):
            # the engine posts the data sends before it waits for the metadata
            meta = Phase(f"{name} ({x},{zs[k0]}) metadata")
            data = Phase(f"{name} ({x},{zs[k0]}) data", early=True)
            for z in zs[k0:k0 + b]:
                idx = round_blocks(n, px, r, z)
                dist = z * px
                # block i at member q now: source s = q - (i mod px), destination s + i
                s = (me[:, None] - (idx[None, :] % px)) % n          # n x k
                d = (s + idx[None, :]) % n
                byts = blk_bytes(s, d)                               # G x n x k
                tot = byts.sum(axis=2)                               # G x n
                for gi in range(G):
                    for q in range(n):
                        src, dst = members[gi, q], members[gi, (q + dist) % n]
                        meta.add(src, dst, len(idx) * nsub * meta_word(byts[gi, q]) + hdr)
                        if tot[gi, q] > 0:
                            data.add(src, dst, tot[gi, q])
            out.append((meta, data))
    return out


def meta_word_fixed(width):
    return lambda blocks: width


def meta_word_adaptive(blocks):
    """Bytes per size word when a round announces its sizes in the narrowest of 0 (all
    empty), 1, 2, 4 or 8 bytes that holds its largest block."""
    m = float(np.max(blocks)) if np.size(blocks) else 0.0
    if m == 0:
        return 0
    for w in (1, 2, 4):
        if m < 2 ** (8 * w):
            return w
    return 8


def schedule(alg, params, P, rpn, sizes, meta_word):
    """A list of batches; a batch is a list of Phases run one after the other."""
    batches = []
    if alg == "tuna":
        r = int(params.get("radix", math.ceil(math.sqrt(P))))
        b = int(params.get("block", P))
        members = np.arange(P)[None, :]

        def bb(s, d):
            return sizes[s, d][None, :, :]
        for meta, data in engine_batches(P, r, b, bb, members, meta_word):
            batches.append([meta, data])
        return batches
    if alg in ("coalesced", "staggered"):
        Q = rpn
        N = P // Q
        r = int(params.get("radix", Q))
        r = min(max(r, 2), Q)
        # sub-block bytes: member l of node k sends to member g: sum over nodes j of
        # sizes[k*Q + l, j*Q + g]; the own block (l == g) does not travel.
        S4 = sizes.reshape(N, Q, N, Q)                    # [k, l, j, g]
        intra = S4.sum(axis=2)                            # [k, l, g] summed over dest nodes
        members = np.arange(P).reshape(N, Q)

        def bb(s, d):
            return intra[:, s, d]                         # N x n x k
        for meta, data in engine_batches(Q, r, Q, bb, members, meta_word, nsub=N,
                                         name="intra"):
            batches.append([meta, data])
        if N > 1:
            # inter-node metadata: Q sizes to each remote node, all at once
            meta = Phase("inter metadata")
            for k in range(N):
                for g in range(Q):
                    for dd in range(1, N):
                        j = (k + dd) % N
                        # what (k, g) forwards to (j, g): node k's blocks for rank j*Q+g
                        blk = S4[k, :, j, g]
                        meta.add(k * Q + g, j * Q + g, Q * meta_word(blk) + header_of(meta_word))
            batches.append([meta])
            if alg == "coalesced":
                blk = int(params.get("block", 8))
                blk = min(max(blk, 1), N - 1)
                for d0 in range(1, N, blk):
                    ph = Phase(f"inter data d={d0}..{min(d0 + blk - 1, N - 1)}")
                    for dd in range(d0, min(d0 + blk, N)):
                        for k in range(N):
                            j = (k + dd) % N
                            for g in range(Q):
                                nbytes = S4[k, :, j, g].sum()
                                if nbytes > 0:
                                    ph.add(k * Q + g, j * Q + g, nbytes)
                    batches.append([ph])
            else:
                blk = int(params.get("block", 32))
                total = (N - 1) * Q
                blk = min(max(blk, 1), total)
                for t0 in range(0, total, blk):
                    ph = Phase(f"inter data t={t0}..")
                    for t in range(t0, min(t0 + blk, total)):
                        dd = 1 + t % (N - 1)
                        for k in range(N):
                            j = (k + dd) % N
                            for g in range(Q):
                                l = (g + t // (N - 1)) % Q
                                nbytes = S4[k, l, j, g]
                                if nbytes > 0:
                                    ph.add(k * Q + g, j * Q + g, nbytes)
                    batches.append([ph])
        return batches
    if alg == "twophase-bruck":
        members = np.arange(P)[None, :]

        def bb(s, d):
            return sizes[s, d][None, :, :]
        # blocking MPI_Sendrecv of the sizes, then of the data, per round
        for meta, data in engine_batches(P, 2, 1, bb, members, meta_word, hdr=0):
            data.early = False
            batches.append([meta, data])
        return batches
    if alg in ("padded-bruck", "bruck"):
        B = float(sizes.max())
        # the core's allreduce (40 bytes, recursive doubling) first
        p2 = 1 << (P.bit_length() - 1)
        if p2 != P:
            ph = Phase("allreduce fold")
            for i in range(p2, P):
                ph.add(i, i - p2, 40)
            batches.append([ph])
        k = 1
        while k < p2:
            ph = Phase(f"allreduce 2^{int(math.log2(k))}")
            for i in range(p2):
                ph.add(i, i ^ k, 40)
            batches.append([ph])
            k *= 2
        if p2 != P:
            ph = Phase("allreduce unfold")
            for i in range(p2, P):
                ph.add(i - p2, i, 40)
            batches.append([ph])
        k = 1
        while k < P:
            nk = sum(1 for i in range(1, P) if i & k)
            ph = Phase(f"bruck distance {k}")
            for i in range(P):
                ph.add(i, (i + k) % P, nk * B)
            batches.append([ph])
            k *= 2
        return batches
    if alg in ("spreadout", "linear", "scattered"):
        blk = P if alg != "scattered" else int(params.get("block", 32))
        blk = min(max(blk, 1), P)
        ranks = np.arange(P)
        for i0 in range(1, P, blk):
            ph = Phase(f"{alg} peers +{i0}..")
            for i in range(i0, min(i0 + blk, P)):
                dst = (ranks + i) % P
                for s in range(P):
                    if sizes[s, dst[s]] > 0:
                        ph.add(s, dst[s], sizes[s, dst[s]])
            batches.append([ph])
        return batches
    raise ValueError(f"algorithm {alg}: no schedule mirror")


# ------------------------------------------------------------------ pricing

# SMPI (smpi_request.cpp, 3.32 and 3.35): a send shorter than smpi/send-is-detached-thresh
# (default 65536; 0 in the rendezvous model of --scale) is detached ("eager"). An MPI_Isend
# sleeps smpi/ois whether detached or not; a receive sleeps smpi/or only when it completes a
# *detached* send. So in the rendezvous model receives cost nothing.
EAGER_THRESH = {"eager": 65536, "rendezvous": 0}


def price(batches, P, rpn, plat, net, model="eager"):
    """Per batch: O (busiest rank's overheads), L per phase (busiest link), C (chain);
    totals and per-rank volumes."""
    os_, or_ = plat["os"], plat["or"]
    thresh = EAGER_THRESH[model]
    rows = []
    sent_msgs = np.zeros(P)
    recv_msgs = np.zeros(P)
    sent_bytes = np.zeros(P)
    link_total = defaultdict(float)
    for bi, phases in enumerate(batches):
        s_cnt = np.zeros(P)
        r_cnt = np.zeros(P)
        chain = 0.0       # end of the previous phase on the critical chain
        ends = []         # chain end of every phase, from the batch's start
        posted = 0        # sends the busiest rank posted so far in this batch
        lsum = 0.0
        nbytes = 0.0
        for ph in phases:
            load = defaultdict(float)
            lat_max = 0.0
            intra_max = 0.0
            ps = np.zeros(P)
            pr = np.zeros(P)
            for (s, d, b) in ph.msgs:
                s_cnt[s] += 1
                ps[s] += 1
                if b < thresh:
                    r_cnt[d] += 1
                    pr[d] += 1
                sent_bytes[s] += b
                nbytes += b
                ns, nd = s // rpn, d // rpn
                if ns == nd:
                    lat_max = max(lat_max, plat["intra_lat"])
                    intra_max = max(intra_max, b / plat["intra_bw"])
                    continue
                links, lat = net.route(ns, nd)
                lat_max = max(lat_max, lat)
                for ln in links:
                    load[ln] += b
            if load:
                ln_max = max(load, key=lambda k: load[k] / net.link_bw(k))
                l_t = load[ln_max] / net.link_bw(ln_max)
            else:
                l_t = 0.0
            for k, v in load.items():
                link_total[k] += v
            l_t = max(l_t, intra_max)
            lsum += l_t
            if ph.msgs:
                # A transfer starts when its send and its receive are both posted: the
                # phase's k sends leave os apart after the previous phase (early phases:
                # right after the previous phase's sends, but not before its receives are
                # posted, i.e. before the previous phase ended); the busiest link then needs
                # L, the route lat, the receiver or per eager message.
                k = int(ps.max())
                if ph.early:
                    first = max(chain, (posted + 1) * os_)
                    last = max(chain, (posted + k) * os_)
                else:
                    first = chain + os_
                    last = chain + k * os_
                posted = posted + k if ph.early or posted == 0 else k
                chain = max(last, first + l_t) + lat_max + float(pr.max()) * or_
                ends.append(chain)
        O = float((s_cnt * os_ + r_cnt * or_).max())
        sent_msgs += s_cnt
        recv_msgs += r_cnt
        rows.append({"batch": bi, "phases": [p.name for p in phases],
                     "messages": int(sum(len(p.msgs) for p in phases)), "bytes": nbytes,
                     "O_s": O, "L_s": lsum, "C_s": chain, "T_s": max(O, chain),
                     "phase_end_s": ends})
    strict_link, strict_name = 0.0, ""
    if link_total:
        k = max(link_total, key=lambda k: link_total[k] / net.link_bw(k))
        strict_link = link_total[k] / net.link_bw(k)
        strict_name = " ".join(str(x) for x in k[:-1])
    return {
        "batches": rows,
        "attainable_s": sum(r["T_s"] for r in rows),
        "overhead_s": float((sent_msgs * os_ + recv_msgs * or_).max()),
        "link_s": strict_link,
        "link": strict_name,
        "sum_L_s": sum(r["L_s"] for r in rows),
        "sum_C_s": sum(r["C_s"] for r in rows),
        "sent_msgs_max": int(sent_msgs.max()),
        "recv_msgs_max": int(recv_msgs.max()),
        "sent_bytes_max": float(sent_bytes.max()),
        "sent_bytes_total": float(sent_bytes.sum()),
    }


def parse_alg(spec):
    name, _, rest = spec.partition(":")
    params = {}
    for kv in filter(None, rest.split(",")):
        k, _, v = kv.partition("=")
        params[k] = v
    return name, params


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--platform", required=True)
    ap.add_argument("--procs", required=True, help="P values, e.g. 256,1024")
    ap.add_argument("--rpn", type=int, default=None)
    ap.add_argument("-s", "--size", type=int, default=16, help="S in bytes")
    ap.add_argument("-d", "--dist", default="uniform",
                    help="uniform | powerlaw[:exponent=A] | normal[:mean=M,sd=D]")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("-a", "--algorithm", action="append", required=True,
                    help="NAME[:radix=R,block=B] (tuna, coalesced, staggered, twophase-bruck, "
                         "padded-bruck, spreadout, linear, scattered); repeat")
    ap.add_argument("--meta-word", default="adaptive",
                    help="bytes per announced size: 'adaptive' (default, what tuna sends: "
                         "the narrowest width holding the round's largest size), or a fixed "
                         "width such as 8 (tuna's uint64 sizes before the narrow encoding)")
    ap.add_argument("--model", choices=("eager", "rendezvous"), default="eager",
                    help="SMPI protocol: eager (default threshold, 64 KiB) or rendezvous "
                         "(tuna sim run --scale: send-is-detached-thresh:0, no receive "
                         "overhead is charged)")
    ap.add_argument("--rounds", action="store_true", help="print the per-batch table")
    ap.add_argument("--json", help="append one JSON line per (P, algorithm) to this file")
    ap.add_argument("--bench", help="a tuna-bench built with mpicc (it draws the block sizes: "
                                    "--facts P --matrix); default: build/dev's")
    args = ap.parse_args(argv)

    _, plat = tsim.load_platform(args.platform)
    rpn = args.rpn or plat["ranks_per_node"]
    net = Network(plat)
    bench = tsim.find_native_bench(args.bench)
    mw = meta_word_adaptive if args.meta_word == "adaptive" else \
        meta_word_fixed(int(args.meta_word))
    print(f"# {plat['name']} ({plat['topology']}), {rpn} ranks per node, {args.dist} sizes "
          f"in [0, {args.size}] B, seed {args.seed}, metadata word {args.meta_word}, "
          f"{args.model} model")
    print("| P | algorithm | today's bound (us) | routed cut (us) | msgs sent/rank | "
          "bytes sent/rank (max) | overheads O (us) | busiest link, whole call (us) | "
          "sum of per-batch L (us) | attainable sum max(O, C) (us) |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for P in [int(p) for p in args.procs.split(",")]:
        rec = tsim.bench_record(bench, P, rpn, args.dist, args.size, args.seed, matrix=True)
        sizes = np.array(rec["matrix"], dtype=float)
        today = tsim.lower_bound(plat, P, rpn, rec["dist"]["max_node_offnode_send_bytes"],
                                 rec["dist"]["max_node_offnode_recv_bytes"])
        nodes = -(-P // rpn)
        cut_s, cut_what = net.cut_bound(nodes, rpn, sizes)
        for spec in args.algorithm:
            alg, params = parse_alg(spec)
            bt = schedule(alg, params, P, rpn, sizes, mw)
            res = price(bt, P, rpn, plat, net, args.model)
            print(f"| {P} | {spec} | {today['bound_s'] * 1e6:.1f} | {cut_s * 1e6:.1f} | "
                  f"{res['sent_msgs_max']} | {res['sent_bytes_max']:.0f} | "
                  f"{res['overhead_s'] * 1e6:.1f} | {res['link_s'] * 1e6:.1f} | "
                  f"{res['sum_L_s'] * 1e6:.1f} | {res['attainable_s'] * 1e6:.1f} |")
            if args.rounds:
                print(f"\n  {spec}, P = {P}: per batch")
                print("  | batch | phases | messages | bytes | O (us) | L (us) | C (us) |")
                for r in res["batches"]:
                    print(f"  | {r['batch']} | {'; '.join(r['phases'])} | {r['messages']} | "
                          f"{r['bytes']:.0f} | {r['O_s'] * 1e6:.2f} | {r['L_s'] * 1e6:.2f} | "
                          f"{r['C_s'] * 1e6:.2f} |")
                print(f"  busiest link over the whole call: {res['link']}\n")
            if args.json:
                with open(args.json, "a", encoding="utf-8") as f:
                    f.write(json.dumps({
                        "platform": plat["name"], "P": P, "rpn": rpn, "S": args.size,
                        "dist": args.dist, "seed": args.seed, "algorithm": spec,
                        "meta_word": args.meta_word, "model": args.model,
                        "today_bound": today,
                        "cut_bound_s": cut_s, "cut": cut_what, **res}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
