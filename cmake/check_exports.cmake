# ctest exported_symbols: libtuna.so exports exactly the functions include/tuna.h declares
# (the library is built with hidden visibility; tuna.h's pragma exports its declarations).
#   cmake -DNM=nm -DLIB=libtuna.so -DHEADER=include/tuna.h -P cmake/check_exports.cmake
execute_process(COMMAND ${NM} -D --defined-only ${LIB} OUTPUT_VARIABLE syms
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${NM} -D ${LIB} failed (${rc})")
endif()
string(REGEX MATCHALL "[ \t][TDBRW] tuna_[A-Za-z0-9_]+" exported "${syms}")
list(TRANSFORM exported REPLACE "^[ \t][TDBRW] " "")
list(REMOVE_DUPLICATES exported)
file(READ ${HEADER} header)
string(REGEX MATCHALL "tuna_[A-Za-z0-9_]+[ \t]*\\(" declared "${header}")
list(TRANSFORM declared REPLACE "[ \t]*\\($" "")
list(REMOVE_DUPLICATES declared)
set(extra ${exported})
list(REMOVE_ITEM extra ${declared})
set(missing ${declared})
list(REMOVE_ITEM missing ${exported})
list(LENGTH exported n)
if(extra OR missing)
  message(FATAL_ERROR "exported but not in tuna.h: ${extra}\nin tuna.h but not exported: ${missing}")
endif()
message(STATUS "${n} exported tuna_* symbols, all declared in tuna.h and all present")
