"""Imported first in the server's multiprocessing fork server (``set_forkserver_preload``): the fork server
ends with the server that started it (also after ``kill -9``) and holds none of its standard streams.

The encoder workers it forks do the same in their initializer (``net.server``), with :data:`PID` as the
parent they expect (a worker that starts after the fork server has died ends at once); the resource tracker
then sees its pipe close and ends by itself.
"""

import os

from blokus.ai import processes

PID = os.getpid()  # the fork server's: its children inherit this module, imported
processes.die_with_parent()
