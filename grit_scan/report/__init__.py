"""Report: findings -> text, JSON and SARIF, and the two exit policies (§13)."""

from .policy import ExitPolicy
from .report import Report

__all__ = ["ExitPolicy", "Report"]
