# ctest nccl_dropin_stats: the statistics file the drop-in's "tuna" runs wrote at exit
# (TUNA_NCCL_STATS, src/nccl/dropin.c): its header, and per collective the row the
# environment named on the tuna path, and ncclAvg handed on to NCCL as a fallback.
#   cmake -DFILE=nccl_dropin_stats.tsv -P tests/check_nccl_stats.cmake
file(READ ${FILE} text)
foreach(want
    "\npid\tcomm\trank\tsize\tcollective\tpath\talgorithm\tcalls\tbytes_sent\tbytes_received\tseconds\n"
    "\tallgather\ttuna\tkring:k=3\t10\t"
    "\tallreduce\ttuna\trecmul:k=3\t20\t"
    "\talltoall\ttuna\ttuna:radix=2\t5\t"
    "\tallreduce\tfallback\ttuna_nccl_allreduce: op 4 is not supported[^\t]*\t1\t")
  if(NOT text MATCHES "${want}")
    message(FATAL_ERROR "${FILE}: no line matching '${want}':\n${text}")
  endif()
endforeach()
message(STATUS "${FILE}: the header and the rows expected")
