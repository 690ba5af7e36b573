"""Layer 6, section 03: per-model evaluation (prompt -> systems -> cached answers -> parse -> scores)."""
