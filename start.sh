#!/bin/sh
# Contest entry point: start.sh -h HOST -p PORT -r RESERVATION (any order, long forms too).
# Passes every argument unchanged to `blokus bot`.
DIR=$(cd "$(dirname "$0")" && pwd) || exit 1
chmod +x "$DIR/start.sh" 2>/dev/null
if [ -x "$DIR/.venv/bin/blokus" ]; then
    exec "$DIR/.venv/bin/blokus" bot "$@"
elif [ -x "$DIR/.venv/bin/python" ]; then
    PYTHONPATH="$DIR${PYTHONPATH:+:$PYTHONPATH}" exec "$DIR/.venv/bin/python" -m blokus bot "$@"
elif command -v blokus >/dev/null 2>&1; then
    exec blokus bot "$@"
else
    PYTHONPATH="$DIR${PYTHONPATH:+:$PYTHONPATH}" exec python3 -m blokus bot "$@"
fi
