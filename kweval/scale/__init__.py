"""Scale-out: forked worker processes, groups of movie files, dask.distributed."""
