#!/usr/bin/env python3
"""Generate SimGrid (SMPI) platform files for tuna's at-scale simulations.

Each platform is one SimGrid <cluster> built from a few documented numbers:

  cores       cores per node (the hostfile may place fewer ranks per node)
  nic_count   network interfaces per node, nic_bw each: the node's injection limit
              nic_count * nic_bw each way. On a fat tree or dragonfly that is the node's
              own link (link_bw must equal it): SimGrid 3.32's limiter link is ONE link
              shared by every node of those zones (measured, docs/simulation.md). On a
              plain cluster (crossbar) a per-node limiter link of twice that (shared by
              both directions); on a torus the node's links alone.
  link_bw     bandwidth of one network link (torus/dragonfly/fat-tree links)
  link_lat    latency of one network link (per hop)
  intra_bw    bandwidth of the node's loopback link (memory copy rate of one intra-node MPI
              message). SimGrid's cluster loopback gives every flow this rate, without
              sharing between the node's flows (measured; docs/simulation.md)
  intra_lat   latency of one intra-node message
  os, or      per-message software overheads (send, receive), charged by SMPI through
              smpi/os, smpi/or and smpi/ois (SimGrid charges nothing by default)

Next to each <name>.xml the script writes <name>.json with the same numbers, which
`tuna sim` reads to pick ranks per node, set the SMPI overheads and compute the lower bound.

Usage:
  sim/gen_platform.py                      # regenerate every preset into sim/platforms/
  sim/gen_platform.py --preset fugaku      # one preset
  sim/gen_platform.py --name mine --topology fat-tree --nodes 64 --cores 16 \
      --nic-count 1 --nic-bw 12.5e9 --link-bw 12.5e9 --link-lat 1e-6 \
      --intra-bw 50e9 --intra-lat 3e-7 --os 5e-7 --or 5e-7 --out-dir /tmp/plat
  sim/gen_platform.py --name site --from-profile profile.json --ranks-per-node 32 \
      [--nodes 64 | a torus profile's own dimensions] --out-dir /tmp/plat

--from-profile takes the numbers from a TUNA_PROFILE (tuna-calibrate's, or any), so that the
simulated platform and auto's model describe one machine: the inverse of `tuna tune profile`
(a platform made from a profile gives that profile back; python/tests/test_tune.py).
"""
import argparse
import json
import math
import os
import sys

# Presets: machine-like numbers with their sources. Sizes are the largest simulated
# machine; smaller runs use the first nodes of the hostfile order.
PRESETS = {
    "fugaku": {
        "description": "Fugaku-like: A64FX nodes on a Tofu-D-like 3-D torus",
        "topology": "torus",
        # 512 nodes = 16384 ranks at 32 per node (the TuNA paper's largest Fugaku run).
        "dims": [8, 8, 8],
        "cores": 48,
        "ranks_per_node": 32,
        "nic_count": 6,          # six Tofu network interfaces (TNIs) per node
        "nic_bw": 6.8e9,         # 6.8 GB/s per TNI / link (28 Gbps x 2 lanes)
        "link_bw": 6.8e9,        # 6.8 GB/s per Tofu-D link
        "link_lat": 1.0e-7,      # per-hop switching delay, ~100 ns
        "intra_bw": 100e9,       # shared-memory copies within one A64FX node (assumed)
        "intra_lat": 3.0e-7,
        "os": 2.0e-7,            # 0.49 us one-hop 8-byte put = os + or + hop
        "or": 2.0e-7,
        "sources": [
            "Y. Ajima et al., 'The Tofu Interconnect D', IEEE CLUSTER 2018: 6 TNIs per node, "
            "6.8 GB/s per link, 0.49 us one-hop put latency",
            "Fujitsu A64FX datasheet: 48 compute cores per node",
            "K. Fan et al., 'TuNA: Tunable Non-uniform All-to-all', 32 ranks per Fugaku node",
            "Tofu-D is a 6-D mesh/torus (24x23x17x2x3x2); a 3-D torus with the same link figures "
            "is the approximation SimGrid's TORUS zone allows",
        ],
    },
    "polaris": {
        "description": "Polaris-like: 32-core nodes, two 200 Gb/s NICs, Slingshot-like "
                       "dragonfly",
        "topology": "dragonfly",
        # groups,links;chassis,links;routers,links;nodes: 8 groups x 2 chassis x 4 routers x
        # 8 nodes = 512 nodes (16384 ranks at 32 per node).
        "dragonfly": [[8, 2], [2, 2], [4, 1], 8],
        "cores": 32,
        "ranks_per_node": 32,
        "nic_count": 2,          # two HPE Cassini NICs per node
        "nic_bw": 25e9,          # 200 Gb/s each
        # SimGrid's dragonfly has one link per node: it carries both NICs (2 x 25 GB/s), and
        # the router-to-router links get the same figure.
        "link_bw": 50e9,
        "link_lat": 3.0e-7,      # ~300 ns Rosetta switch traversal
        "intra_bw": 50e9,        # shared-memory copies within one EPYC node (assumed)
        "intra_lat": 4.0e-7,
        "os": 5.0e-7,            # ~2 us MPI ping-pong across the dragonfly
        "or": 5.0e-7,
        "sources": [
            "ALCF Polaris user guide: AMD EPYC Milan 7543P (32 cores), 2 Slingshot 11 NICs "
            "per node, 200 Gb/s each, dragonfly topology",
            "D. De Sensi et al., 'An In-Depth Analysis of the Slingshot Interconnect', SC20: "
            "~350 ns switch latency, MPI latency around 2 us",
        ],
    },
    "fattree": {
        "description": "generic cluster: 16-core nodes on a 2-level fat-tree of 100 Gb/s "
                       "links",
        "topology": "fat-tree",
        # levels;down;up;link counts: 16 leaf switches x 16 nodes = 256 nodes.
        "fat_tree": [2, [16, 16], [1, 16], [1, 1]],
        "cores": 16,
        "ranks_per_node": 16,
        "nic_count": 1,
        "nic_bw": 12.5e9,        # one 100 Gb/s EDR InfiniBand HCA
        "link_bw": 12.5e9,
        "link_lat": 5.0e-7,
        "intra_bw": 40e9,
        "intra_lat": 3.0e-7,
        "os": 5.0e-7,            # DESIGN.md's default per-message overheads
        "or": 5.0e-7,
        "sources": [
            "Generic EDR InfiniBand cluster: 100 Gb/s links, ~1 us MPI latency "
            "(Mellanox EDR product brief)",
        ],
    },
}


# SimGrid 3.32's default eager limit (smpi/send-is-detached-thresh): tuna_tools.sim's
# SMPI_EAGER_LIMIT (this script runs without the tuna_tools package).
SMPI_EAGER_LIMIT = 65536


def from_profile(prof, ranks_per_node, topology="crossbar", nodes=None, cores=None):
    """Platform numbers from a TUNA_PROFILE dict: the inverse of tuna_tools.tune's
    platform_profile(). A torus profile (`network`) gives a torus of its dimensions, links
    and hops, a dragonfly profile a dragonfly of its shape (its node link is the node's
    injection: NIC bandwidth = link bandwidth / NICs); otherwise `topology` (crossbar or
    fat-tree) with `nodes`, links as fast as the node's NICs together and 3 hops per path. Returns (platform, warnings): what SMPI cannot
    express (a gap, different per-message overheads per level, copy and datatype costs, which
    simulate-computation:no does not charge) is left out and said."""
    q = ranks_per_node
    intra, inter = prof["intra"], prof["inter"]
    nics = int(prof.get("nics_per_node", 1))
    warn = []
    if intra.get("gap", 0) or inter.get("gap", 0):
        warn.append("gap: SMPI has no per-message gap; left out")
    if intra["overhead"] != inter["overhead"]:
        warn.append("overhead: SMPI charges one os/or for both levels; the inter-node one is used")
    costly = {"copy_bandwidth": prof.get("copy_bandwidth", 0) < 1e14,  # 1e15: free
              "datatype_overhead": prof.get("datatype_overhead", 0) > 0,
              "datatype_block": prof.get("datatype_block", 0) > 0}
    for key in (k for k, c in costly.items() if c and k in prof):
        warn.append(f"{key}: not simulated (smpi/simulate-computation:no); left out")
    eager = prof.get("eager_limit", 0)
    if eager != SMPI_EAGER_LIMIT:
        warn.append(f"eager_limit {eager:g}: a run setting, not the platform's: simulate with "
                    f"--cfg smpi/send-is-detached-thresh:{eager:g}"
                    + (" (tuna sim run --scale)" if eager == 0 else ""))
    p = {"description": f"from the profile '{prof.get('name', '?')}'",
         "cores": max(q, cores or q), "ranks_per_node": q,
         "nic_count": nics, "nic_bw": inter["bandwidth"],
         "intra_bw": intra["bandwidth"], "intra_lat": intra["latency"],
         "os": inter["overhead"] / 2, "or": inter["overhead"] / 2,
         "sources": [f"TUNA_PROFILE '{prof.get('name', '?')}' (sim/gen_platform.py --from-profile)"]}
    net = prof.get("network")
    if net and net.get("topology") == "dragonfly":
        p["topology"] = "dragonfly"
        p["dragonfly"] = [list(net["groups"]), list(net["chassis"]), list(net["routers"]),
                          net["nodes_per_router"]]
        p["link_bw"] = net["link_bandwidth"]
        # the node's link is its injection (no limiter link on a dragonfly, xml_text)
        p["nic_bw"] = net["link_bandwidth"] / nics
        if not math.isclose(p["nic_bw"], inter["bandwidth"], rel_tol=1e-9):
            warn.append(f"inter.bandwidth: a dragonfly node injects through one link of "
                        f"network.link_bandwidth; NIC bandwidth {p['nic_bw']:g} used, not "
                        f"{inter['bandwidth']:g}")
        hops = 3.0
    elif net:
        p["topology"] = "torus"
        p["dims"] = list(net["dims"])
        p["link_bw"] = net["link_bandwidth"]
        hops = max(1.0, sum(p["dims"]) / 4.0)
    else:
        if topology not in ("crossbar", "fat-tree") or not nodes:
            raise ValueError("a profile without a torus needs --topology crossbar|fat-tree and "
                             "--nodes")
        p["topology"] = topology
        p["link_bw"] = nics * inter["bandwidth"]
        hops = 3.0
        if topology == "crossbar":
            p["nodes"] = nodes
        else:
            p["fat_tree"] = fat_tree_of(nodes)
    p["link_lat"] = inter["latency"] / hops
    return p, warn


def fat_tree_of(nodes):
    """A 2-level fat tree of `nodes` leaves: sqrt(nodes) switches of sqrt(nodes) nodes."""
    leaf = max(1, int(math.isqrt(nodes)))
    if nodes % leaf:
        raise ValueError("fat-tree: the node count must be a product of two factors <= sqrt")
    return [2, [leaf, nodes // leaf], [1, leaf], [1, 1]]


def node_count(p):
    t = p["topology"]
    if t == "torus":
        return math.prod(p["dims"])
    if t == "dragonfly":
        (g, _), (c, _), (r, _), n = p["dragonfly"]
        return g * c * r * n
    if t == "fat-tree":
        return math.prod(p["fat_tree"][1])
    if t == "crossbar":
        return p["nodes"]
    raise ValueError(f"unknown topology {t}")


def topo_attributes(p):
    t = p["topology"]
    if t == "torus":
        return ' topology="TORUS" topo_parameters="%s"' % ",".join(map(str, p["dims"]))
    if t == "dragonfly":
        (g, gl), (c, cl), (r, rl), n = p["dragonfly"]
        return (' topology="DRAGONFLY" topo_parameters="%d,%d;%d,%d;%d,%d;%d"'
                % (g, gl, c, cl, r, rl, n))
    if t == "fat-tree":
        levels, down, up, count = p["fat_tree"]
        return (' topology="FAT_TREE" topo_parameters="%d;%s;%s;%s"'
                % (levels, ",".join(map(str, down)), ",".join(map(str, up)),
                   ",".join(map(str, count))))
    return ""  # crossbar: SimGrid's plain cluster


def injection_how(p):
    """How the platform limits a node's injection, and why no limiter link elsewhere.

    SimGrid 3.32 aborts in its max-min solver ("Cannot saturate more a constraint that has no
    active element") on a TORUS with a limiter link at P >= 128: the torus's own links (2 per
    dimension per node) bound injection there. In FAT_TREE and DRAGONFLY zones its limiter
    link is one link shared by all the nodes (a node's share falls as 1/N: 4 nodes of the fat
    tree got a quarter of their NIC each, measured), so the node's own link (bw) is the NIC
    there. Only the plain cluster gives every node its own limiter."""
    t = p["topology"]
    if t == "crossbar":
        return "a limiter link of twice that per node: SimGrid's limiter serves both directions"
    if t == "torus":
        return "the node's torus links; no limiter link, see gen_platform.py"
    return "the node's own link; no limiter link, see gen_platform.py"


def check_injection(p):
    """On a fat tree or dragonfly the node's link is its injection limit: they must agree."""
    if p["topology"] in ("fat-tree", "dragonfly") and \
            not math.isclose(p["nic_count"] * p["nic_bw"], p["link_bw"], rel_tol=1e-9):
        raise ValueError(f"{p['topology']}: nic_count x nic_bw "
                         f"({p['nic_count'] * p['nic_bw']:g}) must equal link_bw "
                         f"({p['link_bw']:g}): the node's link is its injection limit there "
                         "(SimGrid 3.32 shares a FAT_TREE/DRAGONFLY limiter link between all "
                         "nodes)")


def xml_text(name, p):
    check_injection(p)
    n = node_count(p)
    inject = p["nic_count"] * p["nic_bw"]
    lines = [
        "<?xml version='1.0'?>",
        '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">',
        "<!--",
        f"  {name}: {p['description']}.",
        "  Generated by sim/gen_platform.py; edit the numbers there, not here.",
        f"  {n} nodes, {p['cores']} cores each (run {p['ranks_per_node']} ranks per node).",
        f"  Node injection: {p['nic_count']} NIC(s) x {p['nic_bw'] / 1e9:g} GB/s "
        f"= {inject / 1e9:g} GB/s each way ({injection_how(p)}).",
        f"  Network links: {p['link_bw'] / 1e9:g} GB/s, {p['link_lat'] * 1e9:g} ns per hop.",
        f"  Intra-node (cluster loopback; SimGrid gives each intra-node flow this bandwidth, "
        f"not shared between flows): {p['intra_bw'] / 1e9:g} GB/s, "
        f"{p['intra_lat'] * 1e9:g} ns.",
        f"  Per-message software overheads (set by tuna sim): os {p['os'] * 1e9:g} ns, "
        f"or {p['or'] * 1e9:g} ns.",
        "  Sources:",
    ]
    lines += [f"   - {s}" for s in p["sources"]]
    lines += ["-->", '<platform version="4.1">',
              # The cluster inside a zone of its own, not the root element: SimGrid 4.1's
              # loader builds a TORUS, FAT_TREE or DRAGONFLY cluster with the enclosing zone
              # as its parent and has none at the root (a segmentation fault before any rank
              # starts, sg_platf_new_cluster_hierarchical). One child zone, so no route of
              # the wrapper is ever used: the same routes under 3.32, 3.35 and 4.1.
              f'  <zone id="{name}-world" routing="Full">']
    limiter = f' limiter_link="{2 * inject:.6g}Bps"' if p["topology"] == "crossbar" else ""
    # Host speed is irrelevant: simulations run with smpi/simulate-computation:no.
    lines.append(
        f'    <cluster id="{name}" prefix="node-" suffix="" radical="0-{n - 1}" speed="1Gf" '
        f'core="{p["cores"]}" bw="{p["link_bw"]:.6g}Bps" lat="{p["link_lat"]:.6g}s" '
        f'sharing_policy="SPLITDUPLEX"{limiter} '
        f'loopback_bw="{p["intra_bw"]:.6g}Bps" loopback_lat="{p["intra_lat"]:.6g}s"'
        f'{topo_attributes(p)}/>')
    lines.append("  </zone>")
    lines.append("</platform>")
    return "\n".join(lines) + "\n"


def write(name, p, out_dir):
    text = xml_text(name, p)  # first: a platform it refuses leaves no file behind
    os.makedirs(out_dir, exist_ok=True)
    meta = dict(p)
    meta["name"] = name
    meta["nodes"] = node_count(p)
    meta["injection_bw"] = p["nic_count"] * p["nic_bw"]
    xml_path = os.path.join(out_dir, f"{name}.xml")
    with open(xml_path, "w", encoding="utf-8") as f:
        f.write(text)
    with open(os.path.join(out_dir, f"{name}.json"), "w", encoding="utf-8") as f:
        json.dump(meta, f, indent=2)
        f.write("\n")
    return xml_path


def main(argv=None):
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description="Generate SimGrid platform files for tuna sim.")
    ap.add_argument("--preset", choices=sorted(PRESETS), action="append",
                    help="preset(s) to generate (default: all, unless --name is given)")
    ap.add_argument("--out-dir", default=os.path.join(here, "platforms"))
    ap.add_argument("--name", help="a custom platform (needs the numbers below)")
    ap.add_argument("--topology", choices=["crossbar", "fat-tree", "torus", "dragonfly"],
                    default="crossbar")
    ap.add_argument("--nodes", type=int, help="crossbar / fat-tree: node count")
    ap.add_argument("--dims", help="torus: dimensions, e.g. 8,8,8")
    ap.add_argument("--dragonfly", help="dragonfly: 'G,GL;C,CL;R,RL;N' as SimGrid takes it")
    ap.add_argument("--cores", type=int, default=16)
    ap.add_argument("--ranks-per-node", type=int)
    ap.add_argument("--nic-count", type=int, default=1)
    ap.add_argument("--nic-bw", type=float, default=12.5e9, help="bytes/s per NIC")
    ap.add_argument("--link-bw", type=float, default=12.5e9, help="bytes/s")
    ap.add_argument("--link-lat", type=float, default=5e-7, help="seconds")
    ap.add_argument("--intra-bw", type=float, default=40e9, help="bytes/s")
    ap.add_argument("--intra-lat", type=float, default=3e-7, help="seconds")
    ap.add_argument("--os", type=float, default=5e-7, help="send overhead, seconds")
    ap.add_argument("--or", dest="or_", type=float, default=5e-7,
                    help="receive overhead, seconds")
    ap.add_argument("--from-profile", metavar="FILE",
                    help="take the numbers from a TUNA_PROFILE (with --name, --ranks-per-node; "
                         "--topology/--nodes unless the profile describes a torus)")
    args = ap.parse_args(argv)

    if args.from_profile:
        if not args.name or not args.ranks_per_node:
            ap.error("--from-profile needs --name and --ranks-per-node")
        with open(args.from_profile, encoding="utf-8") as f:
            prof = json.load(f)
        try:
            p, warn = from_profile(prof, args.ranks_per_node, args.topology, args.nodes,
                                   args.cores)
        except (KeyError, TypeError, ValueError) as e:
            ap.error(f"--from-profile {args.from_profile}: {e}")
        for w in warn:
            print(f"gen_platform: {w}", file=sys.stderr)
        print(write(args.name, p, args.out_dir))
        return 0

    if args.name:
        p = {"description": f"custom {args.topology} platform", "topology": args.topology,
             "cores": args.cores, "ranks_per_node": args.ranks_per_node or args.cores,
             "nic_count": args.nic_count, "nic_bw": args.nic_bw, "link_bw": args.link_bw,
             "link_lat": args.link_lat, "intra_bw": args.intra_bw,
             "intra_lat": args.intra_lat, "os": args.os, "or": args.or_,
             "sources": ["numbers given on the command line"]}
        if args.topology == "torus":
            if not args.dims:
                ap.error("--dims is required for a torus")
            p["dims"] = [int(x) for x in args.dims.split(",")]
        elif args.topology == "dragonfly":
            if not args.dragonfly:
                ap.error("--dragonfly is required for a dragonfly")
            parts = args.dragonfly.split(";")
            if len(parts) != 4:
                ap.error("--dragonfly takes 'G,GL;C,CL;R,RL;N'")
            p["dragonfly"] = [[int(x) for x in parts[i].split(",")] for i in range(3)]
            p["dragonfly"].append(int(parts[3]))
        else:
            if not args.nodes:
                ap.error("--nodes is required for a crossbar or fat-tree")
            if args.topology == "crossbar":
                p["nodes"] = args.nodes
            else:
                try:
                    p["fat_tree"] = fat_tree_of(args.nodes)
                except ValueError as e:
                    ap.error(str(e))
        try:
            print(write(args.name, p, args.out_dir))
        except ValueError as e:  # check_injection(), in xml_text()
            ap.error(str(e))
        return 0
    for name in args.preset or sorted(PRESETS):
        print(write(name, PRESETS[name], args.out_dir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
