# Writes the file INPUT as a C++ raw string literal to OUTPUT (cmake -P).
file(READ ${INPUT} content)
file(WRITE ${OUTPUT} "R\"MODELC_EMBED(${content})MODELC_EMBED\"\n")
