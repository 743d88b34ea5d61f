"""memoryd: a local memory daemon for coding agents."""

import os

# numpy's OpenBLAS starts a spinning thread per core for each matrix-vector product: on two cores
# beside the embedding engine's threads and the request threads, one recall's product over 20,000
# vectors took 17-30 ms instead of 2-8 on one thread (issue 42). Set before anything imports numpy.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def __getattr__(name: str) -> str:
    """`memoryd.__version__`, worked out on first use (memoryd/version.py): the hook that runs on every prompt
    never pays for package metadata or git."""
    if name == "__version__":
        from memoryd.version import version

        return version()
    raise AttributeError(f"module 'memoryd' has no attribute {name!r}")
