#!/bin/bash
# The redesign identity check (issue 21; docs/results/identity.md "The redesign (issue
# 21)"): each merge's parent and the merge itself, built and run the same way.
#   pair 1: 52fd92c (98e844b^1) -> 98e844b  "Merge branch 'registry'"
#   pair 2: 5346ce9 (21245f0^1) -> 21245f0  "Merge branch 'pyside'"
# (not across f2217e5, which changed the metadata words on purpose). SimGrid: Debian's 3.32.
# Run from a checkout of this repository; results go to sim/results/redesign/ as
# {registry,pyside}-{before,after}-PLATFORM-WHAT.jsonl (the runs were made into /tmp under
# the commit names and copied; this script names them directly).
set -e
PY=/work/main/.venv/bin/python
OUT=$PWD/sim/results/redesign
A2AV=vendor,spreadout,scattered,linear,pairwise,xor,multipair,multipair-waitany,bruck,padded-bruck,twophase-bruck,tuna,coalesced,staggered,auto
for s in 52fd92c 98e844b 5346ce9 21245f0; do
  wt=/work/wt-ident-$s
  git worktree add --detach $wt $s
  (cd $wt &&
   cmake -S . -B build/smpi -DCMAKE_TOOLCHAIN_FILE=cmake/smpi.cmake -DCMAKE_BUILD_TYPE=RelWithDebInfo \
         -DPython3_EXECUTABLE=$PY && nice -n 19 cmake --build build/smpi -j1 --target tuna-bench &&
   cmake -S . -B build/dev -DPython3_EXECUTABLE=$PY && nice -n 19 cmake --build build/dev -j1 --target tuna-model &&
   cmake -S . -B build/dev-mpich -DMPI_C_COMPILER=/usr/bin/mpicc.mpich \
         -DMPIEXEC_EXECUTABLE=/usr/bin/mpiexec.mpich -DPython3_EXECUTABLE=$PY &&
   nice -n 19 cmake --build build/dev-mpich -j1 --target tuna-model)
done

# 1. tuna-model (Open MPI and MPICH builds: the vendor guess differs), built-in profile and
#    the fugaku/polaris profiles (profile-*.json, from the pair's "before" commit:
#    tuna tune profile --platform P --selector mpich --agreement-procs ''), compared with cmp.
python3 $OUT/model_grid.py > /tmp/model_grid.txt
for s in 52fd92c 98e844b 5346ce9 21245f0; do
  for b in dev:openmpi dev-mpich:mpich; do
    m=/work/wt-ident-$s/build/${b%%:*}/tools/tuna-model; d=/tmp/model/${b##*:}; mkdir -p $d
    env -u TUNA_PROFILE nice -n 19 $m < /tmp/model_grid.txt > $d/$s-builtin.txt
    for p in fugaku polaris; do
      TUNA_PROFILE=$OUT/profile-$p.json nice -n 19 $m < /tmp/model_grid.txt > $d/$s-$p.txt
    done
  done
done
for d in openmpi mpich; do for p in builtin fugaku polaris; do
  cmp /tmp/model/$d/52fd92c-$p.txt /tmp/model/$d/98e844b-$p.txt
  cmp /tmp/model/$d/5346ce9-$p.txt /tmp/model/$d/21245f0-$p.txt
done; done
(cd /tmp/model && sha256sum */*.txt) > $OUT/model-sha256.txt

# 2. SMPI, P = 64 (2 nodes x 32), eager model, surf/precision 1e-9, logarithmic library
#    collectives (tuna sim run's defaults), one timed call per configuration, no SMPI
#    MPI_Alltoallv beside each (--no-vendor; tuna's `vendor` row is in the list).
#    multipair-testany is left out (minutes of simulator time per exchange, docs/simulation.md;
#    a 16 B uniform run of it timed out at 1800 s for all four builds on the loaded machine):
#    tuna-model's grid covers its row.
name() { case $1 in 52fd92c) echo registry-before;; 98e844b) echo registry-after;;
                   5346ce9) echo pyside-before;; 21245f0) echo pyside-after;; esac; }
for s in 52fd92c 98e844b 5346ce9 21245f0; do
  n=$(name $s); wt=/work/wt-ident-$s; sim="env PYTHONPATH=$wt/python nice -n 19 $PY -m tuna_tools sim run"
  for plat in fugaku polaris; do
    $sim --platform $plat --procs 64 --rpn 32 -a $A2AV -s 16,1K,16K -d uniform -d powerlaw \
      --no-vendor --bench $wt/build/smpi/tools/tuna-bench -o $OUT/$n-$plat-alltoallv.jsonl
    # parameter variants of the rows that take parameters
    $sim --platform $plat --procs 64 --rpn 32 \
      -a scattered,multipair,multipair-waitany,padded-bruck,tuna,coalesced,staggered \
      --param radix=2,4,8 --param block=1,4 --param stride=2,16 --param datatype=0,1 \
      -s 16,1K,16K -d uniform -d powerlaw --no-vendor \
      --bench $wt/build/smpi/tools/tuna-bench -o $OUT/$n-$plat-params.jsonl
    for coll in allgather allreduce; do
      $sim --platform $plat --procs 64 --rpn 32 --collective $coll -a all --param k=2,4,8,32,P \
        -s 16,1K,16K --no-vendor --bench $wt/build/smpi/tools/tuna-bench -o $OUT/$n-$plat-$coll.jsonl
    done
  done
done

# 3. Compare (exit status 1 if any configuration differs).
for pair in registry pyside; do
  for f in {fugaku,polaris}-{alltoallv,params,allgather,allreduce}; do
    python3 sim/redesign_identity.py $OUT/$pair-before-$f.jsonl $OUT/$pair-after-$f.jsonl
  done
done
