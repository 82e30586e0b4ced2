"""``python -m parvis.dask``: the ``parvis-dask`` command (see parvis.dask._cli)."""

from ._cli import entry_point

if __name__ == "__main__":
    entry_point()
