#!/bin/sh
# Entry point of a checkout: start.sh -h HOST -p PORT -r RESERVATION (any order, long forms too).
# Passes every argument unchanged to `blokus bot`: with the project's virtual environment, an installed
# `blokus`, or python3 with the dependencies installed. The contest upload is made by `blokus bundle FILE.zip`
# (its own start.sh, with the dependencies and the compiled AI inside; nothing is installed at start).
DIR=$(cd "$(dirname "$0")" && pwd) || exit 1
if [ -x "$DIR/.venv/bin/python" ]; then
    PYTHONPATH="$DIR${PYTHONPATH:+:$PYTHONPATH}" exec "$DIR/.venv/bin/python" -m blokus bot "$@"
elif command -v blokus >/dev/null 2>&1; then
    exec blokus bot "$@"
fi
PYTHONPATH="$DIR${PYTHONPATH:+:$PYTHONPATH}" exec python3 -m blokus bot "$@"
