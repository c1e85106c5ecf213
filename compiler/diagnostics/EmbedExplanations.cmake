# Writes OUTPUT: one `{"<Code>", R"...(<markdown>)..."},` initializer per
# docs/diagnostics/<Code>.md in DOCS_DIR, so the explanations ship inside the
# library and `modelc explain` needs no docs folder at run time.
# Usage: cmake -DDOCS_DIR=<dir> -DOUTPUT=<file> -P EmbedExplanations.cmake
file(GLOB docs ${DOCS_DIR}/*.md)
list(SORT docs)
set(delimiter "mdlexplain")
set(content "// Generated from docs/diagnostics/*.md by EmbedExplanations.cmake. Do not edit.\n")
foreach(doc ${docs})
  get_filename_component(code ${doc} NAME_WE)
  if(NOT code MATCHES "^[EW][0-9][0-9][0-9][0-9]$")
    continue()
  endif()
  file(READ ${doc} text)
  string(FIND "${text}" ")${delimiter}\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "${doc} contains the raw-string delimiter )${delimiter}\"")
  endif()
  string(APPEND content "{\"${code}\", R\"${delimiter}(${text})${delimiter}\"},\n")
endforeach()
# Rewrite only on change, so editing nothing rebuilds nothing.
if(EXISTS ${OUTPUT})
  file(READ ${OUTPUT} old)
  if(old STREQUAL content)
    return()
  endif()
endif()
file(WRITE ${OUTPUT} "${content}")
