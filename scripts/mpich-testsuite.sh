#!/usr/bin/env bash
# MPICH's own collective tests (test/mpi/coll of github.com/pmodels/mpich, and three of its
# error tests, test/mpi/errors/coll), programs nobody here wrote, run as outside clients of
# libtuna-preload.so with forced rows, against the MPI library a tuna build directory was
# configured with (Open MPI or MPICH).
#
# A MANUAL CHECK, NOT CI. Why: it needs an MPICH source tree fetched from outside this
# repository (nothing in CI may depend on it, and none of its code or text is copied here:
# the tests and their harness, test/mpi/util/mtest*.c, are compiled from that tree into the
# work directory, next to a small configuration header this script writes), and a full run
# keeps both cores busy for 5 (Open MPI) to 12 (MPICH) minutes. docs/testing.md, "MPICH's
# collective tests", has the selection, the rows, the P and the last results.
#
# usage: scripts/mpich-testsuite.sh [options] [MPICH_TEST_DIR]
#   MPICH_TEST_DIR  the test/mpi directory of an MPICH source tree (or env MPICH_TESTDIR),
#                   e.g. git --git-dir=MIRROR archive HEAD test/mpi | tar -x -C /tmp/mpich
#                   then /tmp/mpich/test/mpi
#   -b DIR   tuna build directory (env TUNA_BUILD; default build/main): its CMakeCache.txt
#            names the MPI (mpicc, mpiexec) and DIR/src/preload/libtuna-preload.so is preloaded
#   -o DIR   work directory: binaries, logs of failed runs, results-MPI.tsv
#            (default DIR_OF_BUILD/mpich-testsuite)
#   -t LIST  only these variants (names as printed by -l), space-separated
#   -r LIST  only these rows (labels as printed by -l)
#   -n LIST  run every variant at these P instead of its own list
#   -T SEC   timeout per run (default 90); a run that does not finish in time is a failure
#   -l       list variants and rows, and exit
#
# Each run: LD_PRELOAD=libtuna-preload.so TUNA_ALLTOALLV=... TUNA_ALLTOALL=...
# TUNA_STATS=FILE mpiexec -n P test ARGS. It passes when the test exits 0 and prints
# "No Errors" (MPICH's rule), no call took tuna's error path (but in kind error), and the
# statistics file shows that tuna handled the test's calls (a run that bypassed tuna is not a
# pass, but BYPASS):
#   kind tuna   every collective of the variant has calls on the tuna (or plan) path that ran
#               tuna's code: not "(ran vendor" (auto may choose the library: for auto, any
#               call on the tuna path counts); no fallback for those collectives
#   kind proxy  calls on the tuna path that may be the library's call inside tuna's request
#               (first nonblocking calls on communicators tuna has not set up: kind nbfirst
#               under Open MPI with TUNA_SETUP_AT_CREATION=0; else nbfirst is tuna: set up
#               at creation, or in the operation, MPICH; docs/nonblocking.md)
#   kind inter  intercommunicators: calls on the fallback path "intercommunicator", none on
#               the tuna path
#   kind error  erroneous calls MPICH's error tests make (errors/coll): calls on the error
#               path (tuna found the error and returned it)
#   row vendor  (any kind) calls on the vendor path, none on the tuna path; kind error: none
#               on the tuna or error path (the library answers, and its errors are not counted)
# Exit status: 0 when every run passed, 1 otherwise, 2 on usage or build errors.
set -u -o pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
build=${TUNA_BUILD:-$here/build/main}
work=""
only_tests=""
only_rows=""
np_override=""
tmo=90
list=0
while getopts "b:o:t:r:n:T:lh" opt; do
    case $opt in
        b) build=$OPTARG ;;
        o) work=$OPTARG ;;
        t) only_tests=$OPTARG ;;
        r) only_rows=$OPTARG ;;
        n) np_override=$OPTARG ;;
        T) tmo=$OPTARG ;;
        l) list=1 ;;
        *) sed -n '/^# usage/,/^# Exit/p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
src=${1:-${MPICH_TESTDIR:-}}

# ---- rows: label | TUNA_ALLTOALLV | TUNA_ALLTOALL | extra environment
# twophase-bruck is alltoallv's only, bruck-radix alltoall's only: one row runs both.
# The hierarchical rows run on logical nodes of 2 ranks (unequal at odd P: flat TuNA).
ROWS=(
    "auto|auto|auto|"
    "vendor|vendor|vendor|"
    "tuna:radix=2|tuna:radix=2|tuna:radix=2|"
    "tuna|tuna|tuna|"
    "bruck|bruck|bruck|"
    "padded-bruck|padded-bruck|padded-bruck|"
    "twophase-bruck/bruck-radix|twophase-bruck|bruck-radix:radix=3|"
    "scattered:block=2|scattered:block=2|scattered:block=2|"
    "pairwise|pairwise|pairwise|"
    "linear|linear|linear|"
    "xor|xor|xor|"
    "multipair:stride=2|multipair:stride=2|multipair:stride=2|"
    "multipair-waitany:stride=2|multipair-waitany:stride=2|multipair-waitany:stride=2|"
    "coalesced|coalesced|coalesced|TUNA_RANKS_PER_NODE=2"
    "staggered|staggered|staggered|TUNA_RANKS_PER_NODE=2"
)
# The neighborhood all-to-all's rows (variants flagged "nbr"): label | TUNA_NEIGHBOR_ALLTOALLV |
# extra environment (TUNA_ALLTOALLV and TUNA_ALLTOALL stay unset there). node-aware runs on
# logical nodes of 2 ranks, so that edges cross nodes.
NBR_ROWS=(
    "nbr:auto|auto|"
    "nbr:vendor|vendor|"
    "nbr:linear|linear|"
    "nbr:node-aware|node-aware|TUNA_RANKS_PER_NODE=2"
    "nbr:node-aware:leaders=1,max=16|node-aware:leaders=1,max=16|TUNA_RANKS_PER_NODE=2"
)
# The few rows: for the P of a variant that cost most, and where the row cannot matter
# (intercommunicators, nonblocking calls on communicators tuna has not set up).
FEW_ROWS="auto vendor pairwise tuna:radix=2"

# ---- variants: name | source (in coll/, or a path under test/mpi) | arguments | kind |
# collectives | P with every row | P with the few rows | flags: setup = also preload the
# set-up shim below; short = fewer iterations; mpich = MPICH only (its error tests check
# MPICH's own error detection in the other collectives too: Open MPI 4.1.4 fails them without
# tuna); argcheck = TUNA_ARGCHECK=collective (one rank's bad arguments are then every rank's
# error; by default tuna checks locally and that rank leaves its peers waiting).
# The P lists keep a full run within 12 minutes per MPI on 2 cores (oversubscribed MPICH slows
# down steeply with P: alltoall1 takes 30 s at P = 8, p_alltoallv 56 s). The tests' own
# limits: alltoall1 and alltoallv skip communicators of fewer than 2 ranks, alltoallv0 and
# p_alltoallv those of fewer than 3; the intercommunicator tests need 4 ranks in all;
# coll_large needs MPI 4's large-count calls (not in Open MPI 4.1.4).
VARIANTS=(
    "alltoall1|alltoall1||tuna|alltoall|2 3|4|"
    "alltoall1-nb|alltoall1|-nonblocking|tuna|alltoall,ialltoall|2|3|"
    "coll13|coll13||tuna|alltoall|1 2 3 4 5 8||"
    "p_alltoall|p_alltoall||tuna|alltoall|1 2 3 4 5 8||"
    "alltoallv|alltoallv||tuna|alltoallv|2 3 4|5 8|"
    "alltoallv0|alltoallv0||tuna|alltoallv|3|4 5|"
    "alltoallw_zeros|alltoallw_zeros||tuna|alltoallv,alltoallw|1 2 5 8||"
    "alltoallw1|alltoallw1||tuna|alltoallw|2 3 4|5 8|"
    "alltoallw2|alltoallw2||tuna|alltoallw|2 3 4|5 8|"
    "p_alltoallv|p_alltoallv||tuna|alltoallv|3||"
    "coll_large|coll_large|-coll=alltoallv|tuna|alltoallv|1 2 3 5|8|"
    "coll_large-noncontig|coll_large|-coll=alltoallv -option=3|tuna|alltoallv|1 2 3 5|8|"
    "icalltoall|icalltoall||inter|alltoall||4 5|"
    "icalltoall-nb|icalltoall|-nonblocking|inter|ialltoall||4 5|"
    "icalltoallv|icalltoallv||inter|alltoallv||4 5 7|"
    "icalltoallv-nb|icalltoallv|-nonblocking|inter|ialltoallv||4 5 7|"
    "nonblocking|nonblocking||nbfirst|ialltoall,ialltoallv|1 3|4 5|"
    "nonblocking2|nonblocking2||nbfirst|ialltoall,ialltoallv|1 3|4 5|"
    "nonblocking3|nonblocking3||nbfirst|ialltoall,ialltoallv|2|3 4|short"
    "nonblocking+setup|nonblocking||tuna|ialltoall,ialltoallv|1 2 3 5|8|setup"
    "nonblocking2+setup|nonblocking2||tuna|ialltoall,ialltoallv|1 2 3 5|8|setup"
    "nonblocking3+setup|nonblocking3||tuna|ialltoall,ialltoallv|2 3 4||setup,short"
    "noalias2|errors/coll/noalias2||error|alltoall,alltoallv|2 4||mpich"
    "noalias3|errors/coll/noalias3||error|ialltoall,ialltoallv|2 4||mpich"
    "alltoalllength|errors/coll/alltoalllength||error|alltoall|2 4||mpich,argcheck"
    "neighb_alltoall|neighb_alltoall||tuna|neighbor_alltoall|1 2 3|4|nbr"
    "neighb_alltoallv|neighb_alltoallv||tuna|neighbor_alltoallv|1 2 3|4|nbr"
    "p_neighb_alltoallv|p_neighb_alltoallv||tuna|neighbor_alltoallv|1 2 3|4|nbr"
    "ring_neighbor_alltoall|ring_neighbor_alltoall||proxy|neighbor_alltoall|1 2||nbr"
)
# The neighborhood tests (flag nbr) run their neighborhood part only where MPICH is defined
# (TEST_NEIGHB_COLL): they are compiled with it defined under Open MPI too. ring_neighbor_alltoall
# is a periodic ring of 1 or 2 ranks, where a rank is its neighbor's neighbor twice: tuna hands
# those calls to the library (docs/algorithms-neighbor.md), so its calls are on the tuna path
# as "(ran vendor" (kind proxy). Their rows: NBR_ROWS.
# nonblocking3 posts 100000 operations (MAIN_ITERATIONS; at P = 4 that takes 99 s under
# oversubscribed MPICH without tuna): "short" compiles a copy that posts 2000.
SHORT_ITERATIONS=2000

row_field() { # row label -> field n (1..4); a neighborhood row: 1 label, 2 its
    local r     # TUNA_NEIGHBOR_ALLTOALLV, 3 empty, 4 the extra environment
    if [[ $1 == nbr:* ]]; then
        for r in "${NBR_ROWS[@]}"; do
            if [[ ${r%%|*} == "$1" ]]; then
                case $2 in 1|2) cut -d'|' -f"$2" <<<"$r" ;; 4) cut -d'|' -f3 <<<"$r" ;; esac
                return 0
            fi
        done
        return 1
    fi
    for r in "${ROWS[@]}"; do
        if [[ ${r%%|*} == "$1" ]]; then
            cut -d'|' -f"$2" <<<"$r"
            return 0
        fi
    done
    return 1
}

if ((list)); then
    echo "variants (name | source | args | kind | collectives | P, every row | P, few rows | flags):"
    printf '  %s\n' "${VARIANTS[@]}"
    echo "rows (label | TUNA_ALLTOALLV | TUNA_ALLTOALL | env):"
    printf '  %s\n' "${ROWS[@]}"
    echo "few rows: $FEW_ROWS"
    echo "neighborhood rows (label | TUNA_NEIGHBOR_ALLTOALLV | env), variants flagged nbr:"
    printf '  %s\n' "${NBR_ROWS[@]}"
    exit 0
fi

if [[ -z $src || ! -f $src/util/mtest.c || ! -d $src/coll ]]; then
    echo "error: give the test/mpi directory of an MPICH source tree (argument or MPICH_TESTDIR)" >&2
    exit 2
fi
src=$(cd "$src" && pwd)
build=$(cd "$build" && pwd) || exit 2
preload=$build/src/preload/libtuna-preload.so
if [[ ! -f $preload || ! -f $build/CMakeCache.txt ]]; then
    echo "error: $build has no src/preload/libtuna-preload.so (cmake --build $build --target tuna-preload)" >&2
    exit 2
fi
cache() { sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt" | head -1; }
mpicc=$(cache MPI_C_COMPILER)
mpiexec=$(cache MPIEXEC_EXECUTABLE)
if "$mpiexec" --version 2>&1 | grep -q 'Open MPI\|OpenRTE'; then
    mpi=openmpi
    launch=("$mpiexec" --oversubscribe --allow-run-as-root)
    mpienv=()
else
    mpi=mpich
    launch=("$mpiexec")
    # Oversubscribed MPICH busy-polls; yield after each poll (as tuna's own tests do).
    mpienv=(MPIR_CVAR_POLLS_BEFORE_YIELD=1 MPIR_CVAR_CH4_PROGRESS_THROTTLE=1
            MPIR_CVAR_CH4_PROGRESS_THROTTLE_NO_PROGRESS_COUNT=16)
fi
work=${work:-$build/mpich-testsuite}
mkdir -p "$work/bin" "$work/include" "$work/logs" "$work/src" || exit 2
work=$(cd "$work" && pwd)
echo "MPI: $mpi ($mpicc, $mpiexec); preload: $preload"
echo "tests: $src; work: $work"

# ---- build: the harness with a configuration header of our own, then each test
cat >"$work/include/mpitestconf.h" <<'EOF'
/* Written by tuna's scripts/mpich-testsuite.sh for MPICH's test harness (in place of
 * what MPICH's configure generates): a POSIX system, single-threaded tests. */
#define HAVE_STRING_H 1
#define HAVE_UNISTD_H 1
#define HAVE_STDARG_H 1
#define HAVE_SYS_TIME_H 1
#define HAVE_SYS_RESOURCE_H 1
#define HAVE_GETRUSAGE 1
#define HAVE_MPI_WIN_CREATE 1
#define HAVE_MPI_INIT_THREAD 1
#define THREAD_PACKAGE_NAME THREAD_PACKAGE_NONE
EOF
# MPICH's build generates mtest_mpix.h (MPIX_ names of newer functions); an MPI 3.1
# library (Open MPI 4.1.4) has the persistent collectives as MPIX_*_init in mpi-ext.h.
cat >"$work/include/mtest_mpix.h" <<'EOF'
/* Written by tuna's scripts/mpich-testsuite.sh. */
#if MPI_VERSION < 4
#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>
#endif
#define MPI_Alltoall_init MPIX_Alltoall_init
#define MPI_Alltoallv_init MPIX_Alltoallv_init
#define MPI_Neighbor_alltoallv_init MPIX_Neighbor_alltoallv_init
#endif
EOF
# The set-up shim (variants flagged "setup"): preloaded before libtuna-preload.so, it makes
# one blocking MPI_Alltoall and MPI_Alltoallv (one int per rank, through the preload) on
# MPI_COMM_WORLD after MPI_Init and on every MPI_Comm_dup result, so that tuna has set those
# communicators up and the test's MPI_Ialltoall/MPI_Ialltoallv run tuna's rows instead of the
# library's call inside tuna's request (docs/nonblocking.md). Only the nonblocking
# collectives are checked in these variants.
cat >"$work/src/setup_shim.c" <<'EOF'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int inside;

static void set_up(MPI_Comm comm)
{
    int p;
    MPI_Comm_size(comm, &p);
    int *b = calloc((size_t)p * 6, sizeof(int));
    if (!b) {
        fprintf(stderr, "setup_shim: no memory\n");
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    int *counts = b + 2 * p, *displs = b + 3 * p;
    for (int i = 0; i < p; i++) {
        counts[i] = 1;
        displs[i] = i;
    }
    MPI_Alltoall(b, 1, MPI_INT, b + p, 1, MPI_INT, comm);
    MPI_Alltoallv(b, counts, displs, MPI_INT, b + p, counts, displs, MPI_INT, comm);
    free(b);
}

/* tuna sets a communicator up with MPI_Comm_dup, which comes here again: the calls made
 * from inside a set-up set nothing up. */
static void set_up_once(MPI_Comm comm)
{
    if (inside)
        return;
    inside = 1;
    set_up(comm);
    inside = 0;
}

static void *next(const char *name)
{
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) {
        fprintf(stderr, "setup_shim: no %s after the shim\n", name);
        abort();
    }
    return f;
}

int MPI_Init(int *argc, char ***argv)
{
    int (*f)(int *, char ***) = (int (*)(int *, char ***))next("MPI_Init");
    int rc = f(argc, argv);
    if (rc == MPI_SUCCESS)
        set_up_once(MPI_COMM_WORLD);
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int (*f)(int *, char ***, int, int *) =
        (int (*)(int *, char ***, int, int *))next("MPI_Init_thread");
    int rc = f(argc, argv, required, provided);
    if (rc == MPI_SUCCESS)
        set_up_once(MPI_COMM_WORLD);
    return rc;
}

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    int (*f)(MPI_Comm, MPI_Comm *) = (int (*)(MPI_Comm, MPI_Comm *))next("MPI_Comm_dup");
    int rc = f(comm, newcomm);
    if (rc == MPI_SUCCESS && *newcomm != MPI_COMM_NULL)
        set_up_once(*newcomm);
    return rc;
}
EOF
cflags=(-O1 -w -I"$work/include" -I"$src/include")
"$mpicc" -O2 -Wall -Werror -shared -fPIC -o "$work/bin/setup_shim.so" "$work/src/setup_shim.c" -ldl \
    >"$work/logs/build_setup_shim.log" 2>&1 || { echo "error: the set-up shim did not build"; cat "$work/logs/build_setup_shim.log"; exit 2; }
for f in mtest mtest_common mtest_single run_mpitests; do
    "$mpicc" "${cflags[@]}" -c "$src/util/$f.c" -o "$work/bin/$f.o" \
        >"$work/logs/build_$f.log" 2>&1 || { echo "error: $f.c did not build"; cat "$work/logs/build_$f.log"; exit 2; }
done
declare -A built=()
build_test() { # source, short, extra cflags -> $bin: the binary (empty when it does not build)
    local s=${1##*/} short=$2 in=$src/coll/$1.c out=$work/bin/${1##*/} xflags=${3:-}
    [[ $1 == */* ]] && in=$src/$1.c
    bin=""
    if [[ $short == 1 ]]; then
        sed "s/^#define MAIN_ITERATIONS (100000)/#define MAIN_ITERATIONS ($SHORT_ITERATIONS)/" \
            "$in" >"$work/src/$s-short.c"
        grep -q "MAIN_ITERATIONS ($SHORT_ITERATIONS)" "$work/src/$s-short.c" || { echo "warning: $s: MAIN_ITERATIONS not found" >&2; }
        in=$work/src/$s-short.c
        out=$work/bin/$s-short
    fi
    if [[ -z ${built[$out]:-} ]]; then
        local objs=("$work/bin/mtest.o" "$work/bin/mtest_common.o" "$work/bin/mtest_single.o")
        # Tests with their own main() use the harness directly; the others define run()
        # and take main() from util/run_mpitests.c.
        grep -q '^int main' "$in" || objs+=("$work/bin/run_mpitests.o")
        # shellcheck disable=SC2086
        if "$mpicc" "${cflags[@]}" $xflags "$in" "${objs[@]}" -o "$out" \
            >"$work/logs/build_$(basename "$out").log" 2>&1; then
            built[$out]=ok
        else
            built[$out]=failed
        fi
    fi
    [[ ${built[$out]} == ok ]] && bin=$out
    return 0
}

# ---- the statistics check (see the header)
check_stats() { # file kind row collectives -> "ok|detail" or "bad|detail"
    awk -F'\t' -v kind="$2" -v row="$3" -v colls="$4" '
        BEGIN { n = split(colls, c, ","); for (i = 1; i <= n; i++) want[c[i]] = 1 }
        /^#/ || $1 == "rank" { next }
        $6 == "error" { err += $8 }
        !($5 in want) { next }
        $6 == "error" { errs[$5] += $8 }
        $6 == "tuna" || $6 == "plan" {
            path[$5] += $8
            if (index($7, "(ran vendor") == 0) code[$5] += $8
        }
        $6 == "vendor" { vend[$5] += $8 }
        $6 == "fallback" {
            fb[$5] += $8
            if ($7 == "intercommunicator") inter[$5] += $8
            else reasons = reasons " [" $5 ": " $7 "]"
        }
        END {
            ok = 1; d = ""
            for (i = 1; i <= n; i++) {
                k = c[i]
                d = d sprintf("%s tuna %d (code %d) vendor %d fallback %d error %d; ", k,
                              path[k] + 0, code[k] + 0, vend[k] + 0, fb[k] + 0, errs[k] + 0)
                if (row == "vendor" && kind == "error") { if (path[k] > 0 || errs[k] > 0) ok = 0 }
                else if (row == "vendor") { if (vend[k] == 0 || path[k] > 0 || fb[k] > 0) ok = 0 }
                else if (kind == "inter") { if (inter[k] == 0 || path[k] > 0) ok = 0 }
                else if (kind == "error") { if (errs[k] == 0 || fb[k] > 0) ok = 0 }
                else if (kind == "proxy" || row == "auto") { if (path[k] == 0 || fb[k] > 0) ok = 0 }
                else if (code[k] == 0 || fb[k] > 0) ok = 0
            }
            if (err > 0) d = d sprintf("%d calls on the error path in all; ", err)
            if (err > 0 && kind != "error") ok = 0
            if (reasons != "") d = d "fallbacks:" reasons
            printf "%s|%s\n", ok ? "ok" : "bad", d
        }' "$1"
}

selected() { # word list -> is $1 in list (or list empty)
    [[ -z $2 ]] && return 0
    local w
    for w in $2; do [[ $w == "$1" ]] && return 0; done
    return 1
}

results=$work/results-$mpi.tsv
printf 'mpi\tvariant\tnp\trow\tstatus\tseconds\tdetail\n' >"$results"
declare -A vpass=() vruns=() rpass=() rruns=()
total=0
passed=0
failures=()
t_start=$(date +%s)
for v in "${VARIANTS[@]}"; do
    IFS='|' read -r name source args kind colls np_all np_few flags <<<"$v"
    # First nonblocking calls on fresh communicators: tuna's rows, set up at creation (the
    # drop-in's MPI_Comm_dup and MPI_Init); with TUNA_SETUP_AT_CREATION=0 in the environment,
    # set up in the operation (MPICH) or the library's call inside tuna's request (Open MPI)
    # (docs/nonblocking.md, "Set-up at creation").
    if [[ $kind == nbfirst ]]; then
        kind=tuna
        [[ $mpi != mpich && ${TUNA_SETUP_AT_CREATION:-1} == 0 ]] && kind=proxy
    fi
    selected "$name" "$only_tests" || continue
    if [[ $flags == *mpich* && $mpi != mpich ]]; then
        echo "== $name: MPICH only, not run"
        printf '%s\t%s\t-\t-\tSKIP\t0\tMPICH only\n' "$mpi" "$name" >>"$results"
        continue
    fi
    short=0
    [[ $flags == *short* ]] && short=1
    xflags=""
    [[ $flags == *nbr* ]] && xflags=-DTEST_NEIGHB_COLL=1
    build_test "$source" "$short" "$xflags"
    if [[ -z $bin ]]; then
        echo "== $name: does not build with $mpi ($work/logs/build_${source##*/}*.log): not run"
        printf '%s\t%s\t-\t-\tNOBUILD\t0\t%s\n' "$mpi" "$name" \
            "$(grep -m1 -o 'undefined reference to `[^'\'']*'\''\|error: .*' \
                "$work/logs/build_${source##*/}"*.log | head -1)" >>"$results"
        continue
    fi
    pre=$preload
    [[ $flags == *setup* ]] && pre=$work/bin/setup_shim.so:$preload
    var_env=()
    [[ $flags == *argcheck* ]] && var_env=(TUNA_ARGCHECK=collective)
    all_rows=""
    for r in "${ROWS[@]}"; do all_rows+="${r%%|*} "; done
    few_rows=$FEW_ROWS
    if [[ $flags == *nbr* ]]; then
        all_rows=""
        for r in "${NBR_ROWS[@]}"; do all_rows+="${r%%|*} "; done
        few_rows="nbr:auto nbr:vendor"
    fi
    # -n: every row at those P
    [[ -n $np_override ]] && np_all=$np_override np_few=""
    echo "== $name ($kind: $colls; every row at P = ${np_all:--}, the few rows at P = ${np_few:--})"
    for np in $np_all $np_few; do
        rowlist=$all_rows
        selected "$np" "$np_all" && [[ -n $np_all ]] || rowlist=$few_rows
        line=""
        for row in $rowlist; do
            selected "$row" "$only_rows" || continue
            a2av=$(row_field "$row" 2) a2a=$(row_field "$row" 3) extra=$(row_field "$row" 4)
            tag="${name}_p${np}_${row//[:=\/]/_}"
            log=$work/logs/$tag.log
            stats=$work/logs/$tag.tsv
            rm -f "$stats"
            if [[ $row == nbr:* ]]; then
                env_run=(LD_PRELOAD="$pre" TUNA_NEIGHBOR_ALLTOALLV="$a2av" TUNA_STATS="$stats")
            else
                env_run=(LD_PRELOAD="$pre" TUNA_ALLTOALLV="$a2av" TUNA_ALLTOALL="$a2a" TUNA_STATS="$stats")
            fi
            [[ -n $extra ]] && env_run+=("$extra")
            env_run+=("${var_env[@]}")
            t0=$(date +%s.%N)
            # shellcheck disable=SC2086
            (cd "$work" && env "${mpienv[@]}" "${env_run[@]}" timeout -k 10 "$tmo" \
                "${launch[@]}" -n "$np" "$bin" $args) >"$log" 2>&1
            rc=$?
            secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
            status=PASS
            detail=""
            if ((rc == 124 || rc == 137)); then
                status=TIMEOUT
                detail="no exit within ${tmo} s"
            elif ((rc != 0)); then
                status=FAIL
                detail="exit $rc: $(grep -v '^\s*$' "$log" | tail -1 | cut -c1-200)"
            elif ! grep -q 'No Errors' "$log"; then
                status=FAIL
                detail="no 'No Errors': $(grep -v '^\s*$' "$log" | tail -1 | cut -c1-200)"
            elif [[ ! -s $stats ]]; then
                status=FAIL
                detail="no statistics file"
            else
                res=$(check_stats "$stats" "$kind" "${row#nbr:}" "$colls")
                detail=${res#*|}
                [[ ${res%%|*} == ok ]] || status=BYPASS
            fi
            printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$mpi" "$name" "$np" "$row" "$status" "$secs" "$detail" >>"$results"
            total=$((total + 1))
            vruns[$name]=$((${vruns[$name]:-0} + 1))
            rruns[$row]=$((${rruns[$row]:-0} + 1))
            if [[ $status == PASS ]]; then
                passed=$((passed + 1))
                vpass[$name]=$((${vpass[$name]:-0} + 1))
                rpass[$row]=$((${rpass[$row]:-0} + 1))
                rm -f "$log" "$stats"
                line+="."
            else
                failures+=("$name P=$np $row: $status ($detail) log: $log")
                line+="${status:0:1}"
            fi
        done
        echo "   P=$np $line"
    done
done
t_end=$(date +%s)

echo
echo "== summary ($mpi, $((t_end - t_start)) s): $passed of $total runs passed"
printf '%-24s %s\n' "variant" "passed/runs"
for v in "${VARIANTS[@]}"; do
    name=${v%%|*}
    [[ -n ${vruns[$name]:-} ]] && printf '%-24s %d/%d\n' "$name" "${vpass[$name]:-0}" "${vruns[$name]}"
done
grep -P '\t(NOBUILD|SKIP)\t' "$results" | cut -f2,5,7 | sed 's/^/not run: /'
printf '%-28s %s\n' "row" "passed/runs"
for r in "${ROWS[@]}" "${NBR_ROWS[@]}"; do
    row=${r%%|*}
    [[ -n ${rruns[$row]:-} ]] && printf '%-28s %d/%d\n' "$row" "${rpass[$row]:-0}" "${rruns[$row]}"
done
if ((${#failures[@]})); then
    echo "failures (T = timeout, F = failed, B = passed but tuna did not handle the calls):"
    printf '  %s\n' "${failures[@]}"
fi
echo "results: $results"
((passed == total))
