"""memoryd: a local memory daemon for coding agents."""

import os

# numpy's OpenBLAS starts a spinning thread per core for each matrix-vector product: on two cores
# beside the embedding engine's threads and the request threads, one recall's product over 20,000
# vectors took 17-30 ms instead of 2-8 on one thread (issue 42). Set before anything imports numpy.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

__version__ = "0.1.0"
