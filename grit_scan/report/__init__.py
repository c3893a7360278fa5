"""Report: findings -> text, JSON and SARIF, and the two exit policies (§13)."""
