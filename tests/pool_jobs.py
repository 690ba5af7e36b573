"""Jobs for the process-pool tests (tests/test_parallel.py), in a module of their own that imports nothing: a pool
worker imports the module of each function it is sent, and the test module imports torch and pandas (seconds of
CPU in every worker, for a job that squares a number)."""


def square(x: int) -> int:
    """``x * x``; ValueError for 3 (the failing job)."""
    if x == 3:
        raise ValueError("job 3 fails")
    return x * x
