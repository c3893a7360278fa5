"""`python -m grit_scan` runs the `grit` command line."""

from grit_scan.cli import run

if __name__ == "__main__":
    run()
