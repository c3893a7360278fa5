"""Command modules; each registers its commands on ``grit_scan.cli.app``."""
