"""auto's size and sparsity buckets and the vendor models, from data/selection.json: the one
definition, which libtuna compiles in (cmake/selection_tables.cmake), so `tuna tune` keys its
tables exactly as the library looks them up."""
import bisect
import functools
import json
import os

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


@functools.lru_cache(maxsize=None)
def tables():
    with open(os.path.join(DATA_DIR, "selection.json"), encoding="utf-8") as f:
        return json.load(f)


def size_bucket(max_block):
    """The first bucket whose upper edge holds max_block (the last one above every edge)."""
    edges = tables()["size_buckets"]["upper_bytes"]
    return min(bisect.bisect_left(edges, max_block or 0), len(edges) - 1)


def size_bucket_count():
    return len(tables()["size_buckets"]["upper_bytes"])


def sparsity_bucket(zero_fraction):
    """The number of edges at or below the fraction of empty blocks."""
    return bisect.bisect_right(tables()["sparsity_buckets"]["lower_edges"], zero_fraction)


def first_rule(rules, procs):
    """The algorithm of the first [below_P, algorithm] rule with P < below_P (null: any P)."""
    for below, alg in rules:
        if below is None or (procs is not None and procs < below):
            return alg
    raise ValueError("no vendor rule holds")


def smpi_selectors():
    return {k: v for k, v in tables()["smpi_alltoallv_selectors"].items()
            if not k.startswith("_")}
