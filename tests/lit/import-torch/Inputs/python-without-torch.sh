#!/bin/sh
# A Python without torch: no site-packages (-S), nothing from the
# environment (-E).
exec /usr/bin/python3 -S -E "$@"
