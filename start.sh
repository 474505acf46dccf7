#!/bin/sh
# Contest entry point: start.sh -h HOST -p PORT -r RESERVATION (any order, long forms too).
# Passes every argument unchanged to `blokus bot`.
# Uses the project's virtual environment or an installed `blokus` if there is one; otherwise
# python3 with the dependencies from wheels/ (if bundled there) installed once into .deps/.
DIR=$(cd "$(dirname "$0")" && pwd) || exit 1
chmod +x "$DIR/start.sh" 2>/dev/null
if [ -x "$DIR/.venv/bin/blokus" ]; then
    exec "$DIR/.venv/bin/blokus" bot "$@"
elif [ -x "$DIR/.venv/bin/python" ]; then
    PYTHONPATH="$DIR${PYTHONPATH:+:$PYTHONPATH}" exec "$DIR/.venv/bin/python" -m blokus bot "$@"
elif command -v blokus >/dev/null 2>&1; then
    exec blokus bot "$@"
fi
DEPS="$DIR/.deps"
if [ -d "$DIR/wheels" ] && [ ! -d "$DEPS" ]; then
    python3 -m pip install --quiet --no-index --find-links "$DIR/wheels" --target "$DEPS" "$DIR"/wheels/*.whl \
        >&2 || { echo "start.sh: cannot install the bundled wheels" >&2; rm -rf "$DEPS"; exit 1; }
fi
PYTHONPATH="$DIR:$DEPS${PYTHONPATH:+:$PYTHONPATH}" exec python3 -m blokus bot "$@"
