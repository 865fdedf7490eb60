"""`python -m memtwin`: the same as the `memtwin` command."""

from memtwin.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
